"""Knowing that a project's tree is unchanged without stat-ing its files: inotify on its directories (issue 26).

A whole-tree checkpoint of an unchanged tree was one ``git status``: 80,000 ``lstat`` calls on a
large project, one at a time (git's threads for them took the app's CPUs from its event loop).
:class:`TreeWatch` watches every directory git could store files from, so the shadow may skip
that status when nothing happened since the status behind its latest snapshot began, and limit
it to the paths the events named when a few files changed:

- :meth:`TreeWatch.begin` is called before each whole-tree snapshot: it reads the pending events
  (the kernel queues them before the writing call returns, so a change made before the call is
  never still on its way) and says what changed since the latest snapshot (nothing, these
  files, or unknown); then it makes sure every directory is watched (walking the tree when
  needed), so every change from then on leaves an event;
- :meth:`TreeWatch.covers` then names the snapshot taken.

Anything the watch cannot vouch for makes it answer "unknown" (and the shadow runs ``git status``):
an overflowed queue, a directory created, moved or deleted, a ``.gitignore`` changed (the watch is
set up again from scratch before the next status), a directory it cannot read or watch, a mount
inside the project, a file system not on :data:`LOCAL_FILE_SYSTEMS` (another machine's writes
leave no event), the watch limit reached.

Not seen, as by every inotify-based watcher (git's fsmonitor, watchman): a file changed only through
a shared memory map (no write call), or through a hard link to it from outside the project.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import gc
import logging
import os
import struct
import threading
import weakref
from typing import Callable, Iterable

log = logging.getLogger(__name__)

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF
        | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
STRUCTURE = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_Q_OVERFLOW | IN_IGNORED
"""Events after which the set of watched directories may be wrong: watch again from scratch."""
_EVENT = struct.Struct("iIII")
LOCAL_FILE_SYSTEMS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "overlay"})
"""File systems whose every change comes from this machine's kernel (so leaves an event)."""
MAX_DIRECTORIES = 50_000
MAX_PATHS = 256
"""More paths than this changed since the latest snapshot: a whole ``git status`` finds them."""
MAX_WATCHES_PER_PROCESS = 8
"""inotify instances are few (128 per user by default): a process holds at most this many (one per application)."""
_live = 0
_live_lock = threading.Lock()


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _libc()


class WatchUnavailable(Exception):
    """The tree cannot be watched completely; the message says why (the shadow runs ``git status``)."""


class TreeWatch:
    """The directories of one project, watched for any change.

    Args:
        root: The project (the shadow's work tree).
        ignored: Called before each walk: the directories (absolute paths) git leaves out of a
            snapshot, not watched. Changes there cannot change a snapshot.

    Blocking; not thread-safe: call under the shadow's lock.
    """

    def __init__(self, root: str, ignored: Callable[[], Iterable[str]]) -> None:
        self.root = os.path.abspath(root)
        self._ignored = ignored
        self._fd: list[int] = [-1]
        self._finalizer = weakref.finalize(self, _close, self._fd)
        self._fresh = False
        """Every directory is watched and no event said otherwise since."""
        self._covered: str | None = None
        self._armed = False
        self._dirs: dict[int, str] = {}
        """Each watch's directory, relative to the root ("" for the root)."""
        self._paths: set[str] | None = set()
        """The paths events named since the watch was armed; None: too many, or not known."""
        self.disabled: str | None = None
        """Why this tree is not watched (then every snapshot runs ``git status``)."""
        self.directories = 0

    # -- the shadow's calls --------------------------------------------------------
    def begin(self, latest: str) -> list[str] | None:
        """Arm the watch before a snapshot; returns what changed since the snapshot ``latest`` was taken.

        ``[]``: nothing (``latest`` is the tree as it is); a list of project-relative paths: only
        those may differ (files created, changed or deleted, none a directory); None: unknown (run a
        whole ``git status``). Every directory is watched when this returns, so every change from now
        on leaves an event: call :meth:`covers` with the snapshot taken next.
        """
        self._armed = False
        if self.disabled is not None:
            return None
        self._drain()
        known = self._fresh and self._covered is not None and self._covered == latest and self._paths is not None
        changed = sorted(self._paths) if known and self._paths is not None else None
        self._covered = None
        if not self._fresh:
            try:
                self._establish()
            except (WatchUnavailable, OSError) as exc:
                self.disable(str(exc))
                return None
        self._paths = set()
        self._armed = True
        return changed

    def covers(self, snapshot: str) -> None:
        """The snapshot taken after :meth:`begin` is ``snapshot`` (the tree as of then, every later change an event)."""
        self._covered = snapshot if self._armed and self._fresh else None
        self._armed = False

    def invalidate(self) -> None:
        """Something the walk depends on changed (the excludes): watch again from scratch before the next status."""
        self._fresh = False
        self._covered = None

    def disable(self, reason: str) -> None:
        """Stop watching for good (this object's life): every snapshot runs ``git status``."""
        if self.disabled is None:
            log.info("checkpoints: the project is not watched (%s); each whole-tree checkpoint runs git status", reason)
        self.disabled = reason
        self.close()

    def close(self) -> None:
        """Release the inotify instance."""
        self._fresh = False
        self._covered = None
        self._paths = None
        _close(self._fd)

    # -- inside ----------------------------------------------------------------------
    def _establish(self) -> None:
        """A new inotify instance watching every directory git could store a file from."""
        self.close()
        self._dirs = {}
        if _LIBC is None:
            raise WatchUnavailable("inotify is not available here")
        file_system = _file_system(self.root)
        if file_system not in LOCAL_FILE_SYSTEMS:
            raise WatchUnavailable(f"the project is on a {file_system or 'unknown'} file system")
        if _live >= MAX_WATCHES_PER_PROCESS:
            gc.collect()  # watches no longer reachable (their applications are gone) close their instances
        self._fd[0] = fd = _open()
        skip = {os.path.abspath(p) for p in self._ignored()}
        device = os.lstat(self.root).st_dev
        stack = [self.root]
        count = 0
        while stack:
            folder = stack.pop()
            wd = _LIBC.inotify_add_watch(fd, os.fsencode(folder), MASK)
            if wd < 0:
                code = ctypes.get_errno()
                if code in (errno.ENOENT, errno.ENOTDIR) and folder != self.root:
                    continue  # gone already: its parent's watch has the event
                raise WatchUnavailable(f"watching {folder}: {os.strerror(code)}")
            self._dirs[wd] = os.path.relpath(folder, self.root) if folder != self.root else ""
            count += 1
            if count > MAX_DIRECTORIES:
                raise WatchUnavailable(f"more than {MAX_DIRECTORIES} directories")
            try:  # listed after its watch is in place: a directory made after this listing leaves an event
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if not entry.is_dir(follow_symlinks=False) or entry.name == ".git" or entry.path in skip:
                            continue  # (files first: the type comes with the listing, the path is built only for a directory)
                        try:
                            inner = entry.stat(follow_symlinks=False).st_dev
                        except FileNotFoundError:
                            continue  # deleted while listed: an event says so
                        if inner != device:
                            raise WatchUnavailable(f"{entry.path} is another file system mounted in the project")
                        stack.append(entry.path)
            except FileNotFoundError:
                if folder == self.root:
                    raise WatchUnavailable("the project is gone") from None
            except OSError as exc:
                raise WatchUnavailable(f"listing {folder}: {exc.strerror}") from None
        self.directories = count
        self._fresh = True

    def _drain(self) -> bool:
        """Read every pending event; True when there was one. A structural one makes the watch stale."""
        fd = self._fd[0]
        if fd < 0:
            self._fresh = False
            self._paths = None
            return True
        changed = False
        while True:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                return changed
            except OSError as exc:
                log.warning("checkpoints: reading the project's watch failed: %s", exc)
                self.close()
                return True
            changed = True
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                folder = self._dirs.get(wd)
                if mask & (STRUCTURE | IN_ISDIR) or not name or folder is None or name == b".gitignore":
                    self._fresh = False  # the directories watched may no longer be the tree's
                    self._paths = None
                elif self._paths is not None:
                    self._paths.add(f"{folder}/{os.fsdecode(name)}" if folder else os.fsdecode(name))
                    if len(self._paths) > MAX_PATHS:
                        self._paths = None


def _open() -> int:
    """A new inotify instance (counted), or :class:`WatchUnavailable`."""
    global _live
    assert _LIBC is not None
    with _live_lock:
        if _live >= MAX_WATCHES_PER_PROCESS:
            raise WatchUnavailable(f"{MAX_WATCHES_PER_PROCESS} projects are watched already")
        fd = _LIBC.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise WatchUnavailable(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        _live += 1
        return fd


def _close(holder: list[int]) -> None:
    global _live
    with _live_lock:
        if holder[0] >= 0:
            try:
                os.close(holder[0])
            except OSError:
                pass
            holder[0] = -1
            _live -= 1


def _file_system(path: str) -> str | None:
    """The type of the file system ``path`` is on (``/proc/self/mountinfo``), None when unknown."""
    best, found = -1, None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                fields = line.split()
                if "-" not in fields or len(fields) < 5:
                    continue
                point = _unescape(fields[4])
                kind = fields[fields.index("-") + 1]
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= best:
                    best, found = len(point), kind
    except OSError:
        return None
    return found


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code in ("\\040", "\\011", "\\012", "\\134"):
        field = field.replace(code, chr(int(code[1:], 8)))
    return field
