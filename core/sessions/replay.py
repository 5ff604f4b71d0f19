"""A recorded conversation as the events its live turns streamed, for every view that redraws it.

A resumed session in the TUI, the Markdown export (and f2) and an editor's
``session/load`` all read a conversation through :func:`replay`: the history, its
incidents (errors, warnings, interruptions at their places) and, when the transcript
was read back, its trace (approvals, statuses, run times). What comes out is what
the handler streamed live (``core.events``: ``TurnStarted`` with the stored turn
number, ``ThinkingDelta``, ``AssistantMessage``, the tool calls' approval, start and
finish, ``Warning``, ``TurnFailed``), plus the two things no event carries: a
:class:`Note` (``/run`` output, a ``/task`` result: in the conversation, not a turn)
and an :class:`Interrupted` turn (live, the consumer's own cancel). Each view then
applies them with the code that draws a live turn (Toad loads a session by replaying
its updates through its live path), so no view words anything on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Literal, Mapping, Sequence, Union

from core import events as ev
from core.turns import NOTE_PREFIXES
from core.types import Decision, Message, ToolCall, ToolStatus

INTERRUPTED_PREFIX = "interrupted:"
"""How the result the loader gives a call left without one begins (``core.sessions.load.INTERRUPTED_RESULT``)."""


@dataclass(frozen=True, kw_only=True)
class Note:
    """A user message that was no turn: ``/run`` output or a ``/task`` result added to the conversation."""

    kind: Literal["note"] = "note"
    text: str


@dataclass(frozen=True, kw_only=True)
class Interrupted:
    """The turn was interrupted (live: the consumer cancelled it); ``reason`` as recorded (``user``)."""

    kind: Literal["interrupted"] = "interrupted"
    reason: str = "user"


Replayed = Union[ev.Event, Note, Interrupted]


def replay(
    messages: Sequence[Message],
    incidents: Iterable[Mapping[str, Any]] = (),
    trace: Iterable[Mapping[str, Any]] = (),
) -> Iterator[Replayed]:
    """The events that drew ``messages`` live, in order, incidents at their places.

    Args:
        messages: The conversation (``LoadedSession.messages`` or ``Session.history``).
        incidents: Errors, warnings and interruptions, each with ``at`` (``core.sessions.load.Incident``);
            a retracted turn's first one carries its ``query``, replayed as that turn's start.
        trace: The trace entries of the transcript (``LoadedSession.trace``): each call's approval,
            start and finish as recorded; without them a call's status comes from its result.
    """
    by_call: dict[str, list[Mapping[str, Any]]] = {}
    for entry in trace:
        call = entry.get("call")
        if isinstance(call, dict):
            by_call.setdefault(str(call.get("id", "")), []).append(entry)
    results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool"}
    called = _call_ids(messages)
    pending = sorted(incidents, key=lambda incident: int(incident.get("at") or 0))
    turn = 0
    retracted = False  # the incidents under a question that left the history (its turn failed unanswered)
    for index, message in enumerate(messages):
        while pending and int(pending[0].get("at") or 0) <= index:
            incident = pending.pop(0)
            retracted = retracted or bool(incident.get("query"))
            yield from _incident(incident, turn, retracted)
        retracted = False
        role = message.get("role")
        if role == "user":
            number = message.get("turn")
            content = str(message.get("content") or "")
            if isinstance(number, int) and not isinstance(number, bool) and number > 0:
                turn = number
                yield ev.TurnStarted(query=content, subtask_id="", turn=number)
            elif content.startswith(NOTE_PREFIXES):
                yield Note(text=content)
            else:  # a history that does not number its turns (an embedder's)
                yield ev.TurnStarted(query=content, subtask_id="")
        elif role == "assistant":
            yield from _assistant(message, results, by_call)
        elif role == "tool" and message.get("tool_call_id") not in called:
            call = ToolCall(id=str(message.get("tool_call_id") or ""), name=str(message.get("name") or "tool"))
            yield from _tool(call, message, by_call.get(call.id, []))
    for incident in pending:
        retracted = retracted or bool(incident.get("query"))
        yield from _incident(incident, turn, retracted)


def _incident(incident: Mapping[str, Any], turn: int, retracted: bool) -> Iterator[Replayed]:
    kind = incident.get("kind")
    if incident.get("query"):  # a turn that failed unanswered: its question left the history, its number did not
        yield ev.TurnStarted(query=str(incident["query"]), subtask_id="", turn=turn + 1)
    if kind == "error":
        yield ev.TurnFailed(
            reason=str(incident.get("reason") or ""), message=str(incident.get("message") or ""), result={"metadata": {"retracted": retracted}}
        )
    elif kind == "warning":
        yield ev.Warning(code=str(incident.get("code") or ""), message=str(incident.get("message") or ""))
    elif kind == "interruption":
        yield Interrupted(reason=str(incident.get("reason") or "user"))


def _assistant(message: Message, results: Mapping[Any, Message], by_call: Mapping[str, list[Mapping[str, Any]]]) -> Iterator[Replayed]:
    thinking = tuple(block for block in message.get("thinking") or [] if isinstance(block, dict))
    text = thinking_text(thinking)
    if text:
        yield ev.ThinkingDelta(text=text)
    calls = tuple(
        ToolCall(id=str(raw.get("id", "")), name=str(raw.get("name", "tool")), parameters=dict(raw.get("parameters") or {}))
        for raw in message.get("tool_calls") or []
        if isinstance(raw, dict)
    )
    error = message.get("error")  # type: ignore[typeddict-item]
    yield ev.AssistantMessage(
        content=str(message.get("content") or ""),
        tool_calls=calls,
        interrupted=bool(message.get("interrupted")),
        stop_reason=str(message.get("stop_reason") or ""),
        thinking=thinking,
        error=dict(error) if isinstance(error, dict) else {},
    )
    for call in calls:
        yield from _tool(call, results.get(call.id), by_call.get(call.id, []))


def _tool(call: ToolCall, result: Message | None, entries: list[Mapping[str, Any]]) -> Iterator[Replayed]:
    """A call's approval, start and finish as the trace recorded them (else started and finished as its result says)."""
    content = str((result or {}).get("content") or "")
    finished: Mapping[str, Any] | None = None
    for entry in entries:
        kind = entry.get("kind")
        if kind == "approval_requested":
            yield ev.ApprovalRequested(call=call, title=str(entry.get("title") or ""))
        elif kind == "approval":
            yield ev.ApprovalRecorded(
                call=call, decision=_decision(entry.get("decision")), automatic=bool(entry.get("automatic")), waited=_number(entry.get("waited"))
            )
        elif kind == "tool_call_started":
            yield ev.ToolCallStarted(call=call, started_at=_number(entry.get("started_at")))
        elif kind == "tool_call_finished":
            finished = entry
    if finished is None and not entries:
        yield ev.ToolCallStarted(call=call, started_at=0.0)
    status = str((finished or {}).get("status") or "") or _status(result)
    metadata = (finished or {}).get("metadata")
    yield ev.ToolCallFinished(
        call=call,
        status=status,
        result=content if result is not None else str((finished or {}).get("result") or ""),
        duration=_number((finished or {}).get("duration")),
        metadata=dict(metadata) if isinstance(metadata, dict) else {},
        waited=_number((finished or {}).get("waited")),
    )


def _status(result: Message | None) -> str:
    """A call's status from its result alone (no trace): what the history can tell."""
    if result is None:
        return ToolStatus.INTERRUPTED
    content = str(result.get("content") or "")
    if result.get("is_error") and content.startswith(INTERRUPTED_PREFIX):
        return ToolStatus.INTERRUPTED
    if result.get("is_error") and content.startswith("Denied: "):
        return ToolStatus.DENIED
    return ToolStatus.ERROR if result.get("is_error") else ToolStatus.SUCCESS


def thinking_text(blocks: Any, *, redacted: bool = False) -> str:
    """The readable reasoning of an assistant message's ``thinking`` blocks (as streamed live: a redacted
    block streams nothing; ``redacted``: it says so, for a record of the message)."""
    if isinstance(blocks, str):
        return blocks
    parts = []
    for block in blocks or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "redacted_thinking":
            parts.append("(redacted by the provider)" if redacted else "")
        elif isinstance(block.get("thinking") or block.get("text"), str):
            parts.append(str(block.get("thinking") or block.get("text")))
    return "\n\n".join(part for part in parts if part)


def _decision(value: Any) -> Decision:
    try:
        return Decision(str(value))
    except ValueError:
        return Decision.DENY


def _number(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


def _call_ids(messages: Sequence[Message]) -> set[str]:
    return {str(call.get("id")) for m in messages for call in m.get("tool_calls") or [] if isinstance(call, dict)}
