"""Session transcripts in the app: open or resume at start, redraw a loaded session, /new, /sessions, /export.

The engine's ``core.session.Session`` owns the transcript (start, resume, fork, new,
switch, close) and restores the conversation and the file context itself;
:class:`Sessions` puts what it loads back on screen and reports problems as notes,
never as tracebacks.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.narration import warning_title
from tui.conversation import Conversation
from tui.engine import Engine
from tui.turn import TurnRenderer, TurnView
from tui.widgets.chat import NoteMessage
from tui.widgets.pasted import user_message

if TYPE_CHECKING:
    from tui.context_ops import FileContext
    from tui.widgets.chat import ChatView
    from tui.widgets.trace import ToolTrace

log = logging.getLogger(__name__)

RESTORE_RECORDS = 60
"""At most the newest this many records are redrawn in the chat (the transcript view shows everything).

Fewer when they already give the chat more than it keeps (:func:`_window`): building
widgets only to prune them cost seconds and tens of MB on a 1,000-turn resume."""



class Sessions:
    """The session of this run and the user's session commands (/new, /sessions, /export, f2).

    Args:
        engine: the engine link (the Application opens, lists and writes sessions).
        conversation: the conversation controller (cleared on /new and a switch).
        files: the file-context controller (its pane is redrawn from the restored session).
    """

    def __init__(self, engine: Engine, conversation: Conversation, files: "FileContext") -> None:
        self.engine = engine
        self.conversation = conversation
        self.files = files
        self.chat: "ChatView" = conversation.chat
        self.trace: "ToolTrace" = conversation.trace

    @property
    def supported(self) -> bool:
        """Whether sessions are saved: the Application's are (a bare handler a test drives has none)."""
        return self.engine.application is not None

    @property
    def current_id(self) -> str | None:
        return self.engine.session.id

    async def _note(self, text: str, kind: str = "info", title: str = "") -> None:
        await self.chat.add(NoteMessage(text, kind=kind, title=title))  # type: ignore[arg-type]

    async def start(self, *, continue_session: bool = False, resume: str | None = None) -> None:
        """Open the session for this run (a new one, the latest, or ``resume``) and redraw it."""
        if not self.supported:
            return
        from core.sessions import SessionError

        session = self.engine.session
        try:
            notices = await asyncio.to_thread(session.start, continue_latest=continue_session, resume=resume, fork_if_locked=True)
        except SessionError as exc:
            await self._note(f"{exc}\nStarting a new session instead.", "warning", "Session not opened")
            try:
                notices = await asyncio.to_thread(session.start, fork_if_locked=True)
            except SessionError as again:
                await self._note(f"{again}\nThis conversation is not being saved.", "error", warning_title("session_not_saved"))
                return
        await self._opened(notices)

    async def _opened(self, notices: list[str]) -> None:
        """A session was opened: say what opening it noticed and redraw what it loaded."""
        for notice in notices:
            await self._note(notice)
        loaded = self.engine.session.take_loaded()  # the session keeps the conversation, not the records read back
        if loaded is not None:
            await self.restore(loaded)

    async def restore(self, loaded: Any) -> None:
        """Redraw a loaded session: its newest turns replayed through the live turn's renderer (chat, trace,
        status line), then the context pane (f2 reads the session for the rest).

        The recorded conversation is turned back into the events its turns streamed
        (:func:`core.sessions.replay.replay`) and each is applied by :class:`TurnRenderer`, the code
        that drew it live: a resumed error, denial or interruption reads as it did.
        """
        from core import events as ev
        from core.sessions.replay import Interrupted, Note, replay

        count = _window(loaded.messages, nodes=self.chat.max_nodes, items=self.chat.max_live, limit=RESTORE_RECORDS)
        messages, incidents, earlier = _newest(loaded.messages, loaded.incidents, count)
        if earlier:
            await self._note(f"{earlier} earlier items are in the transcript (f2).")
        view = TurnView(chat=self.chat, trace=self.trace, status=self.conversation.status, post=_dropped, metrics=_no_metrics, replaying=True)
        renderer = TurnRenderer(view, "")
        with self.chat.app.batch_update():  # one layout for the whole replay, not one per widget
            for event in replay(messages, incidents, loaded.trace):
                if isinstance(event, ev.TurnStarted):
                    await self.chat.add(user_message(event.query))
                    renderer = TurnRenderer(view, event.query)
                    await renderer.handle(event)
                elif isinstance(event, Note):
                    await self.chat.add(user_message(event.text))
                elif isinstance(event, Interrupted):
                    await renderer.interrupted(event.reason)
                else:
                    await renderer.handle(event)
        self.trace.interrupt_running()
        self.conversation.status.set_state("ready")
        self.files.refresh()
        await self._note(f"Resumed session {loaded.session_id}.")

    async def new(self) -> None:
        """``/new``: a fresh conversation in a new transcript."""
        await self.conversation.clear()
        if self.supported:
            from core.sessions import SessionError

            try:
                await asyncio.to_thread(self.engine.session.new)
            except SessionError as exc:
                await self._note(f"{exc}\nThis conversation is not being saved.", "error", warning_title("session_not_saved"))
                return
            await self._note(f"New session {self.engine.session.id}.")
        else:
            await self._note("New conversation.")

    async def switch(self, session_id: str) -> None:
        """Open another session of this project (from the /sessions picker)."""
        from core.sessions import SessionError

        await self.conversation.clear(keep_files=False)
        session = self.engine.session
        try:
            notices = await asyncio.to_thread(session.switch, session_id)
        except SessionError as exc:
            await self._note(str(exc), "error", "Session not opened")
            return
        await self._opened(notices)

    def list_sessions(self) -> list[Any]:
        """This project's sessions, newest first (blocking: run in a thread)."""
        store = self.engine.session.store
        if store is None:
            from core.sessions import SessionStore

            store = SessionStore()
        return store.list(self.engine.project_root)

    async def export(self, target: str) -> None:
        """``/export [path]``: the conversation as Markdown."""
        from core.sessions import ExportError

        session = self.engine.session
        history = session.history
        if not history:
            await self._note("Nothing to export yet.")
            return
        path = Path(target).expanduser() if target else export_path(self.current_id or "")
        if not path.is_absolute():
            path = self.engine.project_root / path
        try:
            if not target:
                await asyncio.to_thread(path.parent.mkdir, mode=0o700, parents=True, exist_ok=True)
            written = await asyncio.to_thread(session.export_markdown, path)
        except OSError as exc:
            await self._note(f"Cannot create {path.parent}: {exc.strerror}. Give a path: /export <file>.", "error", "Export failed")
            return
        except ExportError as exc:
            await self._note(str(exc), "error", "Export failed")
            return
        where = "" if target else "\n/export <file> writes it elsewhere (a relative path is in the project)."
        await self._note(f"Exported {len(history)} messages to {written}.{where}")

    def transcript_markdown(self) -> str:
        """The whole conversation as Markdown (what /export writes), pruned messages included: the session's."""
        return self.engine.session.transcript_markdown()


def export_path(session_id: str) -> Path:
    """Where ``/export`` with no path writes: the state directory, never the project."""
    from core import paths

    name = f"assistant-tui-{session_id}.md" if session_id else "assistant-tui-conversation.md"
    return paths.state_dir() / "exports" / name


def _window(messages: list[Any], *, nodes: int, items: int, limit: int) -> int:
    """How many of the newest ``messages`` to redraw so the chat keeps what it would keep of them all.

    The chat keeps the newest items whose widgets number at most ``nodes`` (and at most
    ``items`` items), so a window already worth more widgets than that gives the same chat.
    Each message is counted at the fewest widgets it can draw (a question one, an answer
    its message and body, a tool call its line): the window is never too short. It starts
    at a question, as the window of :func:`_newest` does, and is at most ``limit`` long.
    """
    widgets = shown = count = 0
    for message in reversed(messages):
        if count >= limit:
            break
        count += 1
        role = message.get("role")
        drawn = 1 if role == "user" else 0
        if role == "assistant":
            drawn = _answer_widgets(str(message.get("content") or "")) + (1 if message.get("thinking") else 0)
            drawn += len(message.get("tool_calls") or [])
        widgets += drawn
        shown += 1 if drawn else 0
        if role == "user" and (widgets > nodes or shown > items):
            break  # more than the chat keeps, from a turn's start
    return count


_FENCES = ("```", "~~~")


def _answer_widgets(content: str) -> int:
    """The fewest widgets an answer draws: its message, its body and a block per paragraph-like chunk.

    Chunks are the text between blank lines, a fenced code block one chunk; a chunk that may
    draw nothing (indented code's continuation, HTML, a link definition, a ``<plan>``) counts none.
    """
    if not content.strip():
        return 0
    if "<plan>" in content:
        return 2
    blocks = 0
    fence = ""
    chunk: list[str] = []
    for line in content.splitlines() + [""]:
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            continue
        if stripped.startswith(_FENCES):
            fence = stripped[:3]
            blocks += 1
            continue
        if stripped:
            chunk.append(line)
            continue
        if chunk and not chunk[0].startswith(("    ", "\t")) and not chunk[0].lstrip().startswith(("<", "[")):
            blocks += 1
        chunk = []
    return 2 + blocks


def _newest(messages: list[Any], incidents: list[Any], count: int) -> tuple[list[Any], list[Any], int]:
    """The newest ``count`` messages from a turn's start (and their incidents, placed anew), and how many were left out."""
    cut = max(0, len(messages) - count)
    if cut:
        starts = [i for i in range(cut, len(messages)) if messages[i].get("role") == "user"]
        cut = starts[0] if starts else cut
    kept = [{**incident, "at": int(incident.get("at") or 0) - cut} for incident in incidents if int(incident.get("at") or 0) >= cut]
    left_out = cut + sum(1 for incident in incidents if int(incident.get("at") or 0) < cut)
    return messages[cut:], kept, left_out


def _dropped(message: Any) -> None:
    """A replayed turn asks nothing of the app (no query back to the prompt, no files offered)."""


def _no_metrics() -> None:
    return None
