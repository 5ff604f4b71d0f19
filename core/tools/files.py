"""The ``readFile`` tool: read a text file inside the project, with guards.

Paths must resolve inside the project root (:mod:`core.tools.paths_guard`).
Which files may be read is the project's one file policy
(:class:`core.memory.policy.FilePolicy`): secrets and git's own data never, files
ignored by git only when the user put them into the context, binary files never,
and files above the policy's size limit only by line range.

What one read returns has one limit, :data:`MAX_READ_CHARS` characters (the
``max_tool_result_chars`` setting in the app), counted on the numbered text the
model receives; a read that reaches it ends on a whole line with the line to
continue from (``start_line=N``), so the tool loop's general cap never cuts it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterable, Mapping

from core.memory.policy import MAX_FILE_BYTES, FilePolicy, is_git_ignored
from core.text import human_size
from core.tools.paths_guard import PathRefused, relative_display, resolve_in_root
from core.secrets import is_secret_path
from core.types import TaskResult, error_result, ok_result

__all__ = ["MAX_READ_BYTES", "MAX_READ_CHARS", "READ_FILE_SPEC", "is_git_ignored", "is_secret_path", "numbered_line", "read_file_tool"]

log = logging.getLogger(__name__)

MAX_READ_BYTES = MAX_FILE_BYTES
"""Biggest file read whole (the policy's limit); bigger ones only by line range."""

MAX_READ_CHARS = 100_000
"""Most characters one read returns unless the caller says otherwise (the hint included)."""

_HINT_ROOM = 120
"""Characters kept free for the continuation hint."""

READ_FILE_SPEC: dict[str, Any] = {
    "name": "readFile",
    "description": (
        "Read a text file inside the project, with line numbers. Give a line range (start_line, end_line, "
        f"1-based, inclusive) to read part of a file; files over {human_size(MAX_READ_BYTES)} must be read by range. "
        ".env files, private keys and files ignored by git are refused unless the user added them to the context."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path relative to the project root (or absolute inside it)."},
            "start_line": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
            "end_line": {"type": "integer", "minimum": 1, "description": "Last line to read (inclusive)."},
        },
        "required": ["path"],
    },
}


def _line_number(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}.")
    return value


def _is_explicit(raw_abs: Path, resolved: Path, explicit_files: Iterable[str]) -> bool:
    for item in explicit_files:
        candidate = Path(item)
        if candidate == raw_abs or candidate == resolved:
            return True
        try:
            if candidate.resolve() == resolved:
                return True
        except OSError:
            continue
    return False


def numbered_line(number: int, line: str) -> str:
    """One line as ``readFile`` shows it: its number, six wide, a tab, the text without its line ending."""
    return f"{number:6}\t{line.rstrip(chr(13) + chr(10))}"


def _numbered(lines: Iterable[tuple[int, bytes]], limit: int) -> tuple[str, int, int, str]:
    """Render (number, raw line) pairs within ``limit`` characters: text, first, last, and how it was cut.

    The last is ``""`` (not cut), ``"lines"`` (ends on a whole line) or ``"line"`` (a first
    line longer than the limit, shown up to it; the read continues after it).
    """
    out: list[str] = []
    size = 0
    first = last = 0
    budget = max(limit - _HINT_ROOM, 1)
    for number, raw in lines:
        line = numbered_line(number, raw.decode("utf-8", "replace"))
        if size + len(line) + bool(out) > budget:
            if not out:
                return line[:budget], number, number, "line"
            return "\n".join(out), first, last, "lines"
        out.append(line)
        size += len(line) + 1
        first, last = first or number, number
    return "\n".join(out), first, last, ""


def _lines_in_range(path: Path, start: int, end: int | None) -> Iterable[tuple[int, bytes]]:
    """Numbered raw lines from ``start`` to ``end``; memory stays bounded even for huge lines."""
    with path.open("rb") as handle:
        number = 0
        while raw := handle.readline(MAX_READ_BYTES + 1):
            number += 1
            if len(raw) > MAX_READ_BYTES and not raw.endswith(b"\n"):
                while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
            if end is not None and number > end:
                return
            if number >= start:
                yield number, raw


def read_file_tool(
    params: Mapping[str, Any],
    *,
    project_root: Path,
    explicit_files: Iterable[str] = frozenset(),
    policy: FilePolicy | None = None,
    max_chars: int = MAX_READ_CHARS,
) -> TaskResult:
    """Executor of ``readFile``.

    Args:
        params: ``path`` (required), ``start_line`` and ``end_line`` (optional, 1-based, inclusive).
        project_root: The project directory; nothing outside it is read.
        explicit_files: Absolute paths the user put into the context; these may be
            read even when git ignores them.
        policy: The project's file policy (the memory system's); a private one when None.
        max_chars: Most characters returned, the continuation hint included.

    Returns:
        Success: the lines, numbered; ``metadata`` has ``path``, ``start_line``,
        ``end_line``, ``truncated`` (then ``continue_line``, the line to read from next)
        and, for whole reads, ``total_lines``.
        Error: a sentence saying why and what to do instead.
    """
    raw = params.get("path")
    if not isinstance(raw, str) or not raw.strip():
        return error_result("The 'path' parameter must be a non-empty string, e.g. src/app.py")
    raw = raw.strip()
    try:
        start = _line_number(params.get("start_line"), "start_line")
        end = _line_number(params.get("end_line"), "end_line")
        if start and end and end < start:
            raise ValueError(f"end_line ({end}) is before start_line ({start}).")
        resolved = resolve_in_root(raw, project_root)
    except (ValueError, PathRefused) as exc:
        return error_result(str(exc), path=raw)
    root = project_root.resolve()
    policy = policy or FilePolicy(root)
    shown = relative_display(resolved, root)
    whole = start is None and end is None
    refusal = policy.check(raw, chosen=_is_explicit(root / raw, resolved, explicit_files), whole=whole)
    if refusal is not None:
        return error_result(refusal.sentence(shown) + _REFUSAL_HINTS.get(refusal.code, ""), path=str(resolved),
                            reason=refusal.code, **({"size": refusal.size} if refusal.size else {}))
    size = resolved.stat().st_size if resolved.exists() else 0
    try:
        text, first, last, cut = _numbered(_lines_in_range(resolved, start or 1, end), max_chars)
    except OSError as exc:
        return error_result(f"{shown} cannot be read: {exc.strerror or exc}.", path=str(resolved))
    meta: dict[str, Any] = dict(path=str(resolved), start_line=first, end_line=last, truncated=bool(cut), size=size)
    if not text:
        where = f"has no line {start}" if start else "is empty"
        return ok_result(f"{shown} {where}.", **meta)
    if whole and not cut:
        meta["total_lines"] = last
    if cut:
        meta["continue_line"] = last + 1
        where = f"line {last} is longer than that" if cut == "line" else f"after line {last}"
        text += f"\n[read cut at {max_chars:,} characters: {where}; continue with start_line={last + 1}]"
    return ok_result(text, **meta)


_REFUSAL_HINTS = {
    "missing": " Use executeFilePathCommand to find files.",
    "directory": " Use executeFilePathCommand (e.g. ls) to list it.",
    "ignored": " It is not read unless the user adds it to the context.",
    "too_large": " Read it in parts with start_line and end_line.",
}
