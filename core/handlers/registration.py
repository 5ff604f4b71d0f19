"""The SPEC's tool-registration API of PassthroughHandler (SPEC.md section 3).

``registerDirectTool`` and ``registerSubtaskTool`` wrap plain functions as tools;
``register_user_input_tool`` lets the model ask the user a question.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from core.callables import call_sync_or_async
from core.types import TaskResult, TaskStatus, error_result, ok_result


class ToolRegistrationMixin:
    """Mixed into PassthroughHandler; relies on ``register_tool``, ``task_system``, ``direct_tools`` and ``subtask_tools``."""

    register_tool: Callable[..., bool]
    task_system: Any
    direct_tools: dict[str, Callable[..., Any]]
    subtask_tools: dict[str, Callable[..., Any]]

    def registerDirectTool(self, name: str, func: Callable[..., Any]) -> bool:  # noqa: N802 - SPEC name
        """Register a tool taking ``query`` (required) and ``file_context`` (list of paths)."""
        if not self.register_tool(*self._wrapped_tool(name, func, "query", continuation=False)):
            return False
        self.direct_tools[name] = func
        return True

    def registerSubtaskTool(self, name: str, func: Callable[..., Any]) -> bool:  # noqa: N802 - SPEC name
        """Register a tool taking ``prompt`` and ``file_context``; CONTINUATION results run their subtask."""
        if not self.register_tool(*self._wrapped_tool(name, func, "prompt", continuation=True)):
            return False
        self.subtask_tools[name] = func
        return True

    def _wrapped_tool(self, name: str, func: Callable[..., Any], key: str, *, continuation: bool) -> tuple[dict[str, Any], Any]:
        """Spec and executor calling ``func(key_value, file_context)``, or ``func(params)`` for other shapes."""
        spec = {
            "name": name,
            "description": f"Run {name} with a {key} and optional files.",
            "input_schema": {
                "type": "object",
                "properties": {key: {"type": "string"}, "file_context": {"type": "array", "items": {"type": "string"}}},
                "required": [key],
            },
        }

        async def executor(params: dict[str, Any]) -> Any:
            if key in params:
                value = await call_sync_or_async(func, params[key], params.get("file_context") or [])
            else:
                value = await call_sync_or_async(func, params)
            if continuation and isinstance(value, dict) and value.get("status") == TaskStatus.CONTINUATION.value:
                follow = getattr(self.task_system, "follow_continuation", None)
                if follow is not None:  # runs the subtask, and the ones it continues into
                    return await call_sync_or_async(follow, value)
                request = (value.get("notes") or {}).get("subtask_request")
                runner = getattr(self.task_system, "execute_subtask", None)
                if request is None or runner is None:
                    return error_result(f"{name} asked for a subtask, but no subtask could be run.")
                return await call_sync_or_async(runner, request)
            return value

        return spec, executor

    register_direct_tool = registerDirectTool
    register_subtask_tool = registerSubtaskTool

    def register_user_input_tool(self, ask: Callable[[str], Awaitable[str]]) -> bool:
        """A tool (``askUser``) through which the model asks the user a question."""

        async def executor(params: dict[str, Any]) -> TaskResult:
            answer = await ask(params["question"])
            return ok_result(answer)

        spec = {
            "name": "askUser",
            "description": "Ask the user a question and get their answer.",
            "input_schema": {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]},
        }
        return self.register_tool(spec, executor)

