"""The one reading of a path pattern, shared by ``/add`` and ``/drop``.

``/add`` selects among the project's files (the index's listing,
:meth:`core.memory.policy.FilePolicy.expand`), ``/drop`` among the picked ones
(:func:`core.file_context.match_current`); both ask :func:`select`, so a pattern
names the same files in both. A pattern is a path, a directory or a glob, relative
to the project root or absolute, and names a file by its path from the root:

- the path itself (``src/a.py``), or anything under it (``src``, ``src/``, ``.``);
- a glob with :meth:`pathlib.Path.glob`'s rules: ``*``, ``?`` and ``[...]`` within one
  component, ``**`` any number of components. ``src/*.py`` names ``src/a.py``, never
  ``src/sub/b.py``; ``src/**/*.py`` names both.

A pattern outside the root names nothing there (an absolute path still names itself).
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Iterable, TypeVar

__all__ = ["glob_match", "is_glob", "relative_pattern", "select"]

P = TypeVar("P", str, Path)


def is_glob(pattern: str) -> bool:
    """Whether ``pattern`` has a glob character (``*``, ``?``, ``[``)."""
    return any(char in pattern for char in "*?[")


def glob_match(rel: str, pattern: str) -> bool:
    """Whether a relative ``/`` path matches a glob the way :meth:`pathlib.Path.glob` does.

    ``*``, ``?`` and ``[...]`` match within one path component; ``**`` matches any
    number of components (none included).
    """
    return _match_parts(rel.split("/"), [part for part in pattern.split("/") if part not in ("", ".")])


def _match_parts(parts: list[str], pattern: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match_parts(parts[i:], rest) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], head) and _match_parts(parts[1:], rest)


def relative_pattern(pattern: str, root: Path) -> str | None:
    """``pattern`` as a ``/`` path from ``root`` (``""`` for the root itself); None when it points outside.

    Args:
        pattern: A path, directory or glob, relative to ``root`` or absolute (``~`` expanded).
        root: The resolved project root.
    """
    candidate = Path(pattern).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    relative = os.path.relpath(os.path.normpath(candidate), root)
    if relative == ".." or relative.startswith("../"):
        return None
    return "" if relative == "." else Path(relative).as_posix()


def _names(rel: str, pattern: str) -> bool:
    if pattern == "" or rel == pattern or rel.startswith(pattern + "/"):
        return True
    return is_glob(pattern) and glob_match(rel, pattern)


def select(pattern: str, root: Path, paths: Iterable[P]) -> list[P]:
    """The ``paths`` that ``pattern`` names, in their order.

    Args:
        pattern: A path, directory or glob, relative to ``root`` or absolute.
        root: The resolved project root.
        paths: Candidates, relative to ``root`` (``/``-separated) or absolute.
    """
    relative = relative_pattern(pattern, root)
    chosen: list[P] = []
    for path in paths:
        candidate = Path(path)
        if not candidate.is_absolute():
            rel: str | None = candidate.as_posix()
        elif candidate.is_relative_to(root):
            rel = candidate.relative_to(root).as_posix()
        else:
            rel = None
        if str(path) == pattern or (rel is not None and relative is not None and _names(rel, relative)):
            chosen.append(path)
    return chosen
