"""TaskSystem: template registry and structured task execution (SPEC.md sections 1 and 7).

Programmatic executors (aider) are checked first; templates without one would go to
a model-based path, which is not built yet and says so. Executor results that are
not TaskResults are wrapped; executor exceptions become task failures. The SPEC's
``PROGRAMMATIC_EXECUTORS``, ``execute_subtask`` and ``follow_continuation`` are added on
top by :class:`core.compat.TaskSystem`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable, Iterable, Mapping

from core.callables import call_sync_or_async
from core.tasks.templates import BUILTIN_TEMPLATES, TaskTemplate, missing_inputs
from core.tools.aider_bridge import AiderBridge
from core.types import TaskResult, TaskStatus

log = logging.getLogger(__name__)

TaskExecutor = Callable[[dict[str, Any]], Any]
"""Called with the task's inputs; may be async; returns a TaskResult or any plain value."""
ChangeGate = Callable[[str, dict[str, Any]], Awaitable["str | None"]]
"""Asked before a task that changes files runs: None to go ahead, else why not (the handler's ``approve_task``)."""
CHANGES_FILES = frozenset({"aider:automatic", "aider:interactive"})
"""Tasks that edit the project's files."""


def task_failure(content: str, **metadata: Any) -> TaskResult:
    """A failed task: status ``failed``, a readable message, details in metadata."""
    return {"status": TaskStatus.FAILED.value, "content": content, "metadata": dict(metadata), "notes": {}}


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
    """

    def __init__(
        self,
        aider_bridge: AiderBridge | None = None,
        *,
        templates: Iterable[TaskTemplate] = BUILTIN_TEMPLATES,
    ) -> None:
        self.templates: dict[str, TaskTemplate] = {}
        self.programmatic_executors: dict[str, TaskExecutor] = {}
        self.aider_bridge = aider_bridge
        self.approve_changes: ChangeGate | None = None
        """Set by the handler: read-only mode asks before a task in :data:`CHANGES_FILES` runs."""
        for template in templates:
            self.register_template(template)
        if aider_bridge is not None:
            self.register_executor("aider:automatic", self._aider_automatic)
            self.register_executor("aider:interactive", self._aider_interactive)

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
        if executor is not None and key in CHANGES_FILES and self.approve_changes is not None:
            refusal = await self.approve_changes(key, inputs)
            if refusal:
                return task_failure(f"Task {key} was not run: {refusal}", task=key, error="denied")
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

    # -- aider executors -------------------------------------------------------

    async def _aider_automatic(self, inputs: dict[str, Any]) -> TaskResult:
        assert self.aider_bridge is not None
        return await self.aider_bridge.execute_automatic_task(
            str(inputs["prompt"]), _paths(inputs.get("file_context"))
        )

    async def _aider_interactive(self, inputs: dict[str, Any]) -> TaskResult:
        assert self.aider_bridge is not None
        return await self.aider_bridge.run_interactive(
            str(inputs["query"]), _paths(inputs.get("file_context"))
        )  # the terminal is handed over the bridge's one way (its interactive_runner)


def _paths(value: Any) -> list[str]:
    """A file_context value as a list of paths (a single string counts as one path)."""
    if not value:
        return []
    return [value] if isinstance(value, str) else [str(item) for item in value]
