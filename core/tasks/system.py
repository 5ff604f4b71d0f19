"""TaskSystem: template registry and structured task execution (SPEC.md sections 1 and 7).

Programmatic executors (aider) are checked first; templates without one would go to
a model-based path, which is not built yet and says so. Executor results that are
not TaskResults are wrapped; executor exceptions become task failures.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Iterable, Mapping

from core.callables import call_sync_or_async
from core.tasks.templates import BUILTIN_TEMPLATES, TaskTemplate, missing_inputs
from core.tools.aider_bridge import AiderBridge, InteractiveRunner
from core.types import TaskResult, TaskStatus

log = logging.getLogger(__name__)

TaskExecutor = Callable[[dict[str, Any]], Any]
"""Called with the task's inputs; may be async; returns a TaskResult or any plain value."""

PROGRAMMATIC_EXECUTOR_KEYS = ("aider:automatic", "aider:interactive")
"""Keys of the executors registered when the task system has an AiderBridge."""

MAX_CONTINUATIONS = 5
"""Most chained CONTINUATION subtasks followed before giving up."""


def task_failure(content: str, **metadata: Any) -> TaskResult:
    """A failed task: status ``failed``, a readable message, details in metadata."""
    return {"status": TaskStatus.FAILED.value, "content": content, "metadata": dict(metadata), "notes": {}}


def format_template_list(task_system: "TaskSystem") -> str:
    """``/task list`` text of a task system (see :meth:`TaskSystem.format_template_list`)."""
    return task_system.format_template_list()


def is_task_result(value: Any) -> bool:
    return isinstance(value, dict) and "status" in value and "content" in value


def wrap_result(value: Any) -> TaskResult:
    """A TaskResult as is; anything else as ``{"status": "COMPLETE", "content": ..., "notes": {}}``."""
    if is_task_result(value):
        return value
    return {"status": TaskStatus.COMPLETE.value, "content": "" if value is None else str(value), "notes": {}}


class TaskSystem:
    """Templates and structured task execution.

    Args:
        aider_bridge: when given, registers the ``aider:automatic`` and ``aider:interactive`` executors.
        templates: the templates to register (default: the built-in aider ones).
        run_interactive: how interactive sessions take the terminal (the TUI suspends itself);
            defaults to the bridge's ``interactive_runner``, else a worker thread.
    """

    def __init__(
        self,
        aider_bridge: AiderBridge | None = None,
        *,
        templates: Iterable[TaskTemplate] = BUILTIN_TEMPLATES,
        run_interactive: InteractiveRunner | None = None,
    ) -> None:
        self.templates: dict[str, TaskTemplate] = {}
        self.programmatic_executors: dict[str, TaskExecutor] = {}
        self.aider_bridge = aider_bridge
        self.run_interactive = run_interactive
        for template in templates:
            self.register_template(template)
        if aider_bridge is not None:
            self.register_executor("aider:automatic", self._aider_automatic)
            self.register_executor("aider:interactive", self._aider_interactive)

    @property
    def PROGRAMMATIC_EXECUTORS(self) -> dict[str, TaskExecutor]:  # noqa: N802 - the SPEC's name
        """Executors keyed ``type:subtype``, checked before any other path."""
        return self.programmatic_executors

    # -- registry --------------------------------------------------------------

    def register_template(self, template: TaskTemplate) -> None:
        """Add (or replace) a template."""
        self.templates[template.name] = template

    def register_executor(self, key: str, executor: TaskExecutor) -> None:
        """Run ``executor`` for tasks ``key`` (``type:subtype``)."""
        self.programmatic_executors[key] = executor

    def find_template(self, task_type: str, subtype: str | None = None) -> TaskTemplate | None:
        """The template for ``type:subtype`` (or ``type`` given as ``type:subtype`` or a template name)."""
        if subtype is None and ":" in task_type:
            task_type, subtype = task_type.split(":", 1)
        for template in self.templates.values():
            if (template.type, template.subtype) == (task_type, subtype):
                return template
        return self.templates.get(task_type) if subtype is None else None

    def list_templates(self) -> list[TaskTemplate]:
        """All templates, sorted by key."""
        return sorted(self.templates.values(), key=lambda t: t.key)

    def format_template_list(self) -> str:
        """Human-readable ``/task list``: each task, its usage and parameters."""
        lines = ["Tasks (run with /task <type>:<subtype> key=value ...):"]
        for template in self.list_templates():
            lines.append(f"\n{template.key} - {template.description}")
            lines.append(f"  usage: {template.usage()}")
            for param in template.params:
                need = "required" if param.required else "optional"
                lines.append(f"  {param.name} ({param.kind}, {need}): {param.description}")
        return "\n".join(lines)

    # -- execution -------------------------------------------------------------

    async def execute_task(self, task_type: str, subtype: str, inputs: Mapping[str, Any]) -> TaskResult:
        """Run a task: its programmatic executor first, else the model-based path.

        Returns:
            The executor's TaskResult, a wrapped plain result, or a ``failed`` result whose
            content says what went wrong (unknown task, missing input, executor error).
        """
        key = f"{task_type}:{subtype}"
        template = self.find_template(task_type, subtype)
        inputs = dict(inputs)
        if template is not None and (missing := missing_inputs(template, inputs)):
            return task_failure(
                f"Task {key} needs {', '.join(missing)}; usage: {template.usage()}", task=key, error="missing_input"
            )
        executor = self.programmatic_executors.get(key)
        if executor is not None:
            return await self._run_executor(key, executor, inputs)
        if template is None:
            known = ", ".join(t.key for t in self.list_templates()) or "none"
            return task_failure(f"Unknown task {key}. Known tasks: {known}.", task=key, error="unknown_task")
        return await self._execute_model_based(template, inputs)

    async def _run_executor(self, key: str, executor: TaskExecutor, inputs: dict[str, Any]) -> TaskResult:
        log.info("task %s: programmatic executor", key)
        try:
            value = await call_sync_or_async(executor, inputs)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any executor failure becomes a task failure
            log.exception("task %s failed", key)
            return task_failure(
                f"Task {key} failed: {exc or type(exc).__name__}", task=key, error=type(exc).__name__
            )
        return wrap_result(value)

    async def _execute_model_based(self, template: TaskTemplate, inputs: dict[str, Any]) -> TaskResult:
        return task_failure(
            f"Task {template.key} has no executor: only programmatic tasks run so far.",
            task=template.key,
            error="no_executor",
        )

    async def execute_subtask(self, subtask_request: Mapping[str, Any]) -> TaskResult:
        """Run a subtask request and follow CONTINUATION results to a final result.

        ``subtask_request`` is ``{"type", "subtype", "inputs"}``, or ``{"template": "aider:automatic"
        or "aider_automatic", "inputs"}``. A result with status CONTINUATION and a
        ``notes["subtask_request"]`` runs that next, up to :data:`MAX_CONTINUATIONS` times.
        """
        request: Mapping[str, Any] | None = subtask_request
        result: TaskResult = task_failure("empty subtask request", error="invalid_subtask")
        for _ in range(MAX_CONTINUATIONS + 1):
            if request is None:
                return result
            target = self._request_target(request)
            if target is None:
                return task_failure(f"Invalid subtask request: {dict(request)!r}", error="invalid_subtask")
            inputs = request.get("inputs") or {}
            if not isinstance(inputs, Mapping):
                return task_failure("Invalid subtask request: inputs must be an object", error="invalid_subtask")
            result = await self.execute_task(*target, inputs)
            request = self.continuation_of(result)
        return task_failure(
            f"Gave up after {MAX_CONTINUATIONS} chained subtasks", error="too_many_continuations", last=result
        )

    @staticmethod
    def continuation_of(result: TaskResult) -> Mapping[str, Any] | None:
        """The next subtask request of a CONTINUATION result, else None."""
        if str(result.get("status")) != TaskStatus.CONTINUATION.value:
            return None
        request = (result.get("notes") or {}).get("subtask_request")
        return request if isinstance(request, Mapping) else None

    async def follow_continuation(self, result: TaskResult) -> TaskResult:
        """``result`` itself, or, for a CONTINUATION, the result of the subtask it requests."""
        request = self.continuation_of(result)
        return result if request is None else await self.execute_subtask(request)

    def _request_target(self, request: Mapping[str, Any]) -> tuple[str, str] | None:
        if request.get("type") and request.get("subtype"):
            return str(request["type"]), str(request["subtype"])
        name = str(request.get("template") or request.get("task") or "")
        template = self.find_template(name) if name else None
        return (template.type, template.subtype) if template else None

    # -- aider executors -------------------------------------------------------

    async def _aider_automatic(self, inputs: dict[str, Any]) -> TaskResult:
        assert self.aider_bridge is not None
        return await self.aider_bridge.execute_automatic_task(
            str(inputs["prompt"]), _paths(inputs.get("file_context"))
        )

    async def _aider_interactive(self, inputs: dict[str, Any]) -> TaskResult:
        assert self.aider_bridge is not None
        return await self.aider_bridge.run_interactive(
            str(inputs["query"]), _paths(inputs.get("file_context")), runner=self.run_interactive
        )


def _paths(value: Any) -> list[str]:
    """A file_context value as a list of paths (a single string counts as one path)."""
    if not value:
        return []
    return [value] if isinstance(value, str) else [str(item) for item in value]
