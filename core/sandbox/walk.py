"""One walk of the project before a sandboxed run: what to mask, what to make read-only.

Finds secret files (by name, and by content: a private key anywhere in a file of at
most :data:`CONTENT_CAP` bytes, within :data:`CONTENT_BUDGET` seconds per walk),
secret directories, secret files reached through symbolic links, the protected entries
of :mod:`core.protected`, and git's configuration files (masked copies without
credentials are bound over them). Dependency and cache directories are not entered.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from core.protected import git_config_files as _git_configs
from core.protected import git_dir_parts, git_referenced_paths
from core.protected import is_config_name as is_protected_name
from core.secrets import contains_private_key, is_secret_name, is_secret_path, stat_has_private_key

log = logging.getLogger(__name__)

SKIP_DIRS = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache", "target"})
"""Directories not entered (dependencies and caches, not the user's)."""
MAX_WALKED = 100_000
CONTENT_CAP = 1024 * 1024
"""Files larger than this are not read for private keys (keys are a few kB)."""
CONTENT_BUDGET = 2.0
"""Seconds of content scanning per walk; past it, files are judged by name only (and it is logged)."""


@dataclass
class ProjectScan:
    """What one walk found (absolute paths)."""

    secret_files: list[str] = field(default_factory=list)
    secret_dirs: list[str] = field(default_factory=list)
    protected_files: list[str] = field(default_factory=list)
    protected_dirs: list[str] = field(default_factory=list)
    protected_links: dict[str, str] = field(default_factory=dict)
    """Protected symbolic links: path -> what they point to (put back after the run)."""
    git_configs: list[str] = field(default_factory=list)
    complete: bool = True
    """False when the walk stopped at MAX_WALKED or content scanning ran out of time."""

    @property
    def protected(self) -> set[str]:
        """Every entry the sandbox covers: protected, protected links and secrets."""
        return {*self.protected_files, *self.protected_dirs, *self.protected_links,
                *self.secret_files, *self.secret_dirs}


def bare_repository_parts(entries: list[os.DirEntry[str]]) -> list[os.DirEntry[str]]:
    """A directory's ``config`` and ``hooks`` when it has a git directory's shape (``HEAD``, ``objects/``,
    ``refs/``): git run inside it uses it as a (bare) repository, and runs what that config names."""
    parts = git_dir_parts({entry.name for entry in entries})
    return [entry for entry in entries if entry.name in parts] if parts else []


def _listing(directory: str) -> tuple[list[os.DirEntry[str]], list[os.DirEntry[str]]]:
    """A directory's entries (none when it cannot be read), and its git directory parts among them."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return [], []
    return entries, bare_repository_parts(entries)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def scan_project(root: Path, visible: tuple[str, ...] = ()) -> ProjectScan:
    """Walk ``root`` once.

    Args:
        root: The project (resolved).
        visible: Other host paths the sandbox shows (a symbolic link to a secret there is masked too).
    """
    scan = ProjectScan()
    top = str(root)
    walked = 0
    content_time = 0.0
    scanning = True
    stack = [top]
    links: list[tuple[str, str]] = []
    while stack:
        current = stack.pop()
        entries, bare = _listing(current)
        for entry in bare:
            (scan.protected_dirs if entry.is_dir(follow_symlinks=False) else scan.protected_files).append(entry.path)
            if entry.name == "config":
                scan.git_configs.append(entry.path)
        for entry in entries:
            if entry in bare:
                continue
            walked += 1
            if walked > MAX_WALKED:
                scan.complete = False
                log.warning("the sandbox's walk of %s stopped after %d entries", root, MAX_WALKED)
                return scan
            try:
                link = entry.is_symlink()
                is_dir = not link and entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            protected = is_protected_name(entry.name, top=current == top)
            if link:
                if protected:
                    try:
                        scan.protected_links[entry.path] = os.readlink(entry.path)
                    except OSError:
                        pass
                links.append((entry.path, entry.name))
                continue
            if is_secret_name(entry.name):
                (scan.secret_dirs if is_dir else scan.secret_files).append(entry.path)
                continue
            if is_dir:
                if protected:
                    scan.protected_dirs.append(entry.path)
                    if entry.name == ".git":
                        scan.git_configs += _git_configs(entry.path)
                elif entry.name not in SKIP_DIRS:
                    stack.append(entry.path)
                continue
            if protected:
                scan.protected_files.append(entry.path)
                continue
            if scanning:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode) and 0 < info.st_size <= CONTENT_CAP:
                    began = time.monotonic()
                    if stat_has_private_key(entry.path, info):
                        scan.secret_files.append(entry.path)
                    content_time += time.monotonic() - began
                    if content_time > CONTENT_BUDGET:
                        scanning = False
                        scan.complete = False
                        log.warning("the sandbox's scan of %s for private keys ran out of time (%.1f s): the rest "
                                    "of the files are judged by name only", root, CONTENT_BUDGET)
    _follow_links(scan, links, top, visible)
    for config in scan.git_configs:
        git_dir = os.path.dirname(config)
        for path in git_referenced_paths(config, os.path.dirname(git_dir), git_dir):
            if _inside(path, top) and os.path.exists(path) and path not in scan.protected:
                (scan.protected_dirs if os.path.isdir(path) else scan.protected_files).append(path)
    return scan


def _follow_links(scan: ProjectScan, links: list[tuple[str, str]], top: str, visible: tuple[str, ...]) -> None:
    """Mask (or make read-only) what symbolic links reach: a secret by the link's name, the target's name or content."""
    secret = set(scan.secret_files) | set(scan.secret_dirs)
    for path, name in links:
        try:
            target = os.path.realpath(path)
            info = os.stat(target)
        except (OSError, ValueError):
            continue
        if not (_inside(target, top) or any(_inside(target, v) for v in visible)):
            continue  # not in the sandbox at all
        if target in secret or any(_inside(target, d) for d in scan.secret_dirs):
            continue
        is_dir = stat.S_ISDIR(info.st_mode)
        holds_key = stat.S_ISREG(info.st_mode) and info.st_size <= CONTENT_CAP and contains_private_key(target)
        if is_secret_path(name) or is_secret_path(target) or holds_key:
            (scan.secret_dirs if is_dir else scan.secret_files).append(target)
            secret.add(target)
        elif path in scan.protected_links and _inside(target, top):
            (scan.protected_dirs if is_dir else scan.protected_files).append(target)
            if is_dir and name == ".git":
                scan.git_configs += _git_configs(target)


def walk_protected(root: Path) -> Iterator[str]:
    """Every protected entry under ``root`` (not entering them, nor dependency directories)."""
    top = str(root)
    stack = [top]
    walked = 0
    while stack and walked < MAX_WALKED:
        current = stack.pop()
        entries, bare = _listing(current)
        for entry in entries:
            walked += 1
            if entry in bare or is_protected_name(entry.name, top=current == top):
                yield entry.path
                continue
            try:
                if entry.is_dir(follow_symlinks=False) and entry.name not in SKIP_DIRS:
                    stack.append(entry.path)
            except OSError:
                continue
