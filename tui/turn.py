"""Rendering one turn: handler events in, chat, trace and status updates out."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from rich.syntax import Syntax
from textual.widgets import Static

from core import events as ev
from tui import runtime
from tui.format import truncate_lines
from tui.widgets.chat import AssistantMessage, NoteMessage, ToolCallLine

if TYPE_CHECKING:
    from tui.app import AssistantApp

log = logging.getLogger(__name__)

DIFF_LINES = 60
_WARNING_TITLES = {"context_80": "Context almost full", "retry": "Retrying", "session_not_saved": "Session not saved"}


class TurnRenderer:
    """Applies one turn's events to the widgets, in order, on the event loop."""

    def __init__(self, app: "AssistantApp", query: str) -> None:
        self.app = app
        self.query = query
        self.chat = app.chat
        self.trace = app.trace
        self.status = app.status
        self.current: AssistantMessage | None = None
        self.answered = False
        """True once any assistant text or tool call appeared (the prompt need not be restored)."""
        self.tool_lines: dict[str, ToolCallLine] = {}
        self.ended = False

    async def _message(self) -> AssistantMessage:
        if self.current is None:
            self.current = AssistantMessage()
            await self.chat.add(self.current)
        return self.current

    async def _close_current(self, content: str | None = None, *, interrupted: bool = False) -> None:
        if self.current is not None:
            message, self.current = self.current, None
            await message.finish(content, interrupted=interrupted)
            self.app.record("assistant", message.text, interrupted=message.interrupted)
            await self.chat.prune()

    async def handle(self, event: ev.Event) -> None:
        """Apply one event."""
        match event:
            case ev.TurnStarted(relevant_files=files):
                self.status.set_state("thinking…")
                self.app.show_suggestions(list(files))
            case ev.TextDelta(text=text):
                self.answered = True
                self.status.set_state("streaming…")
                await (await self._message()).append(text)
            case ev.AssistantMessage(content=content, interrupted=interrupted):
                if self.current is None and content:
                    await self._message()
                if content or self.current is not None:
                    self.answered = True
                await self._close_current(content if content else None, interrupted=interrupted)
            case ev.ToolCallStarted(call=call):
                self.answered = True
                await self._close_current()
                line = ToolCallLine(call)
                self.tool_lines[call.id] = line
                await self.chat.add(line)
                await self.trace.started(call)
                self.status.set_state(f"running {call.name}…")
                self.app.record("tool_call", call.name, parameters=call.parameters, id=call.id)
            case ev.ToolCallFinished(call=call, status=status, result=result, duration=duration, metadata=metadata):
                line = self.tool_lines.get(call.id)
                if line is None:
                    line = self.tool_lines[call.id] = ToolCallLine(call)
                    await self.chat.add(line)
                line.set_status(status, duration)
                await self.trace.finished(call, status, result, duration, metadata)
                self.status.set_state("thinking…")
                self.app.record("tool_result", result, name=call.name, status=status, id=call.id)
                await self._show_edits(call.name, metadata if isinstance(metadata, dict) else {})
            case ev.ApprovalRecorded(call=call, decision=decision, automatic=automatic):
                await self.trace.approval(call, decision.value.replace("_", " "), automatic)
            case ev.Warning(code=code, message=message):
                await self.chat.add(NoteMessage(message, kind="warning", title=_WARNING_TITLES.get(code, "Warning")))
                self.app.record("warning", message, code=code)
            case ev.MetricsUpdated(metrics=metrics):
                self.status.update_metrics(metrics)
            case ev.TurnCompleted(result=result):
                self.ended = True
                await self._close_current()
                self._final_metrics(result)
                runtime.release_free_memory()
            case ev.TurnFailed(reason=reason, message=message, result=result):
                self.ended = True
                await self._close_current()
                self._final_metrics(result)
                runtime.release_free_memory()
                await self.show_error(reason, message)
            case _:
                log.debug("ignoring event %r", event)

    async def _show_edits(self, tool: str, metadata: dict[str, Any]) -> None:
        """aider's edits: which files changed (a note after an interactive session) and the diff."""
        edited = metadata.get("edited_files")
        if tool == "aiderInteractive" and isinstance(edited, list):
            changed = ", ".join(edited) if edited else "no files changed"
            await self.chat.add(NoteMessage(f"Back from aider: {changed}.", kind="info"))
        diff = metadata.get("diff")
        if isinstance(diff, str) and diff.strip():
            shown, cut = truncate_lines(diff, DIFF_LINES)
            if cut:
                shown += f"\n… {cut} more lines (ctrl+t, then v on the call, shows the whole result)"
            await self.chat.add(Static(Syntax(shown, "diff", theme="ansi_dark", word_wrap=True), classes="diff"))

    def _final_metrics(self, result: Any) -> None:
        metadata = result.get("metadata") if isinstance(result, dict) else None
        metrics = (metadata or {}).get("resource_metrics")
        if isinstance(metrics, dict):
            self.status.update_metrics(metrics)

    async def show_error(self, reason: str, message: str) -> None:
        """An error note in the chat; the prompt comes back when nothing was answered."""
        title = {"llm_error": "The model call failed", "resource_exhaustion": "Limit reached", "tool_execution_error": "A tool failed"}.get(reason, "The turn failed")
        body = message or reason
        if not self.answered:
            body += "\nYour message is back in the prompt: press Enter to send it again."
            self.app.prompt.restore(self.query)
        await self.chat.add(NoteMessage(body, kind="error", title=title))
        self.app.record("error", message, reason=reason)

    async def interrupted(self) -> None:
        """The user cancelled the turn: keep what streamed, marked interrupted."""
        self.ended = True
        if self.current is not None:
            await self._close_current(interrupted=True)
        else:
            message = AssistantMessage()
            await self.chat.add(message)
            await message.finish(interrupted=True)
            self.app.record("assistant", "", interrupted=True)
        self.trace.interrupt_running()
        for line in self.tool_lines.values():
            if line.status == "running":
                line.set_status("interrupted", None)
