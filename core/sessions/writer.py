"""Append-only, crash-safe writing of a session transcript.

Each complete record becomes one line, appended with a single ``write`` on a
file opened with ``O_APPEND`` and made durable with ``fsync`` before the call
returns. A writer holds an exclusive ``flock`` on ``<id>.lock`` so two
assistant-tui instances never append to the same transcript.

A new transcript holds back pane records (``context``, ``trace``) in memory until
the first message (a ``user`` record, usually): a session that ends without one
leaves no file behind and is never listed.

When the disk is full or the directory cannot be written, the record stays in
memory (``pending``), ``SessionWriteError`` says what happened, and the next
write (or ``flush_pending()``) retries everything in order.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from core import paths
from core.sessions.errors import SessionLocked, SessionWriteError, describe_os_error
from core.sessions.fsutil import FILE_MODE, fsync_dir
from core.sessions.records import FORMAT_VERSION, PANE_KINDS, encode
from core.sessions.session import StoredSession
from core.types import now

log = logging.getLogger(__name__)


@dataclass
class _Item:
    """One encoded line waiting to be written; ``record`` is None for a bare newline."""

    record: dict[str, Any] | None
    data: bytes


class SessionWriter:
    """Appends records to one session's transcript.

    Args:
        session: The session to write (new or existing).
        provider: Provider name for the ``meta`` line of a new transcript.
        model: Model name for the ``meta`` line of a new transcript.
        durable: ``fsync`` after each record (turn off only in benchmarks).
        meta: Extra ``meta`` fields for a new transcript (e.g. ``forked_from``).

    Raises:
        SessionLocked: Another process (or another writer) has the session open.
    """

    def __init__(
        self,
        session: StoredSession,
        *,
        provider: str = "",
        model: str = "",
        durable: bool = True,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.session = session
        self.durable = durable
        self._meta = {
            "version": FORMAT_VERSION,
            "id": session.id,
            "project_root": str(session.project_root),
            "created": session.created,
            "provider": provider,
            "model": model,
            **(meta or {}),
        }
        self._items: list[_Item] = []
        self._held: list[_Item] | None = None if _has_content(session.path) else []
        """Pane records of a new transcript waiting for its first message (None once it has one)."""
        self._offset = 0  # bytes of _items[0] already on disk
        self._written = 0  # records written so far
        self._fd: int | None = None
        self._lock_fd: int | None = None
        self._closed = False
        self._mutex = threading.Lock()
        try:
            self._lock()
        except OSError as exc:  # directory not writable yet: lock when it is
            log.warning("session %s: lock deferred: %s", session.id, exc)

    # Records -------------------------------------------------------------

    def user(self, content: str, context_parts: Iterable[Mapping[str, Any]] = (), *, turn: int = 0, note: bool = False) -> dict[str, Any]:
        """Record a user prompt and what the turn added with it (``core.turn_context`` parts).

        Args:
            content: The text as the user sent it.
            context_parts: What the turn added before it (picked files, suggestions, time...).
            turn: The user-turn number (:mod:`core.turns`); 0 leaves it to be derived on load.
            note: A message that is not a turn (``/run`` output, a ``/task`` result).
        """
        parts = [dict(part) for part in context_parts]
        if note:  # last, so the session list counts notes from the bytes (``NOTE_SUFFIX``)
            return self.append("user", content=content, **({"context_parts": parts} if parts else {}), note=True)
        return self.append("user", content=content, **({"turn": turn} if turn > 0 else {}), **({"context_parts": parts} if parts else {}))

    def assistant(
        self,
        content: str,
        tool_calls: Iterable[Mapping[str, Any]] = (),
        *,
        interrupted: bool = False,
        usage: Mapping[str, Any] | None = None,
        stop_reason: str = "",
        thinking: Iterable[Mapping[str, Any]] = (),
        error: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Record a complete assistant message with the tool calls it requested.

        Args:
            content: The message text (for an interrupted message, what was streamed).
            tool_calls: ``{"id", "name", "parameters"}`` dicts (or ``ToolCall.as_dict()``).
            interrupted: The message stopped before it was complete (the user, or the connection).
            usage: The provider's usage of the response (``core.usage.Usage`` fields, ``model``, ``turn``).
            stop_reason: Why the provider stopped, when notable (``max_tokens``, ``refusal``,
                ``incomplete``); left out of the record when empty.
            thinking: The reasoning blocks exactly as received (kept apart from the answer).
            error: The provider's error that cut the message (``{"kind", "message"}``, with
                ``stop_reason="error"``).
        """
        calls = [_call_dict(call) for call in tool_calls]
        extra: dict[str, Any] = {"usage": dict(usage)} if usage else {}
        if stop_reason:
            extra["stop_reason"] = stop_reason
        if error:
            extra["error"] = dict(error)
        blocks = [dict(block) for block in thinking]
        if blocks:
            extra["thinking"] = blocks
        return self.append("assistant", content=content, tool_calls=calls, interrupted=interrupted, **extra)

    def tool_result(
        self,
        tool_call_id: str,
        name: str,
        content: str,
        *,
        is_error: bool = False,
        status: str = "success",
        duration: float = 0.0,
    ) -> dict[str, Any]:
        """Record the result of one tool call (``status``: success, error, denied, interrupted)."""
        return self.append(
            "tool_result",
            tool_call_id=tool_call_id,
            name=name,
            content=content,
            is_error=is_error,
            status=status,
            duration=round(float(duration), 6),
        )

    def usage(self, usage: Mapping[str, Any]) -> dict[str, Any]:
        """Record the usage of a response that ended early and left no message (a lower bound)."""
        return self.append("usage", usage=dict(usage))

    def warning(self, code: str, message: str) -> dict[str, Any]:
        """Record a warning the turn showed (``code`` e.g. ``retry``, ``context_80``)."""
        return self.append("warning", code=code, message=message)

    def interruption(self, reason: str = "user") -> dict[str, Any]:
        """Record that the turn was interrupted (by the user, or by ``reason``)."""
        return self.append("interruption", reason=reason)

    def error(self, message: str, reason: str = "", *, retracted: bool = False) -> dict[str, Any]:
        """Record a turn that ended in an error (``reason`` e.g. ``llm_error``).

        ``retracted``: nothing was answered and the turn's user message left the
        conversation (it went back to the prompt); loading drops it from the history too.
        """
        if retracted:
            return self.append("error", reason=reason, message=message, retracted=True)
        return self.append("error", reason=reason, message=message)

    def context(self, files: Iterable[str | Mapping[str, Any]]) -> dict[str, Any]:
        """Record the file-context pane: pinned files and their read-only flags.

        Args:
            files: Paths, or ``{"path", "read_only"}`` mappings (extra keys are kept).
        """
        entries = [
            {"path": str(f), "read_only": False} if not isinstance(f, Mapping) else {"read_only": False, **f}
            for f in files
        ]
        return self.append("context", files=entries)

    def trace(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        """Record one entry of the tool-trace pane (any JSON-ready mapping)."""
        return self.append("trace", entry=dict(entry))

    def append(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Record ``{"kind": kind, "ts": now, **fields}`` as one line and make it durable.

        Returns:
            The record as written.

        Raises:
            SessionWriteError: It could not be written; it is kept in ``pending``.
        """
        if self._closed:
            raise RuntimeError(f"session writer for {self.session.id} is closed")
        record = {"kind": kind, "ts": now(), **fields}
        try:
            data = encode(record)
        except ValueError as exc:
            raise SessionWriteError(
                f"A {kind} record could not be saved: {exc}.", path=self.session.path, pending=len(self.pending)
            ) from exc
        with self._mutex:
            if self._held is not None:
                if kind in PANE_KINDS:
                    self._held.append(_Item(record, data))
                    return record
                self._items.extend(self._held)
                self._held = None
            self._items.append(_Item(record, data))
            self._drain()
        return record

    # State ---------------------------------------------------------------

    @property
    def pending(self) -> list[dict[str, Any]]:
        """Records kept in memory because they could not be written yet, oldest first.

        Pane records held back until the first message are not pending: they are not
        due yet, and are dropped if no message comes.
        """
        return [item.record for item in self._items if item.record is not None]

    @property
    def closed(self) -> bool:
        """True after ``close()``."""
        return self._closed

    def flush_pending(self) -> int:
        """Retry writing the pending records.

        Returns:
            How many records were written (including the meta line of a new transcript).

        Raises:
            SessionWriteError: Still impossible; the records stay pending.
        """
        with self._mutex:
            before = self._written
            self._drain()
            return self._written - before

    def close(self) -> None:
        """Write what is pending, then release the file and the lock.

        Raises:
            SessionWriteError: Records could not be written; they remain readable in
                ``pending`` (the caller should tell the user, or export them).
        """
        if self._closed:
            return
        failure: SessionWriteError | None = None
        with self._mutex:
            try:
                self._drain()
            except SessionWriteError as exc:
                failure = exc
            self._closed = True
            if self._held:
                log.debug("session %s: ended without a message; not kept", self.session.id)
            self._held = None
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None
            self._unlock()
        if failure is not None:
            raise failure

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # Internals -----------------------------------------------------------

    def _lock(self) -> None:
        """Take the exclusive lock on ``<id>.lock``, retrying if the file was replaced meanwhile."""
        path = self.session.lock_path
        paths.private_dir(path.parent)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_pid(fd)
                os.close(fd)
                who = f" (pid {holder})" if holder else ""
                raise SessionLocked(
                    f"Session {self.session.id} is open in another assistant-tui{who}. "
                    "Close it there, or fork it to continue in a new session here.",
                    session_id=self.session.id,
                    holder_pid=holder,
                ) from None
            except OSError:
                os.close(fd)
                raise
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the previous holder removed it between our open and flock
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.session.lock_path)  # while still holding the lock
        with contextlib.suppress(OSError):
            os.close(self._lock_fd)
        self._lock_fd = None

    def _open(self) -> None:
        """Open the transcript for appending; queue the meta line or a repairing newline."""
        if self._lock_fd is None:
            try:
                self._lock()
            except SessionLocked as exc:
                raise SessionWriteError(
                    f"{exc} The conversation is kept in memory.", path=self.session.path, pending=len(self.pending)
                ) from exc
        path = self.session.path
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)  # never through a planted link
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                meta = {"kind": "meta", "ts": self.session.created, **self._meta}
                self._items.insert(0, _Item(meta, encode(meta)))
                fsync_dir(path.parent)
            elif _last_byte(path, size) != b"\n":
                # A crash cut the last line short: end it so our first record starts a line.
                self._items.insert(0, _Item(None, b"\n"))
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def _drain(self) -> None:
        """Write every pending item in order (caller holds the mutex)."""
        if not self._items:
            return
        if self._fd is None:
            try:
                paths.private_dir(self.session.path.parent)
                self._open()
            except OSError as exc:
                raise self._failure(exc, "create the session transcript") from exc
        fd = self._fd
        assert fd is not None
        data = b"".join(item.data for item in self._items)[self._offset :]
        view = memoryview(data)
        try:
            while view:
                written = os.write(fd, view)
                view = view[written:]
                self._advance(written)
        except OSError as exc:
            raise self._failure(exc, "write the session transcript") from exc
        if self.durable:
            try:
                os.fsync(fd)
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
                    # The lines are written (a crash of the app will not lose them) but
                    # may not survive a power loss; say so rather than write them twice.
                    raise self._failure(exc, "flush to disk the session transcript") from exc

    def _advance(self, written: int) -> None:
        self._offset += written
        while self._items and self._offset >= len(self._items[0].data):
            item = self._items.pop(0)
            self._offset -= len(item.data)
            self._written += item.record is not None

    def _failure(self, exc: OSError, action: str) -> SessionWriteError:
        waiting = len(self.pending)
        message = describe_os_error(exc, self.session.path, action)
        if waiting:
            noun = "record is" if waiting == 1 else "records are"
            message += f" The conversation is kept in memory ({waiting} {noun} waiting) and will be saved at the next write."
        log.warning("session %s: %s", self.session.id, message)
        return SessionWriteError(message, path=self.session.path, errno=exc.errno, pending=waiting)


def _call_dict(call: Any) -> dict[str, Any]:
    """A tool call as ``{"id", "name", "parameters"}`` from a ToolCall or a mapping."""
    if hasattr(call, "as_dict"):
        return call.as_dict()
    return {"id": str(call.get("id", "")), "name": str(call.get("name", "")), "parameters": dict(call.get("parameters") or {})}


def _has_content(path: Path) -> bool:
    """True when the transcript exists and is not empty (records are appended, never held)."""
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _last_byte(path: os.PathLike[str] | str, size: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
