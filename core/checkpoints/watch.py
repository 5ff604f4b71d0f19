"""Noticing that a command changed an ignored directory (``node_modules``, ``.venv``), which no checkpoint copies.

Only the project's top-level ignored directories are watched, by the modification times of the
directory and of its direct children: a ``git check-ignore`` (only when the top-level names or the
ignore files changed) and a few ``scandir`` calls, so
it costs nothing like a walk of ``node_modules``. A change deeper down that touches none of
those times goes unnoticed (said in the README).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from core.checkpoints.shadow import ShadowRepo

MAX_CHILDREN = 5000


def ignored_signature(repo: ShadowRepo) -> dict[str, Any]:
    """``{name: state}`` of the project's top-level directories git ignores."""
    try:
        names = sorted(e.name for e in os.scandir(repo.root) if e.is_dir(follow_symlinks=False) and e.name != ".git")
    except OSError:
        return {}
    if not names:
        return {}
    key = (tuple(names), *(_stamp(p) for p in (repo.root / ".gitignore", repo.git_dir / "info" / "exclude")))
    cached = _CACHE.get(repo.git_dir)
    if cached is not None and cached[0] == key:
        ignored = cached[1]
    else:  # which of them git ignores: asked again only when the names or the ignore files change
        data = b"".join(os.fsencode(n + "/") + b"\0" for n in names)
        out = repo.git("check-ignore", "-z", "--stdin", "--no-index", input=data, check=False)
        ignored = [os.fsdecode(n).rstrip("/") for n in out.split(b"\0") if n]
        _CACHE[repo.git_dir] = (key, ignored)
    return {name: _state(os.path.join(repo.root, name)) for name in ignored}


_CACHE: dict[Any, tuple[Any, list[str]]] = {}


def _stamp(path: Any) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (0, 0)
    return (info.st_mtime_ns, info.st_size)


def _state(path: str) -> tuple[int, int, int]:
    """The directory's own time, its children's count and their latest time."""
    try:
        own = os.stat(path, follow_symlinks=False).st_mtime_ns
    except OSError:
        return (0, 0, 0)
    latest = 0
    count = 0
    with contextlib.suppress(OSError), os.scandir(path) as entries:
        for entry in entries:
            count += 1
            if count > MAX_CHILDREN:
                break
            with contextlib.suppress(OSError):
                latest = max(latest, entry.stat(follow_symlinks=False).st_mtime_ns)
    return (own, count, latest)
