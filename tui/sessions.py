"""Session transcripts in the app: open or resume at start, redraw a loaded session, /new, /sessions, /export.

The engine's ``core.session.Session`` owns the transcript (start, resume, fork, new,
switch, close) and restores the conversation and the file context itself;
:class:`Sessions` puts what it loads back on screen and reports problems as notes,
never as tracebacks.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.types import Decision, ToolCall, ToolStatus
from tui.conversation import Conversation
from tui.engine import Engine
from tui.widgets.chat import NORMAL_STOPS, AssistantMessage, NoteMessage, ThinkingBlock, ToolCallLine, thinking_text
from tui.widgets.pasted import user_message

if TYPE_CHECKING:
    from tui.context_ops import FileContext
    from tui.widgets.chat import ChatView
    from tui.widgets.trace import ToolTrace

log = logging.getLogger(__name__)

RESTORE_RECORDS = 60
"""Only the newest records are redrawn in the chat (the transcript view shows everything).

The chat keeps about this much mounted anyway (ChatView.max_nodes): building more
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
        return hasattr(self.engine.application, "session_state")

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
                await self._note(f"{again}\nThis conversation is not being saved.", "error", "Session not saved")
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
        """Redraw a loaded session: chat (newest records), trace and context pane (f2 reads the session for the rest)."""
        records = [r for r in loaded.records if r.get("kind") in {"user", "assistant", "tool_result", "interruption", "error"}]
        calls: dict[str, ToolCall] = {}
        for record in loaded.records:
            for call in record.get("tool_calls") or []:
                calls[call["id"]] = _call(call)
        if len(records) > RESTORE_RECORDS:
            await self._note(f"{len(records) - RESTORE_RECORDS} earlier items are in the transcript (f2).")
            records = records[-RESTORE_RECORDS:]
        widgets: list[Any] = []
        finishes: list[tuple[AssistantMessage, str, bool, str]] = []
        for record in records:
            kind = record["kind"]
            if kind == "user":
                widgets.append(user_message(record["content"]))
            elif kind == "assistant":
                thinking = thinking_text(record.get("thinking"))
                if thinking:
                    widgets.append(ThinkingBlock(thinking, finished=True))
                stop_reason = str(record.get("stop_reason") or "")
                if record["content"] or record.get("interrupted") or stop_reason not in NORMAL_STOPS:
                    message = AssistantMessage()
                    widgets.append(message)
                    finishes.append((message, record["content"], bool(record.get("interrupted")), stop_reason))
            elif kind == "tool_result":
                call = calls.get(record["tool_call_id"]) or ToolCall(id=record["tool_call_id"], name=record.get("name", "tool"))
                line = ToolCallLine(call)
                line.set_status(record.get("status") or (ToolStatus.ERROR if record.get("is_error") else ToolStatus.SUCCESS), record.get("duration"), _number(record.get("waited")))
                widgets.append(line)
            elif kind == "interruption":
                widgets.append(NoteMessage("Interrupted.", kind="info"))
            elif kind == "error":
                widgets.append(NoteMessage(record.get("message", ""), kind="error", title="The turn failed"))
        if widgets:
            await self.chat.add(*widgets)
            for message, content, interrupted, stop_reason in finishes:
                if message.is_mounted:
                    await message.finish(content, interrupted=interrupted, stop_reason=stop_reason)
            await self.chat.prune()
        # each turn's stored number (derived on load for older transcripts: core.turns); notes are not turns
        turns = [(_number(r.get("ts")), int(r["turn"]), str(r.get("content") or "")) for r in loaded.records if r.get("kind") == "user" and isinstance(r.get("turn"), int) and not r.get("note")]
        await self._restore_trace(loaded.trace, turns)
        self.files.refresh()
        await self._note(f"Resumed session {loaded.session_id}.")

    async def _restore_trace(self, entries: list[dict[str, Any]], turns: list[tuple[float, int, str]] | None = None) -> None:
        """Redraw the newest calls of the trace (the pane keeps ``max_live`` of them mounted anyway).

        ``turns`` are the user turns' (time, number, query), oldest first: each call goes under
        the turn it was made in, with the number the turn had live. Transcripts written before approval waits were recorded
        (no ``approval_requested``, no ``waited``) show the decision without a wait.
        """
        trace = self.trace
        order: dict[str, None] = {}
        for entry in entries:
            call_data = entry.get("call")
            if isinstance(call_data, dict):
                order[str(call_data.get("id", ""))] = None
        shown = set(list(order)[-trace.max_live :])
        times = [when for when, _, _ in turns or []]
        for entry in entries:
            call_data = entry.get("call")
            if not isinstance(call_data, dict) or str(call_data.get("id", "")) not in shown:
                continue
            call = _call(call_data)
            kind = entry.get("kind")
            index = bisect.bisect_right(times, _number(entry.get("ts"))) if times else 0
            if index:
                _, number, query = (turns or [])[index - 1]
                trace.begin_turn(number, query)
            if kind == "tool_call_started":
                await trace.started(call)
            elif kind == "approval_requested":
                await trace.pending(call)
            elif kind == "tool_call_finished":
                await trace.finished(
                    call, entry.get("status", ""), entry.get("result", ""), _number(entry.get("duration")), waited=_number(entry.get("waited"))
                )
            elif kind == "approval":
                decision = str(entry.get("decision", ""))
                label = Decision(decision).value if decision in Decision._value2member_map_ else decision
                waited = entry.get("waited")
                await trace.approval(call, label.replace("_", " "), bool(entry.get("automatic")), _number(waited) if waited is not None else 0.0)
        trace.interrupt_running()

    async def new(self) -> None:
        """``/new``: a fresh conversation in a new transcript."""
        await self.conversation.clear()
        if self.supported:
            from core.sessions import SessionError

            try:
                await asyncio.to_thread(self.engine.session.new)
            except SessionError as exc:
                await self._note(f"{exc}\nThis conversation is not being saved.", "error", "Session not saved")
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


def _number(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


def _call(data: dict[str, Any]) -> ToolCall:
    return ToolCall(id=str(data.get("id", "")), name=str(data.get("name", "tool")), parameters=dict(data.get("parameters") or {}))
