"""Errors raised by the session store, each with a message a user can act on."""

from __future__ import annotations

import errno as _errno
from pathlib import Path


class SessionError(Exception):
    """Base class of every session error; ``str(error)`` is the message to show."""


class SessionNotFound(SessionError):
    """No session has the given id (or the given transcript does not exist)."""


class SessionLocked(SessionError):
    """Another assistant-tui holds the session open; it can be forked instead."""

    def __init__(self, message: str, *, session_id: str, holder_pid: int | None = None) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.holder_pid = holder_pid


class SessionReadError(SessionError):
    """A transcript or the sessions directory could not be read."""


class SessionWriteError(SessionError):
    """A record could not be saved; the writer keeps it in memory and retries later.

    Attributes:
        path: The file that could not be written.
        errno: The operating system's error number, when there is one.
        pending: How many records are waiting in memory to be written.
    """

    def __init__(self, message: str, *, path: Path, errno: int | None = None, pending: int = 0) -> None:
        super().__init__(message)
        self.path = path
        self.errno = errno
        self.pending = pending


class ExportError(SessionError):
    """A conversation could not be exported to the chosen path."""


def describe_os_error(exc: OSError, path: Path, action: str) -> str:
    """One sentence naming what failed, where, and why, for an ``OSError``.

    Args:
        exc: The error raised by the operating system.
        path: The file or directory concerned.
        action: What was attempted, e.g. ``"write the session transcript"``.
    """
    code = exc.errno
    if code in (_errno.ENOSPC, _errno.EDQUOT):
        why = "the disk is full (or the quota is exhausted)"
    elif code == _errno.EROFS:
        why = "the file system is read-only"
    elif code in (_errno.EACCES, _errno.EPERM):
        why = "permission denied"
    elif code in (_errno.ENOTDIR, _errno.EEXIST):
        why = "a file is in the way where a directory is expected"
    elif code == _errno.ENOENT:
        why = "the directory does not exist"
    elif code == _errno.EISDIR:
        why = "it is a directory"
    else:
        why = exc.strerror or exc.__class__.__name__
    return f"Could not {action} {path}: {why}."
