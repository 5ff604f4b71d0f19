"""Shared fixtures: an isolated environment and the loopback fake LLM server."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from tui import runtime

# The frame rate, set the way the console entry point sets it (tui.cli), before Textual
# is imported: the snapshot plugin (which imports Textual) is disabled in pyproject's
# addopts and loaded here, afterwards, so the suite runs at the app's frame rate.
# The collector tweaks are not applied: frozen objects would pile up from test to test.
assert "textual" not in sys.modules, "Textual was imported before tests/conftest.py could set TEXTUAL_FPS"
runtime.set_frame_rate()
pytest_plugins = ["pytest_textual_snapshot"]

from tui import wrap  # noqa: E402 - after the frame rate

wrap.install()  # as tui.cli does: long URLs and paths break after their separators in every app the suite builds

from tests.fake_llm import FakeLLM  # noqa: E402 - after the frame rate

_SCRUBBED = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "ANTHROPIC_AUTH_TOKEN",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """HOME and the XDG dirs in a temporary directory; no real keys or endpoints leak in.

    The log file handler a test set up is closed after it.

    ``Application`` hardens git through ``GIT_CONFIG_*`` in the process environment;
    those variables are put back as they were after each test.
    """
    saved_git = {k: v for k, v in os.environ.items() if k.startswith("GIT_CONFIG_")}
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_STATE_HOME", ".local/state"), ("XDG_DATA_HOME", ".local/share"), ("XDG_CACHE_HOME", ".cache")):
        monkeypatch.setenv(var, str(home / sub))
    for var in _SCRUBBED:
        monkeypatch.delenv(var, raising=False)
    for var in list(os.environ):
        if var.startswith("ASSISTANT_TUI_"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    yield home
    # A test that called setup_logging leaves a root file handler behind: close it, or the
    # next tests' logging keeps writing into this test's directory.
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, logging.FileHandler)]:
        root.removeHandler(handler)
        handler.close()
    for key in [k for k in os.environ if k.startswith("GIT_CONFIG_")]:
        del os.environ[key]
    os.environ.update(saved_git)


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    """A running fake LLM server, with the SDK environment pointed at it."""
    with FakeLLM() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        yield server


def marked_settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The values of the test's ``@pytest.mark.settings(...)``: settings are read-only after start
    (issue 24), so a test that needs other limits has its engine or handler built with them."""
    marker = request.node.get_closest_marker("settings")
    return dict(marker.kwargs) if marker else {}
