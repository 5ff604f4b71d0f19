"""The paths a file-finding command printed: each output line looked up once, inside the project only."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from core.tools.paths_guard import is_inside

MAX_CHECKED_LINES = 10_000
_LINE = re.compile(r"[^\n\0]+")


@dataclass(frozen=True)
class FoundPaths:
    """The paths found in a command's output, and how much of the output was not checked."""

    paths: list[str]
    unchecked_lines: int = 0
    """Lines after the first ``MAX_CHECKED_LINES`` distinct ones, never looked up."""


def find_paths_in_output(
    output: str, project_root: Path, *, base: Path | None = None, max_checked: int = MAX_CHECKED_LINES
) -> FoundPaths:
    """The existing paths inside the project that a command printed, one per line.

    Each distinct line is looked up once, and at most ``max_checked`` distinct lines
    are (a filesystem call each: endless output such as ``yes`` or ``seq`` must not
    cost one per line); the lines after that are counted, not checked. Blocking:
    call it with ``asyncio.to_thread`` from async code.

    Args:
        output: The command's stdout; lines end in newlines or NULs.
        project_root: Paths resolving outside it are dropped.
        base: What relative lines are relative to (default: the project root).
        max_checked: How many distinct lines to look up at most.
    """
    root = project_root.resolve()
    start = base or root
    checked: set[str] = set()
    found: dict[str, None] = {}
    lines = _LINE.finditer(output)
    for match in lines:
        text = match.group().strip()
        if not text or text.startswith("~") or text in checked:
            continue
        if len(checked) >= max_checked:
            rest = sum(1 for m in lines if (t := m.group().strip()) and t not in checked and not t.startswith("~"))
            return FoundPaths(list(found), rest + 1)
        checked.add(text)
        candidate = Path(text) if os.path.isabs(text) else start / text
        try:
            resolved = candidate.resolve(strict=True)
        except (OSError, RuntimeError, ValueError):
            continue
        if resolved == root or not is_inside(resolved, root) or ".git" in resolved.relative_to(root).parts:
            continue
        found[str(resolved)] = None
    return FoundPaths(list(found))


def parse_file_paths_from_output(output: str, project_root: Path, *, base: Path | None = None) -> list[str]:
    """The existing paths inside the project that a command printed, one per line.

    Relative lines are taken from ``base`` (default: the project root). Each path is resolved
    (symbolic links followed); paths that do not exist, resolve outside the
    root or lie in git's own ``.git`` directory are dropped, duplicates removed,
    order kept. Only the first ``MAX_CHECKED_LINES`` distinct lines are looked up
    (see :func:`find_paths_in_output`, which also says how many were not).

    Returns:
        Absolute resolved paths as strings.
    """
    return find_paths_in_output(output, project_root, base=base).paths
