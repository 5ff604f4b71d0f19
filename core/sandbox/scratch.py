"""The process's own directory for the host files a sandbox binds: masks, empty directories, copies.

One directory a process, named for its pid (``assistant-tui-<pid>-XXXX`` in the temporary
directory) and removed at exit. A process killed before its exit handlers ran (SIGKILL, a
crash, the machine's out-of-memory killer) leaves its directory behind, so the first sandbox
of a later process removes those whose process is gone: this user's only, never a link.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import tempfile

PREFIX = "assistant-tui-"
_OURS = re.compile(r"assistant-tui-(\d+)-[A-Za-z0-9_]+$")
_DIR: str | None = None
_OWNER = 0


def scratch_dir() -> str:
    """This process's scratch directory (mode 0700), made on first use after sweeping dead processes' ones."""
    global _DIR, _OWNER
    if _DIR is None or _OWNER != os.getpid() or not os.path.isdir(_DIR):
        sweep_stale()
        _DIR, _OWNER = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"), os.getpid()
        atexit.register(_remove, _DIR, _OWNER)
    return _DIR


def _remove(path: str, owner: int) -> None:
    if os.getpid() == owner:  # a forked child that exits normally leaves its parent's directory alone
        shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, another user's
        return True
    return True


def sweep_stale(parent: str | None = None) -> list[str]:
    """Remove the scratch directories of this user's processes that no longer run; the paths removed."""
    parent = parent or tempfile.gettempdir()
    removed: list[str] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        match = _OURS.match(entry.name)
        if match is None or int(match.group(1)) == os.getpid():
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == uid and not _alive(int(match.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed
