"""Shared value types: task results, tool calls and approval decisions.

A TaskResult is the plain dict of SPEC.md: ``{"status", "content", "metadata"}``.
Helpers here build the common shapes so every component reports alike.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal, TypedDict


class TaskStatus(enum.StrEnum):
    """Status values carried by a TaskResult: the one vocabulary, with SPEC.md's values.

    Which one a result carries depends on what produced it:

    - a user turn (``handle_query``) or a task (``execute_task``): ``COMPLETE`` or
      ``failed`` (SPEC sections 3 and 7);
    - a tool's result: ``success`` or ``error`` (SPEC section 3: an executor's
      exception "becomes a TaskResult with status error");
    - a subtask tool asking for a subtask to run first: ``CONTINUATION``.

    Only ``error`` and ``failed`` are failures (:func:`is_error`).
    """

    COMPLETE = "COMPLETE"
    SUCCESS = "success"
    ERROR = "error"
    FAILED = "failed"
    CONTINUATION = "CONTINUATION"


class ToolStatus(enum.StrEnum):
    """How a tool call ended (``ToolCallFinished.status``, the trace, the transcript).

    Only ``error`` means the tool ran (or tried to) and failed. ``denied``: the user
    or the approval mode said no; ``refused``: the command policy refused it
    without asking anyone; ``not_run``: a guard stopped it (the limit of tool calls
    per turn; ``metadata["reason"]`` ``max_tokens``: the output limit cut its arguments);
    ``interrupted``: the user cancelled the turn while it ran.
    """

    SUCCESS = "success"
    ERROR = "error"
    DENIED = "denied"
    REFUSED = "refused"
    NOT_RUN = "not_run"
    INTERRUPTED = "interrupted"


class TaskResult(TypedDict, total=False):
    """The result every tool, task and turn returns."""

    status: str
    content: str
    metadata: dict[str, Any]
    notes: dict[str, Any]


def ok_result(content: str, **metadata: Any) -> TaskResult:
    """A successful tool result."""
    return {"status": TaskStatus.SUCCESS.value, "content": content, "metadata": dict(metadata)}


def error_result(content: str, **metadata: Any) -> TaskResult:
    """A failed tool result whose content the model (and the user) can read."""
    return {"status": TaskStatus.ERROR.value, "content": content, "metadata": dict(metadata)}


def is_error(result: TaskResult) -> bool:
    """True when a result reports a failure of any kind."""
    return str(result.get("status", "")).lower() in {TaskStatus.ERROR, TaskStatus.FAILED}


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool request made by the model, provider-neutral."""

    id: str
    name: str
    parameters: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The SPEC.md shape ``{"id", "name", "parameters"}``."""
        return {"id": self.id, "name": self.name, "parameters": dict(self.parameters)}


class Decision(enum.StrEnum):
    """The user's answer to an approval request."""

    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    ALLOW_PROJECT = "allow_project"
    """Always, for the session, wherever the request's ``project_key`` reaches (editFile: any file of the project)."""
    DENY = "deny"

    @property
    def allowed(self) -> bool:
        return self is not Decision.DENY


@dataclass(frozen=True, kw_only=True)
class ApprovalRequest:
    """What the user is asked to approve: exactly what will run, and why it asks."""

    tool_call: ToolCall
    title: str
    detail: str
    reason: str = ""
    session_key: str = ""
    """Key under which "always for this session" is remembered (e.g. the program name); empty when
    the answer is never remembered (a network command, an unsandboxed run, read-only mode's /task)."""
    project_key: str = ""
    """Key remembered when the user allows this kind of call anywhere in the project for the session
    (editFile: ``editFile:*``, every file); empty when that wider answer is not offered."""

    @property
    def offers_session(self) -> bool:
        """Whether "always for this session" may be offered: only when it will be honoured."""
        return bool(self.session_key)

    @property
    def offers_project(self) -> bool:
        """Whether "always for the project" may be offered: only when it will be honoured."""
        return bool(self.project_key)


Approver = Callable[[ApprovalRequest], Awaitable[Decision]]
ApprovalMode = Literal["ask", "allow", "deny"]


class Message(TypedDict, total=False):
    """A provider-neutral conversation message.

    ``role`` is ``user``, ``assistant`` or ``tool``. Assistant messages may carry
    ``tool_calls`` (SPEC shape) and ``interrupted``; tool messages carry
    ``tool_call_id``, ``name`` and ``is_error``. User messages may carry ``context_parts``
    and their rendered ``context`` (:mod:`core.turn_context`), sent before the content.
    An assistant message may also carry
    ``stop_reason`` (normalised, e.g. ``max_tokens``; ``incomplete`` when the stream
    ended before the provider said it was complete) and ``thinking``: the reasoning
    blocks exactly as the provider sent them, to be sent back where it requires them.
    """

    role: str
    content: str
    timestamp: float
    tool_calls: list[dict[str, Any]]
    tool_call_id: str
    name: str
    is_error: bool
    interrupted: bool
    context_parts: list[dict[str, Any]]
    context: str
    stop_reason: str
    thinking: list[dict[str, Any]]


def now() -> float:
    """Wall-clock timestamp used on messages (one place, so tests can reason about it)."""
    return time.time()
