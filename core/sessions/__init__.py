"""Crash-safe session transcripts: store, writer, loader, recorder and Markdown export.

Typical use::

    store = SessionStore()
    session = store.latest(project) or store.create(project)   # --continue
    loaded = load_session(session)                              # if it exists
    writer = store.writer(session, provider="anthropic", model="...")  # may raise SessionLocked
    recorder = SessionRecorder(writer)
    async with contextlib.aclosing(handler.stream_query(query)) as events:
        async for event in events:
            for warning in recorder.record(event): ...         # show warnings in the UI
"""

from core.sessions.errors import (
    ExportError,
    SessionError,
    SessionLocked,
    SessionNotFound,
    SessionReadError,
    SessionWriteError,
)
from core.sessions.export import export_markdown, render_markdown
from core.sessions.load import INTERRUPTED_RESULT, LoadedSession, load_session
from core.sessions.recorder import SessionRecorder
from core.sessions.session import StoredSession, SessionInfo
from core.sessions.store import SessionStore
from core.sessions.writer import SessionWriter

__all__ = [
    "INTERRUPTED_RESULT",
    "ExportError",
    "LoadedSession",
    "SessionError",
    "SessionInfo",
    "SessionLocked",
    "SessionNotFound",
    "SessionReadError",
    "SessionRecorder",
    "SessionStore",
    "SessionWriteError",
    "SessionWriter",
    "StoredSession",
    "export_markdown",
    "load_session",
    "render_markdown",
]
