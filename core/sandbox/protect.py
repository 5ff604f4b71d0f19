"""What a sandboxed command may not write: the files git, aider and the app read as configuration.

A command runs with the project writable, so anything it leaves there runs later
outside the sandbox if a program reads it as configuration. Which entries those are is
defined once, in :mod:`core.protected` (the same list :mod:`core.tools.aider_guard`
refuses aider's writes by): git's ``.git``, ``.gitmodules``, ``.gitattributes``,
direnv's ``.envrc``, the ``.env*`` family, aider's ``.aider*``, the app's top-level
``.mcp.json`` and ``AGENTS.md``, a git-directory-shaped directory's ``config`` and
``hooks``, and what a git config points to in the tree (``core.hooksPath``, includes).
The app's own configuration and trusted-projects list live under the user's home,
which the sandbox never shows (or covers, when they lie inside the project).

How: existing protected entries are bound read-only over themselves (anywhere in the
walked tree). Missing top-level names get an empty read-only mount point, created by us
before the run (marked with an extended attribute) and removed after it, under a lock on
the project directory shared by concurrent runs (the last run out removes them). Names
that cannot all be listed (``.env.anything``, a ``.git`` in a subdirectory) are swept
after the run: a protected entry that did not exist before is moved out of the project
into a quarantine directory, and the run says so. A protected symbolic link (``.git ->``)
cannot be mounted over: it is checked after the run and put back if it was replaced.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from core.protected import MOUNT_DIRS, MOUNT_FILES

log = logging.getLogger(__name__)

MISSING_FILES: tuple[str, ...] = MOUNT_FILES
"""Top-level files made uncreatable by an empty read-only mount point when missing."""
MISSING_DIRS: tuple[str, ...] = MOUNT_DIRS
"""Top-level directories made uncreatable the same way (an empty read-only directory)."""
MARK_XATTR = "user.assistant-tui.mountpoint"
_lock = threading.Lock()
_created: set[str] = set()
"""Mount points this process created (also when the file system has no extended attributes)."""


@dataclass
class MountPoints:
    """The empty mount points of one run, and the lock that keeps them while it runs."""

    root: Path
    files: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    fd: int | None = None

    def release(self) -> None:
        """End this run's hold; the last run out removes every marked mount point."""
        if self.fd is None:
            return
        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return  # another run still uses them: it removes them
            _remove_marked(self.root)
        finally:
            os.close(self.fd)
            self.fd = None


def _marked(path: str) -> bool:
    if path in _created:
        return True
    try:
        return os.getxattr(path, MARK_XATTR, follow_symlinks=False) == b"1"
    except OSError:
        return False


def _remove_marked(root: Path) -> None:
    for name in (*MISSING_FILES, *MISSING_DIRS):
        path = str(root / name)
        try:
            if not _marked(path):
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                os.rmdir(path)  # only when empty: whatever is in it was not ours
            elif os.lstat(path).st_size == 0:
                os.unlink(path)
            _created.discard(path)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                log.warning("could not remove the sandbox's mount point %s: %s", path, exc)


def make_mount_points(root: Path) -> MountPoints:
    """Hold the project's lock (shared) and create the missing top-level protected names, empty and marked.

    The caller binds an empty read-only file or directory over each (so the sandbox cannot
    create them) and calls :meth:`MountPoints.release` after the run.
    """
    points = MountPoints(root)
    try:
        points.fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(points.fd, fcntl.LOCK_SH)
    except OSError as exc:
        log.warning("cannot lock %s for the sandbox's mount points: %s", root, exc)
    for names, is_dir in ((MISSING_FILES, False), (MISSING_DIRS, True)):
        for name in names:
            path = str(root / name)
            try:
                if is_dir:
                    os.mkdir(path, 0o755)
                else:
                    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o444))
            except FileExistsError:
                if _marked(path):  # another run's (or a crashed run's): bind over it too
                    (points.dirs if is_dir else points.files).append(path)
                continue
            except OSError as exc:
                log.warning("cannot create the sandbox's mount point %s: %s", path, exc)
                continue
            with _lock:
                _created.add(path)
            try:
                os.setxattr(path, MARK_XATTR, b"1", follow_symlinks=False)
            except OSError:
                pass  # this process still knows it
            (points.dirs if is_dir else points.files).append(path)
    return points


@dataclass
class Moved:
    """A protected entry the command created, moved out of the project."""

    path: str
    to: str


def sweep(root: Path, before: set[str], symlinks: dict[str, str], started: float, quarantine: Path,
          found: Iterable[str]) -> list[Moved]:
    """Move out of ``root`` every protected entry created during the run, and put back replaced symlinks.

    Args:
        root: The project.
        before: Protected entries (absolute paths) that existed before the run.
        symlinks: Protected symbolic links before the run: path -> target.
        started: ``time.time()`` at the start of the run (entries changed before it are left alone).
        quarantine: Where moved entries go (created when needed).
        found: The protected entries there now (:func:`core.sandbox.walk.walk_protected`), read lazily.
    """
    moved: list[Moved] = []
    for path, target in symlinks.items():
        try:
            if os.readlink(path) == target:
                continue
        except OSError:
            pass
        if os.path.lexists(path):
            moved.append(_quarantine(root, path, quarantine))
        try:
            os.symlink(target, path)
        except OSError as exc:
            log.warning("could not put back the symbolic link %s -> %s: %s", path, target, exc)
    # Only a top-level mount point name may carry the mark: the sandbox cannot create those
    # (they are mounted over while it runs), but it can set the mark on anything else it makes.
    mount_names = {str(root / name) for name in (*MISSING_FILES, *MISSING_DIRS)}
    for path in found:
        if path in before or path in symlinks:
            continue
        try:
            if os.lstat(path).st_ctime < started - 1 or (path in mount_names and _marked(path)):
                continue
        except OSError:
            continue
        moved.append(_quarantine(root, path, quarantine))
    return moved


def _quarantine(root: Path, path: str, quarantine: Path) -> Moved:
    relative = os.path.relpath(path, root)
    destination = quarantine / time.strftime("%Y%m%d-%H%M%S") / relative
    try:
        os.makedirs(destination.parent, mode=0o700, exist_ok=True)
        shutil.move(path, destination)
        log.warning("moved %s, created by a sandboxed command, to %s", path, destination)
        return Moved(relative, str(destination))
    except OSError as exc:
        log.warning("could not move %s out of the project (%s); removing it", path, exc)
        try:
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
        except OSError:
            log.error("could not remove %s, created by a sandboxed command", path)
        return Moved(relative, "")
