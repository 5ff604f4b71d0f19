"""Typed events: what a provider's stream yields and what a handler streams while a turn runs.

One vocabulary for both. A provider's ``stream_message`` yields :data:`StreamItem`:
:class:`TextDelta` and :class:`ThinkingDelta` (which the tool loop passes on to its
consumers as they are), :class:`ResponseStarted`, :class:`ToolCallReady` and one
:class:`ResponseComplete` (which the loop consumes). The UI and the headless CLI
consume :data:`Event` from ``PassthroughHandler.stream_query``.
Each is a small frozen dataclass with a ``kind`` literal, so consumers can
``match`` on the class or dispatch on ``kind`` (the JSONL output does the latter).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from core.types import Decision, TaskResult, ToolCall, ToolStatus


@dataclass(frozen=True, kw_only=True)
class TurnStarted:
    """A user turn began: the query as typed and the subtask it belongs to."""

    kind: Literal["turn_started"] = "turn_started"
    query: str
    subtask_id: str
    turn: int = 0
    """The user-turn number (:mod:`core.turns`): the one the status line, the trace, ``/cost``,
    the export and a resume show for this turn (0 from a handler that does not number turns)."""
    relevant_files: tuple[str, ...] = ()
    context_parts: tuple[dict[str, Any], ...] = ()
    """What the turn's user message carries besides the query (``core.turn_context``): new or
    changed picked files, suggestions, the time, mode instructions."""


@dataclass(frozen=True, kw_only=True)
class TextDelta:
    """A fragment of assistant text, as it streams."""

    kind: Literal["text_delta"] = "text_delta"
    text: str


@dataclass(frozen=True, kw_only=True)
class ThinkingDelta:
    """A fragment of the model's visible reasoning (Anthropic thinking, ``reasoning_content``)."""

    kind: Literal["thinking_delta"] = "thinking_delta"
    text: str


@dataclass(frozen=True, kw_only=True)
class ResponseStarted:
    """A provider began its response (billed from here), with the usage it reported so far.

    Anthropic reports the input in ``message_start``; an OpenAI-compatible endpoint only
    at the end (``usage`` empty here). Yielded again whenever the provider reports more
    usage before the end, so a response that ends before ResponseComplete is booked
    with the latest usage reported, as a lower bound.
    """

    kind: Literal["started"] = "started"
    usage: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ToolCallReady:
    """A provider's tool call whose arguments are complete (never a partial one)."""

    kind: Literal["tool_call"] = "tool_call"
    call: ToolCall
    error: str = ""
    """Set when the arguments were not valid JSON; the call must not run."""


@dataclass(frozen=True, kw_only=True)
class ResponseComplete:
    """The end of one model response: only yielded when the provider said the response was complete.

    ``stop_reason`` is normalised to one vocabulary (``core.providers.base.STOP_REASONS``):
    OpenAI's ``stop`` is ``end_turn``, ``tool_calls`` is ``tool_use``, ``length`` is ``max_tokens``.
    ``thinking`` holds what the provider asks to get back with the message, as received:
    Anthropic ``thinking`` blocks with their ``signature`` and ``redacted_thinking``, and
    ``{"type": "content_blocks", "blocks"}`` (every content block, in order) when server
    tools' blocks are among them; an OpenAI-compatible server's reasoning text as
    ``{"type": "reasoning", "field", "text"}``, OpenRouter's ``reasoning_details`` as
    ``{"type": "reasoning_details", "details"}``, and a tool call's ``extra_content``
    (Gemini's thought signature) as ``{"type": "tool_call_extra", "id", "extra_content"}``.
    """

    kind: Literal["complete"] = "complete"
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    thinking: tuple[dict[str, Any], ...] = ()


StreamItem = Union[ResponseStarted, TextDelta, ThinkingDelta, ToolCallReady, ResponseComplete]
"""What a provider's ``stream_message`` yields."""


@dataclass(frozen=True, kw_only=True)
class AssistantMessage:
    """One complete assistant message (intermediate or final) of the turn.

    ``interrupted`` marks a partial message (cancelled, or the stream ended before the
    provider said it was complete). ``stop_reason`` is the provider's own, normalised:
    ``end_turn``, ``tool_use``, ``max_tokens``, ``refusal``, ``content_filter``, ...
    (empty when unknown), or ``incomplete`` for an interrupted message whose stream
    closed before the provider said it was complete (the turn then fails with reason
    ``incomplete_response``), or ``error`` for an interrupted message the provider cut
    with an error mid-stream (an ``overloaded_error`` event after some text): ``error``
    then holds its ``kind`` and ``message`` and the turn fails with reason ``llm_error``.
    After ``max_tokens`` the last tool call of the message was
    cut short: it is not run (its ToolCallFinished has status ``not_run`` and
    ``metadata["reason"] == "max_tokens"``).

    ``thinking`` holds the message's reasoning blocks exactly as the provider sent
    them (Anthropic ``{"type": "thinking", "thinking", "signature"}`` and
    ``{"type": "redacted_thinking", "data"}``; OpenAI-compatible
    ``{"type": "reasoning", "field", "text"}``), already streamed as ThinkingDelta.
    """

    kind: Literal["assistant_message"] = "assistant_message"
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    interrupted: bool = False
    final: bool = False
    stop_reason: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    """The provider's usage of this response (``core.usage.Usage`` fields, plus ``model`` and ``turn``).

    ``reported: False`` marks the usage of a response that ended before the provider's
    final report: what it had reported by then, a lower bound."""
    thinking: tuple[dict[str, Any], ...] = ()
    error: dict[str, str] = field(default_factory=dict)
    """For ``stop_reason == "error"``: the provider's error, ``{"kind", "message"}`` (e.g. ``overloaded``)."""


@dataclass(frozen=True, kw_only=True)
class ResponseAbandoned:
    """A response ended early and left no message (a retried attempt, a failure or Esc before any text).

    ``usage`` is what the provider had reported by then (Anthropic's input from
    ``message_start``, maybe nothing): booked as a lower bound (``reported: False``),
    shown in the totals as "at least", and saved in the transcript.
    """

    kind: Literal["response_abandoned"] = "response_abandoned"
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ToolCallStarted:
    """A tool call began running."""

    kind: Literal["tool_call_started"] = "tool_call_started"
    call: ToolCall
    started_at: float


@dataclass(frozen=True, kw_only=True)
class ToolOutputChunk:
    """Output of a running tool call as it arrives (a command's stdout/stderr)."""

    kind: Literal["tool_output"] = "tool_output"
    call_id: str
    text: str
    stream: Literal["stdout", "stderr"] = "stdout"


TOOL_STATUSES = tuple(status.value for status in ToolStatus)
"""Every ``ToolCallFinished.status`` (defined, with their meanings, by :class:`core.types.ToolStatus`)."""


@dataclass(frozen=True, kw_only=True)
class ToolCallFinished:
    """A tool call ended; ``status`` is one of :data:`TOOL_STATUSES`.

    ``duration`` is the time the call ran, without ``waited``: the seconds spent
    waiting for the user's approval (0.0 when nobody was asked).
    """

    kind: Literal["tool_call_finished"] = "tool_call_finished"
    call: ToolCall
    status: str
    result: str
    duration: float
    metadata: dict[str, Any] = field(default_factory=dict)
    waited: float = 0.0


@dataclass(frozen=True, kw_only=True)
class ApprovalRequested:
    """A tool call waits for the user's answer (an approval prompt is open)."""

    kind: Literal["approval_requested"] = "approval_requested"
    call: ToolCall
    title: str = ""


@dataclass(frozen=True, kw_only=True)
class ApprovalRecorded:
    """The user's (or the approval mode's) decision on a tool call.

    ``waited`` is how long the user took to answer (0.0 for an automatic decision);
    an allowed call runs from this moment.
    """

    kind: Literal["approval"] = "approval"
    call: ToolCall
    decision: Decision
    automatic: bool = False
    waited: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Warning:  # noqa: A001 - the event's name in the public vocabulary
    """Something the user should know that does not end the turn."""

    kind: Literal["warning"] = "warning"
    code: str
    message: str


@dataclass(frozen=True, kw_only=True)
class MetricsUpdated:
    """Resource metrics after a model response or tool call (drives the status line)."""

    kind: Literal["metrics"] = "metrics"
    metrics: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class TurnCompleted:
    """The turn ended with a final answer."""

    kind: Literal["turn_completed"] = "turn_completed"
    result: TaskResult


@dataclass(frozen=True, kw_only=True)
class TurnFailed:
    """The turn ended without an answer.

    ``reason`` is e.g. ``llm_error``, ``resource_exhaustion``, or ``incomplete_response``
    (the stream closed before the provider said the answer was complete; ``message``
    says how many characters arrived). ``result["metadata"]["retracted"]`` is True when
    nothing was answered and the user's message was taken back out of the history, so
    that sending the same text again makes exactly the request a first send would have.
    """

    kind: Literal["turn_failed"] = "turn_failed"
    reason: str
    message: str
    result: TaskResult


Event = Union[
    TurnStarted,
    TextDelta,
    ThinkingDelta,
    AssistantMessage,
    ResponseAbandoned,
    ToolCallStarted,
    ToolOutputChunk,
    ToolCallFinished,
    ApprovalRequested,
    ApprovalRecorded,
    Warning,
    MetricsUpdated,
    TurnCompleted,
    TurnFailed,
]


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready dict of an event (for ``--output-format jsonl`` and transcripts)."""
    data = dataclasses.asdict(event)
    if isinstance(event, ApprovalRecorded):
        data["decision"] = event.decision.value
    return data
