"""Where things are: the repository, the cache of generated repositories, isolated environments."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
"""The assistant-tui checkout the benchmarks measure."""

CACHE = Path(os.environ.get("ASSISTANT_TUI_BENCH_CACHE", Path(tempfile.gettempdir()) / "assistant-tui-bench"))
"""Generated inputs kept between runs (the 80,000-file git repository takes a while to build)."""

DOCS = REPO / "docs"


def pythonpath() -> str:
    """PYTHONPATH for child processes: the checkout first."""
    existing = os.environ.get("PYTHONPATH", "")
    return str(REPO) + (os.pathsep + existing if existing else "")


def isolated_environment(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The current environment with HOME and the XDG dirs under ``home``, no real keys, a 256-colour terminal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_TUI_", "ANTHROPIC_", "OPENAI_"))}  # keeps BENCH_WHATIF
    # A user's Python writes bytecode at the first start and reads it after; a shell that sets
    # PYTHONDONTWRITEBYTECODE would make every measured start compile each module changed since.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local/state"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        PYTHONPATH=pythonpath(),
        TERM="xterm-256color",
        COLORTERM="truecolor",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    env.update(extra or {})
    return env
