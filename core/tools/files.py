"""The ``readFile`` tool: read a text file inside the project, with guards.

Paths must resolve inside the project root (:mod:`core.tools.paths_guard`).
Secret files (``.env*``, private keys, see :func:`is_secret_path`), git's own
data and files ignored by git are refused unless the user explicitly put the file
into the context. Files above :data:`MAX_READ_BYTES` can be read by line range;
binary files are refused.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterable, Mapping

from pathspec import GitIgnoreSpec

from core.gitutil import GitRefused, run_git

from core.tools.paths_guard import PathRefused, relative_display, resolve_in_root
from core.tools.secrets import contains_private_key, is_secret_path, looks_like_private_key, scrubbed_env
from core.types import TaskResult, error_result, ok_result

__all__ = ["MAX_READ_BYTES", "READ_FILE_SPEC", "is_git_ignored", "is_secret_path", "read_file_tool"]

log = logging.getLogger(__name__)

MAX_READ_BYTES = 256 * 1024
_SNIFF_BYTES = 8192
_GIT_TIMEOUT = 10.0

READ_FILE_SPEC: dict[str, Any] = {
    "name": "readFile",
    "description": (
        "Read a text file inside the project, with line numbers. Give a line range (start_line, end_line, "
        f"1-based, inclusive) to read part of a file; files over {MAX_READ_BYTES // 1024} KB must be read by range. "
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


def _ignored_by_gitignore_files(path: Path, root: Path) -> bool:
    """Outside a git repository: match ``path`` against the .gitignore files above it."""
    parts = path.relative_to(root).parts
    for depth in range(len(parts)):
        gitignore = root.joinpath(*parts[:depth], ".gitignore")
        if not gitignore.is_file():
            continue
        try:
            spec = GitIgnoreSpec.from_lines(gitignore.read_text(encoding="utf-8", errors="replace").splitlines())
        except (OSError, ValueError):
            continue
        below = parts[depth:]
        for k in range(1, len(below) + 1):
            if spec.match_file("/".join(below[:k]) + ("/" if k < len(below) else "")):
                return True
    return False


def is_git_ignored(path: Path, project_root: Path) -> bool:
    """True when git ignores ``path`` (tracked files never count as ignored).

    Asks ``git check-ignore`` (with repository hooks such as fsmonitor disabled);
    outside a git repository, or without git, matches the project's .gitignore
    files with pathspec.

    Args:
        path: A resolved path inside the resolved project root.
        project_root: The project directory.
    """
    root = project_root.resolve()
    git = shutil.which("git")
    if git:
        try:
            proc = run_git(["check-ignore", "-q", "--", path.relative_to(root).as_posix()], root,
                           base=scrubbed_env(), timeout=_GIT_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired, GitRefused) as exc:
            log.warning("git check-ignore failed for %s: %s", path, exc)
        else:
            if proc.returncode in (0, 1):
                return proc.returncode == 0
    return _ignored_by_gitignore_files(path, root)


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


def _numbered(lines: Iterable[tuple[int, bytes]]) -> tuple[str, int, int, bool]:
    """Render (number, raw line) pairs within the byte cap: text, first, last, cut short."""
    out: list[str] = []
    size = 0
    first = last = 0
    for number, raw in lines:
        if size + len(raw) > MAX_READ_BYTES and out:
            return "\n".join(out), first, last, True
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        out.append(f"{number:6}\t{text}")
        size += len(raw)
        first, last = first or number, number
    return "\n".join(out), first, last, False


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
    params: Mapping[str, Any], *, project_root: Path, explicit_files: Iterable[str] = frozenset()
) -> TaskResult:
    """Executor of ``readFile``.

    Args:
        params: ``path`` (required), ``start_line`` and ``end_line`` (optional, 1-based, inclusive).
        project_root: The project directory; nothing outside it is read.
        explicit_files: Absolute paths the user put into the context; these may be
            read even when secret-looking or ignored by git.

    Returns:
        Success: the lines, numbered; ``metadata`` has ``path``, ``start_line``,
        ``end_line``, ``truncated`` and, for whole reads, ``total_lines``.
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
    shown = relative_display(resolved, root)
    explicit = _is_explicit(root / raw, resolved, explicit_files)
    if ".git" in resolved.relative_to(root).parts:
        return error_result(f"{shown} is git's internal data, which is not read (it can hold credentials).",
                            path=str(resolved))
    if not explicit and (why := is_secret_path(raw) or is_secret_path(resolved.relative_to(root))):
        return error_result(f"Reading {shown} is refused: {why}. Only the user can add it to the context.",
                            path=str(resolved))
    if not resolved.exists():
        return error_result(f"{shown} does not exist. Use executeFilePathCommand to find files.", path=str(resolved))
    if resolved.is_dir():
        return error_result(f"{shown} is a directory. Use executeFilePathCommand (e.g. ls {shown}) to list it.",
                            path=str(resolved))
    if not explicit and is_git_ignored(resolved, root):
        return error_result(f"{shown} is ignored by git (.gitignore), so it is not read. The user can add it to "
                            "the context if it is needed.", path=str(resolved))
    try:
        size = resolved.stat().st_size
        with resolved.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError as exc:
        return error_result(f"{shown} cannot be read: {exc.strerror or exc}.", path=str(resolved))
    if b"\x00" in head:
        return error_result(f"{shown} is a binary file ({size} bytes); only text files can be read.",
                            path=str(resolved))
    if not explicit and (looks_like_private_key(head) or contains_private_key(resolved)):
        return error_result(f"Reading {shown} is refused: it contains a private key.", path=str(resolved))
    if size > MAX_READ_BYTES and start is None and end is None:
        return error_result(
            f"{shown} is {size} bytes, over the {MAX_READ_BYTES // 1024} KB limit for a whole read. "
            "Read it in parts with start_line and end_line.", path=str(resolved), size=size)
    try:
        text, first, last, cut = _numbered(_lines_in_range(resolved, start or 1, end))
    except OSError as exc:
        return error_result(f"{shown} cannot be read: {exc.strerror or exc}.", path=str(resolved))
    meta: dict[str, Any] = dict(path=str(resolved), start_line=first, end_line=last, truncated=cut, size=size)
    if not text:
        where = f"has no line {start}" if start else "is empty"
        return ok_result(f"{shown} {where}.", **meta)
    if start is None and end is None and not cut:
        meta["total_lines"] = last
    if cut:
        text += f"\n[output cut at {MAX_READ_BYTES // 1024} KB; continue with start_line={last + 1}]"
    return ok_result(text, **meta)
