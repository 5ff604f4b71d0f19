"""Rendering one turn: handler events in, chat, trace and status updates out."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from textual.message import Message
from textual.widgets import Static

from core import narration
from core.types import Decision, ToolCall
from tui import runtime
from tui.format import truncate_lines
from tui.widgets.chat import NORMAL_STOPS, AssistantMessage, NoteMessage, ThinkingBlock, ToolCallLine
from tui.widgets.status import STREAMING, THINKING, WAITING

if TYPE_CHECKING:
    from core import events as ev
    from tui.widgets.chat import ChatView
    from tui.widgets.status import StatusLine
    from tui.widgets.trace import ToolTrace

log = logging.getLogger(__name__)

DIFF_LINES = 60


@dataclass(frozen=True, kw_only=True)
class TurnView:
    """What a turn writes to: the chat, the trace and the status line; what it reports goes up as messages."""

    chat: "ChatView"
    trace: "ToolTrace"
    status: "StatusLine"
    post: Callable[[Message], object]
    """Posts the turn's messages (:class:`TurnRenderer.QueryReturned`, :class:`TurnRenderer.FilesSuggested`) to the app."""
    metrics: Callable[[], "dict[str, Any] | None"]
    """The handler's resource metrics (None when unavailable)."""
    replaying: bool = False
    """Redrawing a recorded session (``core.sessions.replay``): what happened is shown as it was live,
    but nothing is asked of the user now (no query goes back to the prompt, no files are offered)."""


class TurnRenderer:
    """Applies one turn's events to the widgets, in order, on the event loop.

    What belongs to other parts of the app is posted upward as a message instead:
    the query to send again, the files found relevant.
    """

    class QueryReturned(Message):
        """Nothing was answered (or the answer is incomplete): the query goes back to the prompt to be sent again."""

        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    class FilesSuggested(Message):
        """The memory system found these files relevant to the query (offered, not picked)."""

        def __init__(self, paths: list[str]) -> None:
            super().__init__()
            self.paths = paths

    def __init__(self, view: TurnView, query: str) -> None:
        self.view = view
        self.query = query
        self.chat = view.chat
        self.trace = view.trace
        self.status = view.status
        self.current: AssistantMessage | None = None
        self.thinking: ThinkingBlock | None = None
        self.answered = False
        """True once any assistant text or tool call appeared (the prompt need not be restored)."""
        self.tool_lines: dict[str, ToolCallLine] = {}
        self.ended = False
        self.calls_started = 0
        """Tool calls started in this turn: the status line counts a call when it starts."""
        self.cut = False
        """The last message was closed as interrupted already (a replayed partial answer): an interruption adds no other."""
        self.paused = ""
        """The answer so far of a response a server tool paused (``pause_turn``): the model goes on in the same message."""

    async def _message(self) -> AssistantMessage:
        if self.current is None:
            self.current = AssistantMessage()
            await self.chat.add(self.current)
        return self.current

    async def _close_current(self, content: str | None = None, *, interrupted: bool = False, stop_reason: str = "") -> None:
        self._close_thinking()
        self.paused = ""
        if self.current is not None:
            message, self.current = self.current, None
            await message.finish(content, interrupted=interrupted, stop_reason=stop_reason)
            await self.chat.prune()

    def _close_thinking(self) -> None:
        if self.thinking is not None:
            block, self.thinking = self.thinking, None
            block.finish()

    async def handle(self, event: ev.Event) -> None:
        """Apply one event."""
        from core import events as ev  # the events' dataclasses are not on the path to the first frame

        match event:
            case ev.TurnStarted(relevant_files=files, turn=turn):
                number = turn or self._user_turn()
                self.trace.begin_turn(number, self.query)
                self.status.update_metrics({"user_turns": number, "tool_calls_this_turn": 0})
                self.status.set_state(WAITING)
                if not self.view.replaying:
                    self.view.post(self.FilesSuggested(list(files)))
            case ev.ThinkingDelta(text=text):
                if self.thinking is None:
                    self.thinking = ThinkingBlock()
                    if self.paused and self.current is not None:  # the continuation's reasoning goes above its one answer
                        await self.chat.mount(self.thinking, before=self.current)
                    else:
                        await self.chat.add(self.thinking)
                self.thinking.append(text)
                self.status.set_state(THINKING)
            case ev.TextDelta(text=text):
                self.answered = True
                self._close_thinking()
                self.status.set_state(STREAMING)
                await (await self._message()).append(text)
            case ev.AssistantMessage(content=content, interrupted=False, stop_reason="pause_turn", tool_calls=()):
                await self._pause(content)
            case ev.AssistantMessage(content=content, interrupted=interrupted, stop_reason=stop_reason):
                self.cut = interrupted
                content = self.paused + content
                if self.current is None and (content or stop_reason not in NORMAL_STOPS):
                    await self._message()
                if content or self.current is not None:
                    self.answered = True
                await self._close_current(content if content else None, interrupted=interrupted, stop_reason=stop_reason)
            case ev.ToolCallStarted(call=call):
                self.answered = True
                await self._close_current()
                line = ToolCallLine(call)
                self.tool_lines[call.id] = line
                await self.chat.add(line)
                await self.trace.started(call)
                self.calls_started += 1
                self.status.update_metrics({"tool_calls_this_turn": self.calls_started})
                self.status.set_state(f"running {call.name}…")
            case ev.ToolOutputChunk(call_id=call_id, text=text):
                self.trace.output(call_id, text)
            case ev.ToolCallFinished(call=call, status=status, result=result, duration=duration, metadata=metadata, waited=waited):
                line = await self._line(call)
                line.set_status(status, duration, waited)
                await self.trace.finished(call, status, result, duration, metadata, waited=waited)
                self.status.set_state(WAITING)  # the result goes back to the model (the next call, if any, says so)
                await self._show_edits(call.name, metadata if isinstance(metadata, dict) else {})
            case ev.ApprovalRequested(call=call):
                await self.trace.pending(call)
                (await self._line(call)).set_status("pending")
                self.status.set_state(f"waiting for your approval of {call.name}…")
            case ev.ApprovalRecorded(call=call, decision=decision, automatic=automatic, waited=waited):
                await self.trace.approval(call, decision.value.replace("_", " "), automatic, waited)
                if decision is not Decision.DENY:
                    (await self._line(call)).set_status("running")
                    self.status.set_state(f"running {call.name}…")
                else:
                    self.status.set_state(WAITING)  # the refusal goes back to the model
            case ev.Warning(code=code, message=message):
                await self.chat.add(NoteMessage(message, kind="warning", title=narration.warning_title(code)))
            case ev.MetricsUpdated(metrics=metrics):
                self.status.update_metrics(self._counted(metrics))
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
                metadata = result.get("metadata") if isinstance(result, dict) else None
                await self.show_error(reason, message, cut_short=bool((metadata or {}).get("characters")))
            case _:
                log.debug("ignoring event %r", event)

    async def _pause(self, content: str) -> None:
        """A server tool paused the response (``pause_turn``): the message stays open and the continuation
        is appended to it, so the paused and continued parts read as one answer (live and replayed)."""
        self.cut = False
        self._close_thinking()
        paused = self.paused + content
        if paused and self.current is None:
            await self._message()
        if self.current is not None:
            self.answered = True
            if paused.startswith(self.current.text) and len(paused) > len(self.current.text):
                await self.current.append(paused[len(self.current.text) :])  # replayed: nothing streamed
        self.paused = paused

    async def _line(self, call: ToolCall) -> ToolCallLine:
        """The chat's line for ``call`` (added if the call never started, e.g. stopped by the guard)."""
        line = self.tool_lines.get(call.id)
        if line is None:
            line = self.tool_lines[call.id] = ToolCallLine(call)
            await self.chat.add(line)
        return line

    def _user_turn(self) -> int:
        """The number of the user turn starting now, for a handler whose TurnStarted has none: its metrics'
        (0 when it counts none: the turn is shown unnumbered; a figure is never read back from the status line)."""
        try:
            return int((self.view.metrics() or {}).get("user_turns") or 0)
        except (TypeError, ValueError):  # metrics are informative only
            return 0

    def _counted(self, metrics: dict[str, Any]) -> dict[str, Any]:
        """``metrics`` with the tool-call count never below the calls already started."""
        counted = int(metrics.get("tool_calls_this_turn") or 0)
        return {**metrics, "tool_calls_this_turn": max(counted, self.calls_started)} if counted < self.calls_started else metrics

    async def _show_edits(self, tool: str, metadata: dict[str, Any]) -> None:
        """aider's edits: which files changed (a note after an interactive session) and the diff."""
        edited = metadata.get("edited_files")
        if tool == "aiderInteractive" and isinstance(edited, list):
            changed = ", ".join(edited) if edited else "no files changed"
            await self.chat.add(NoteMessage(f"Back from aider: {changed}.", kind="info"))
        if isinstance(metadata.get("edit_summary"), str):  # editFile: one line (the diff is in the trace)
            await self.chat.add(NoteMessage(metadata["edit_summary"], kind="info"))
        diff = metadata.get("diff")
        if isinstance(diff, str) and diff.strip():
            shown, cut = truncate_lines(diff, DIFF_LINES)
            if cut:
                shown += f"\n… {cut} more lines (ctrl+t, then v on the call, shows the whole result)"
            from rich.syntax import Syntax  # loads pygments' styles: not on the path to the first frame

            await self.chat.add(Static(Syntax(shown, "diff", theme="ansi_dark", word_wrap=True), classes="diff"))

    def _final_metrics(self, result: Any) -> None:
        metadata = result.get("metadata") if isinstance(result, dict) else None
        metrics = (metadata or {}).get("resource_metrics")
        if isinstance(metrics, dict):
            self.status.update_metrics(self._counted(metrics))

    async def show_error(self, reason: str, message: str, *, cut_short: bool = False) -> None:
        """An error note in the chat; the prompt comes back when nothing was answered or the answer was cut short.

        ``cut_short``: an answer had begun and the connection or the provider's error ended it.
        """
        title = narration.error_title(reason)
        body = message or reason
        if self.view.replaying:
            pass  # the prompt holds what the user types now
        elif not self.answered or cut_short or reason == "incomplete_response":
            body += "\nYour message is back in the prompt: press Enter to send it again."
            self.view.post(self.QueryReturned(self.query))
        await self.chat.add(NoteMessage(body, kind="error", title=title))

    async def interrupted(self, reason: str = "user") -> None:
        """The turn was cancelled (``reason`` as recorded): keep what streamed, marked interrupted, and say so."""
        self.ended = True
        self._close_thinking()
        if self.current is not None:
            await self._close_current(interrupted=True)
        elif not self.cut:
            message = AssistantMessage()
            await self.chat.add(message)
            await message.finish(interrupted=True)
        self.trace.interrupt_running()
        for line in self.tool_lines.values():
            if line.status in ("running", "pending"):
                line.set_status("interrupted", None)
        advice = "" if self.view.replaying else " The partial answer is kept; send your next message."
        await self.chat.add(NoteMessage(narration.interruption_text(reason) + advice, kind="info"))
