"""Recording a handler's event stream into a session transcript.

``SessionRecorder.record(event)`` is called with every event of
``PassthroughHandler.stream_query``; it writes the records each event completes
and turns a write failure into a ``Warning`` event for the UI (once per run of
failures, and once more when saving works again), so the app never crashes on a
full or read-only disk and the user always knows.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Iterable, Mapping

from core import events as ev
from core.sessions.errors import SessionWriteError
from core.sessions.writer import SessionWriter
from core.types import ToolCall, ToolStatus

log = logging.getLogger(__name__)

TRACE_RESULT_LIMIT = 2000
"""Characters of a tool result kept in its trace entry (the full result is in the tool_result record)."""


class SessionRecorder:
    """Writes the records a turn's events complete.

    Args:
        writer: The session's writer.
    """

    def __init__(self, writer: SessionWriter) -> None:
        self.writer = writer
        self._partial: list[str] = []  # text streamed since the last complete assistant message
        self._running: dict[str, ToolCall] = {}
        self._failing = False
        self._lock = threading.Lock()
        """One write at a time: the handler records from a worker thread, the app (context) from the loop."""

    def record(self, event: ev.Event) -> list[ev.Warning]:
        """Record what ``event`` completes; return warnings for the UI (usually none).

        - ``TurnStarted``: a ``user`` record (the query).
        - ``TextDelta``: nothing; the text is kept in case the turn is interrupted.
        - ``AssistantMessage``: an ``assistant`` record with its tool calls (and usage, error).
        - ``ResponseAbandoned``: a ``usage`` record (what an early-ended response reported).
        - ``Warning``: a ``warning`` record (a retry, the context almost full).
        - ``ToolCallStarted`` / ``ApprovalRequested`` / ``ApprovalRecorded``: a ``trace`` record.
        - ``ToolCallFinished``: a ``tool_result`` record and a ``trace`` record.
        - ``TurnFailed``: the partial assistant text (marked interrupted) if any, then an ``error`` record.
        - Other events: nothing.
        """
        match event:
            case ev.TurnStarted():
                self._partial.clear()
                return self._write(lambda: self.writer.user(event.query, event.context_parts, turn=event.turn))
            case ev.TextDelta():
                self._partial.append(event.text)
                return []
            case ev.AssistantMessage():
                self._partial.clear()
                calls = [call.as_dict() for call in event.tool_calls]
                return self._write(
                    lambda: self.writer.assistant(
                        event.content,
                        calls,
                        interrupted=event.interrupted,
                        usage=event.usage,
                        stop_reason=event.stop_reason if event.stop_reason not in ("end_turn", "tool_use") else "",
                        thinking=event.thinking,
                        error=event.error,
                    )
                )
            case ev.ResponseAbandoned():
                return self._write(lambda: self.writer.usage(event.usage)) if event.usage else []
            case ev.Warning():
                return self._write(lambda: self.writer.warning(event.code, event.message))
            case ev.ToolCallStarted():
                self._running[event.call.id] = event.call
                return self._write(lambda: self.writer.trace(ev.event_to_dict(event)))
            case ev.ApprovalRequested() | ev.ApprovalRecorded():
                return self._write(lambda: self.writer.trace(ev.event_to_dict(event)))
            case ev.ToolCallFinished():
                self._running.pop(event.call.id, None)
                warnings = self._write(
                    lambda: self.writer.tool_result(
                        event.call.id,
                        event.call.name,
                        event.result,
                        is_error=event.status != ToolStatus.SUCCESS,
                        status=event.status,
                        duration=event.duration,
                    )
                )
                return warnings + self._write(lambda: self.writer.trace(_finished_entry(event)))
            case ev.TurnFailed():
                warnings = self._save_partial()
                retracted = bool(((event.result or {}).get("metadata") or {}).get("retracted"))
                return warnings + self._write(lambda: self.writer.error(event.message, event.reason, retracted=retracted))
        return []

    def interrupted(self, reason: str = "user") -> list[ev.Warning]:
        """Record an interrupted turn (call it when the turn's task is cancelled, e.g. on Esc).

        Saves the text streamed so far as an interrupted assistant message, marks
        the tool calls still running as interrupted in the trace, and writes an
        ``interruption`` record. (Loading gives those calls a synthetic result.)
        """
        warnings = self._save_partial()
        for call in self._running.values():
            entry = {"kind": "tool_call_finished", "call": call.as_dict(), "status": "interrupted", "result": "", "duration": 0.0}
            warnings += self._write(lambda entry=entry: self.writer.trace(entry))
        self._running.clear()
        return warnings + self._write(lambda: self.writer.interruption(reason))

    def compaction(self, record: Mapping[str, Any], usage: Mapping[str, Any] | None = None) -> list[ev.Warning]:
        """Record that the model's view was compacted (``core.compaction``), then what the summary cost."""
        fields = {k: v for k, v in record.items() if k not in ("kind", "ts")}
        warnings = self._write(lambda: self.writer.append("compaction", **fields))
        return warnings + (self._write(lambda: self.writer.usage(usage)) if usage else [])

    def user(self, content: str) -> list[ev.Warning]:
        """A user message that starts no turn (``/run`` output added to the conversation)."""
        return self._write(lambda: self.writer.user(content, note=True))

    def context(self, files: Iterable[str | Mapping[str, Any]]) -> list[ev.Warning]:
        """Record the file-context pane (call it whenever the pinned files change)."""
        return self._write(lambda: self.writer.context(files))

    def flush(self) -> list[ev.Warning]:
        """Retry the records still waiting in memory (e.g. from a timer or before quitting)."""
        return self._write(lambda: self.writer.flush_pending() if self.writer.pending else None)

    def _save_partial(self) -> list[ev.Warning]:
        text = "".join(self._partial)
        self._partial.clear()
        if not text:
            return []
        return self._write(lambda: self.writer.assistant(text, interrupted=True))

    def _write(self, action: Any) -> list[ev.Warning]:
        with self._lock:
            return self._write_locked(action)

    def _write_locked(self, action: Any) -> list[ev.Warning]:
        backlog = len(self.writer.pending)
        try:
            action()
        except SessionWriteError as exc:
            if self._failing:
                return []
            self._failing = True
            return [ev.Warning(code="session_not_saved", message=str(exc))]
        if self._failing:
            self._failing = False
            return [
                ev.Warning(
                    code="session_saved",
                    message=f"The session is being saved again; {backlog} record(s) kept in memory were written.",
                )
            ]
        return []


def _finished_entry(event: ev.ToolCallFinished) -> dict[str, Any]:
    entry = ev.event_to_dict(event)
    result = event.result
    if len(result) > TRACE_RESULT_LIMIT:
        entry["result"] = result[:TRACE_RESULT_LIMIT]
        entry["result_truncated"] = True
        entry["result_chars"] = len(result)
    return entry
