"""Session transcripts in the app: open or resume at start, redraw a loaded session, /new, /sessions, /export.

The Application owns the transcript (``start_session``, ``new_session``,
``record_context``, ``close_session``); this module puts what it loads back on
screen and reports problems as notes, never as tracebacks.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.types import Decision, ToolCall, ToolStatus
from tui.widgets.chat import NORMAL_STOPS, AssistantMessage, NoteMessage, ThinkingBlock, ToolCallLine, thinking_text
from tui.widgets.pasted import user_message

if TYPE_CHECKING:
    from tui.app import AssistantApp

log = logging.getLogger(__name__)

RESTORE_RECORDS = 60
"""Only the newest records are redrawn in the chat (the transcript view shows everything).

The chat keeps about this much mounted anyway (ChatView.max_nodes): building more
widgets only to prune them cost seconds and tens of MB on a 1,000-turn resume."""


def supported(app: "AssistantApp") -> bool:
    return hasattr(app.application, "start_session")


async def start(app: "AssistantApp", *, continue_session: bool = False, resume: str | None = None) -> None:
    """Open the session for this run (a new one, the latest, or ``resume``) and redraw it."""
    if not supported(app):
        return
    from core.sessions import SessionError

    application = app.application
    try:
        notices = await asyncio.to_thread(application.start_session, continue_latest=continue_session, resume=resume, fork_if_locked=True)
    except SessionError as exc:
        await app.chat.add(NoteMessage(f"{exc}\nStarting a new session instead.", kind="warning", title="Session not opened"))
        try:
            notices = await asyncio.to_thread(application.start_session, fork_if_locked=True)
        except SessionError as again:
            await app.chat.add(NoteMessage(f"{again}\nThis conversation is not being saved.", kind="error", title="Session not saved"))
            return
    for notice in notices:
        await app.chat.add(NoteMessage(notice, kind="info"))
    if application.loaded_session is not None:
        await restore(app, application.loaded_session)


async def restore(app: "AssistantApp", loaded: Any) -> None:
    """Redraw a loaded session: chat (newest records), trace and context pane."""
    records = [r for r in loaded.records if r.get("kind") in {"user", "assistant", "tool_result", "interruption", "error"}]
    calls: dict[str, ToolCall] = {}
    for record in loaded.records:
        for call in record.get("tool_calls") or []:
            calls[call["id"]] = _call(call)
    if len(records) > RESTORE_RECORDS:
        await app.chat.add(NoteMessage(f"{len(records) - RESTORE_RECORDS} earlier items are in the transcript (f2).", kind="info"))
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
        await app.chat.add(*widgets)
        for message, content, interrupted, stop_reason in finishes:
            if message.is_mounted:
                await message.finish(content, interrupted=interrupted, stop_reason=stop_reason)
        await app.chat.prune()
    app.transcript.extend({"role": r["kind"], "content": r.get("content") or r.get("message", "")} for r in records)
    turns = [(_number(r.get("ts")), str(r.get("content") or "")) for r in loaded.records if r.get("kind") == "user"]
    await _restore_trace(app, loaded.trace, turns)
    files = (loaded.context or {}).get("files") or []
    app.read_only = {f["path"] for f in files if f.get("read_only") and f.get("path") in app.pinned}
    app.refresh_context()
    await app.chat.add(NoteMessage(f"Resumed session {loaded.session_id}.", kind="info"))


async def _restore_trace(app: "AssistantApp", entries: list[dict[str, Any]], turns: list[tuple[float, str]] | None = None) -> None:
    """Redraw the newest calls of the trace (the pane keeps ``max_live`` of them mounted anyway).

    ``turns`` are the user turns' (time, query), oldest first: each call goes under the
    turn it was made in. Transcripts written before approval waits were recorded
    (no ``approval_requested``, no ``waited``) show the decision without a wait.
    """
    order: dict[str, None] = {}
    for entry in entries:
        call_data = entry.get("call")
        if isinstance(call_data, dict):
            order[str(call_data.get("id", ""))] = None
    shown = set(list(order)[-app.trace.max_live :])
    times = [when for when, _ in turns or []]
    for entry in entries:
        call_data = entry.get("call")
        if not isinstance(call_data, dict) or str(call_data.get("id", "")) not in shown:
            continue
        call = _call(call_data)
        kind = entry.get("kind")
        number = bisect.bisect_right(times, _number(entry.get("ts"))) if times else 0
        if number:
            app.trace.begin_turn(number, (turns or [])[number - 1][1])
        if kind == "tool_call_started":
            await app.trace.started(call)
        elif kind == "approval_requested":
            await app.trace.pending(call)
        elif kind == "tool_call_finished":
            await app.trace.finished(
                call, entry.get("status", ""), entry.get("result", ""), _number(entry.get("duration")), waited=_number(entry.get("waited"))
            )
        elif kind == "approval":
            decision = str(entry.get("decision", ""))
            label = Decision(decision).value if decision in Decision._value2member_map_ else decision
            waited = entry.get("waited")
            await app.trace.approval(call, label.replace("_", " "), bool(entry.get("automatic")), _number(waited) if waited is not None else 0.0)
    app.trace.interrupt_running()


def _number(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


def _call(data: dict[str, Any]) -> ToolCall:
    return ToolCall(id=str(data.get("id", "")), name=str(data.get("name", "tool")), parameters=dict(data.get("parameters") or {}))


def record_context(app: "AssistantApp") -> None:
    """Write the context pane to the transcript when it changed."""
    recorder = getattr(app.application, "record_context", None)
    if recorder is None or getattr(app.application, "session", None) is None:
        return
    files = [{"path": path, "read_only": path in app.read_only} for path in app.pinned]
    if files == app.recorded_context:
        return
    app.recorded_context = files
    try:
        for warning in recorder(files) or []:
            app.notify(warning.message, severity="warning")
    except Exception:  # recording the pane is best effort; the writer reports its own failures
        log.exception("could not record the context")


async def new(app: "AssistantApp") -> None:
    """``/new``: a fresh conversation in a new transcript."""
    await app.clear_conversation()
    if supported(app):
        from core.sessions import SessionError

        try:
            await asyncio.to_thread(app.application.new_session)
        except SessionError as exc:
            await app.chat.add(NoteMessage(f"{exc}\nThis conversation is not being saved.", kind="error", title="Session not saved"))
            return
        app.recorded_context = None
        record_context(app)
        await app.chat.add(NoteMessage(f"New session {app.application.session.id}.", kind="info"))
    else:
        await app.chat.add(NoteMessage("New conversation.", kind="info"))


async def switch(app: "AssistantApp", session_id: str) -> None:
    """Open another session of this project (from the /sessions picker)."""
    from core.sessions import SessionError

    await app.clear_conversation(keep_files=False)
    try:
        notices = await asyncio.to_thread(app.application.start_session, resume=session_id, fork_if_locked=True)
    except SessionError as exc:
        await app.chat.add(NoteMessage(str(exc), kind="error", title="Session not opened"))
        return
    for notice in notices:
        await app.chat.add(NoteMessage(notice, kind="info"))
    app.recorded_context = None
    if app.application.loaded_session is not None:
        await restore(app, app.application.loaded_session)


def list_sessions(app: "AssistantApp") -> list[Any]:
    """This project's sessions, newest first (blocking: run in a thread)."""
    store = getattr(app.application, "session_store", None)
    if store is None:
        from core.sessions import SessionStore

        store = SessionStore()
    return store.list(app.project_root)


async def export(app: "AssistantApp", target: str) -> None:
    """``/export [path]``: the conversation as Markdown."""
    from core.sessions import ExportError, export_markdown

    history = list(getattr(app.handler, "conversation_history", None) or [])
    if not history:
        await app.chat.add(NoteMessage("Nothing to export yet.", kind="info"))
        return
    session = getattr(app.application, "session", None)
    path = Path(target).expanduser() if target else export_path(getattr(session, "id", ""))
    if not path.is_absolute():
        path = app.project_root / path
    try:
        if not target:
            await asyncio.to_thread(path.parent.mkdir, mode=0o700, parents=True, exist_ok=True)
        written = await asyncio.to_thread(export_markdown, history, path)
    except OSError as exc:
        await app.chat.add(NoteMessage(f"Cannot create {path.parent}: {exc.strerror}. Give a path: /export <file>.", kind="error", title="Export failed"))
        return
    except ExportError as exc:
        await app.chat.add(NoteMessage(str(exc), kind="error", title="Export failed"))
        return
    where = "" if target else "\n/export <file> writes it elsewhere (a relative path is in the project)."
    await app.chat.add(NoteMessage(f"Exported {len(history)} messages to {written}.{where}", kind="info"))


def export_path(session_id: str) -> Path:
    """Where ``/export`` with no path writes: the state directory, never the project."""
    from core import paths

    name = f"assistant-tui-{session_id}.md" if session_id else "assistant-tui-conversation.md"
    return paths.state_dir() / "exports" / name


def transcript_markdown(app: "AssistantApp") -> str:
    """The whole conversation as Markdown (what /export writes), pruned messages included."""
    history = getattr(app.handler, "conversation_history", None)
    if history:
        from core.sessions import render_markdown

        return render_markdown(list(history))
    lines = [f"**{entry['role']}**: {entry['content']}" for entry in app.transcript]
    return "\n\n".join(lines) or "(nothing yet)"
