"""The SPEC's TaskSystem names the app does not use (SPEC.md sections 3 and 7)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Mapping

from core.types import TaskResult, TaskStatus

MAX_CONTINUATIONS = 5
"""Most chained CONTINUATION subtasks followed before giving up."""


def _failure(content: str, **metadata: Any) -> TaskResult:
    from core.tasks.system import task_failure

    return task_failure(content, **metadata)


class TaskSystemSpecApi:
    """Added to the engine's TaskSystem by :class:`core.compat.TaskSystem`; relies on its ``programmatic_executors``."""

    programmatic_executors: dict[str, Any]
    find_template: Callable[..., Any]
    execute_task: Callable[[str, str, Mapping[str, Any]], Awaitable[TaskResult]]

    @property
    def PROGRAMMATIC_EXECUTORS(self) -> dict[str, Any]:  # noqa: N802 - the SPEC's name
        """Executors keyed ``type:subtype`` (``"aider:automatic"``), checked before any other path."""
        return self.programmatic_executors

    async def follow_continuation(self, result: TaskResult) -> TaskResult:
        """``result`` itself, or, for a CONTINUATION, the result of the subtask it requests (``registerSubtaskTool``)."""
        request = self.continuation_of(result)
        return result if request is None else await self.execute_subtask(request)

    async def execute_subtask(self, subtask_request: Mapping[str, Any]) -> TaskResult:
        """Run a subtask request and follow CONTINUATION results to a final result.

        ``subtask_request`` is ``{"type", "subtype", "inputs"}``, or ``{"template": "aider:automatic"
        or "aider_automatic", "inputs"}``. A result with status CONTINUATION and a
        ``notes["subtask_request"]`` runs that next, up to :data:`MAX_CONTINUATIONS` times.
        """
        request: Mapping[str, Any] | None = subtask_request
        result: TaskResult = _failure("empty subtask request", error="invalid_subtask")
        for _ in range(MAX_CONTINUATIONS + 1):
            if request is None:
                return result
            target = self._request_target(request)
            if target is None:
                return _failure(f"Invalid subtask request: {dict(request)!r}", error="invalid_subtask")
            inputs = request.get("inputs") or {}
            if not isinstance(inputs, Mapping):
                return _failure("Invalid subtask request: inputs must be an object", error="invalid_subtask")
            result = await self.execute_task(*target, inputs)
            request = self.continuation_of(result)
        return _failure(
            f"Gave up after {MAX_CONTINUATIONS} chained subtasks", error="too_many_continuations", last=result
        )

    @staticmethod
    def continuation_of(result: TaskResult) -> Mapping[str, Any] | None:
        """The next subtask request of a CONTINUATION result, else None."""
        if str(result.get("status")) != TaskStatus.CONTINUATION.value:
            return None
        request = (result.get("notes") or {}).get("subtask_request")
        return request if isinstance(request, Mapping) else None

    def _request_target(self, request: Mapping[str, Any]) -> tuple[str, str] | None:
        if request.get("type") and request.get("subtype"):
            return str(request["type"]), str(request["subtype"])
        name = str(request.get("template") or request.get("task") or "")
        template = self.find_template(name) if name else None
        return (template.type, template.subtype) if template else None
