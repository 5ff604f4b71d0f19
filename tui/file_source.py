"""The project's file list for ``@`` completion and the picker, and matching over it.

The list comes from the memory system's index when it offers one, else from
``git ls-files`` (tracked plus untracked-not-ignored), else a directory walk.
Matching uses ``core.memory.fuzzy`` when present, else a small subsequence scorer.
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from tui.app import AssistantApp

log = logging.getLogger(__name__)

_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv"}
MAX_WALK = 200_000


def list_project_files(root: Path, memory_system: object = None) -> list[str]:
    """Relative paths of the project's files (blocking; run it in a thread)."""
    for name in ("list_files", "get_file_paths", "all_paths"):
        getter = getattr(memory_system, name, None)
        if callable(getter):
            try:
                return [str(Path(p).relative_to(root)) if Path(p).is_absolute() else str(p) for p in getter()]
            except Exception:  # fall back to git or a walk
                log.exception("memory system file list failed")
    try:
        done = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=root, capture_output=True, timeout=20, check=True,
        )
        return sorted({p for p in done.stdout.decode("utf-8", "replace").split("\0") if p})
    except (OSError, subprocess.SubprocessError):
        pass
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
        rel = Path(dirpath).relative_to(root)
        found.extend(str(rel / name) if str(rel) != "." else name for name in filenames)
        if len(found) > MAX_WALK:
            break
    return sorted(found)


def subsequence_match(query: str, path: str) -> tuple[float, list[int]] | None:
    """Score a path for a query (higher is better) and the matched indices; None when it does not match."""
    if not query:
        return 0.0, []
    lower = path.lower()
    name_start = lower.rfind("/") + 1
    positions: list[int] = []
    start = 0
    for char in query.lower():
        index = lower.find(char, start)
        if index == -1:
            return None
        positions.append(index)
        start = index + 1
    score = 0.0
    for previous, index in zip([-2] + positions, positions):
        score += 1.0
        if index == previous + 1:
            score += 2.0
        if index >= name_start:
            score += 1.5
        if index == 0 or lower[index - 1] in "/_-. ":
            score += 1.5
    return score - len(path) * 0.01, positions


def rank(query: str, paths: Sequence[str], limit: int) -> list[tuple[str, list[int]]]:
    """Best ``limit`` matches of ``query`` over ``paths``, best first."""
    try:
        from core.memory import fuzzy  # type: ignore[attr-defined]

        ranker = getattr(fuzzy, "top_matches", None)
    except ImportError:
        ranker = None
    if ranker is not None:
        try:
            return [(str(path), list(positions)) for path, positions in _adapt(ranker(query, paths, limit))]
        except Exception:  # fall back to the simple scorer
            log.exception("fuzzy matcher failed")
    scored: list[tuple[float, str, list[int]]] = []
    for path in paths:
        found = subsequence_match(query, path)
        if found is not None:
            scored.append((found[0], path, found[1]))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(path, positions) for _, path, positions in scored[:limit]]


def _adapt(results: object) -> list[tuple[str, list[int]]]:
    adapted = []
    for item in results:  # type: ignore[attr-defined]
        path = getattr(item, "path", None) or item[0]
        positions = getattr(item, "positions", None) or (item[-1] if isinstance(item, tuple) else [])
        adapted.append((path, positions))
    return adapted


def match_files(app: "AssistantApp", query: str, limit: int) -> list[tuple[str, list[int]]]:
    """Matches for ``@`` completion from the app's loaded file list (empty while it loads)."""
    return rank(query, app.project_files, limit)
