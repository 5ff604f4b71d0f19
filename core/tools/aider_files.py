"""Aider's files: containment in the project, snapshots before a run, and the diff and notes of what changed."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Mapping

from core.tools.paths_guard import PathRefused, relative_display, resolve_in_root

MAX_DIFF_IN_CONTENT = 20_000
"""Diff characters put in a result's content (the full diff stays in metadata)."""


class AiderError(Exception):
    """A request aider cannot run; the message says what to fix."""


def resolve_in_project(path: str | os.PathLike[str], project_root: Path) -> Path:
    """The resolved absolute path of an existing regular file inside the project.

    Raises:
        AiderError: the path is outside the project, missing or not a regular file.
    """
    try:
        resolved = resolve_in_root(os.fspath(path), project_root)
    except PathRefused as exc:
        raise AiderError(exc.reason) from None
    if not resolved.exists():
        raise AiderError(f"{path} does not exist in the project")
    if not resolved.is_file():
        raise AiderError(f"{path} is not a regular file")
    return resolved


def read_snapshot(path: Path) -> str | None:
    """The file's text (None when it does not exist)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None


def unified_diff(before: str | None, after: str | None, rel: str) -> str:
    """A git-style unified diff of one file ('' when unchanged)."""
    if before == after:
        return ""
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    for lines in (old, new):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n\\ No newline at end of file\n"
    fromfile = f"a/{rel}" if before is not None else "/dev/null"
    tofile = f"b/{rel}" if after is not None else "/dev/null"
    return "".join(difflib.unified_diff(old, new, fromfile, tofile))


def diff_snapshots(before: Mapping[Path, str | None], project_root: Path) -> tuple[list[str], str]:
    """Files (project-relative) whose content changed since ``before``, and their combined diff."""
    edited: list[str] = []
    diffs: list[str] = []
    for path in sorted(before):
        rel = relative_display(path, project_root)
        diff = unified_diff(before[path], read_snapshot(path), rel)
        if diff:
            edited.append(rel)
            diffs.append(diff)
    return edited, "".join(diffs)


def summarise(edited: list[str], diff: str, how: str) -> str:
    """What a run edited, with the diff (cut at :data:`MAX_DIFF_IN_CONTENT` characters)."""
    shown = diff if len(diff) <= MAX_DIFF_IN_CONTENT else diff[:MAX_DIFF_IN_CONTENT] + "\n... (diff truncated)\n"
    return f"{how} edited {len(edited)} file(s): {', '.join(edited)}\n\n```diff\n{shown}```"


def refusals_note(refused: Mapping[str, str]) -> str:
    """What aider was not allowed to write, one line per file ('' when nothing was refused)."""
    if not refused:
        return ""
    lines = "\n".join(f"  {path}: {reason}" for path, reason in refused.items())
    return f"\n\naider was not allowed to write (its edits to these were dropped):\n{lines}"


def read_refusals(path: Path) -> dict[str, str]:
    """The refusals an interactive session recorded (:data:`core.tools.aider_child.REFUSALS_FILE`), by path."""
    refused: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return refused
    for line in lines:
        try:
            entry = json.loads(line)
            refused.setdefault(str(entry["path"]), str(entry["reason"]))
        except (ValueError, KeyError, TypeError):
            continue
    return refused
