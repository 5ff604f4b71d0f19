"""The SPEC's handler names the app does not call (SPEC.md section 3).

``handle_query`` runs a turn to its TaskResult (the app consumes ``stream_query``);
``registerDirectTool`` and ``registerSubtaskTool`` wrap plain functions as tools;
``register_user_input_tool`` lets the model ask the user a question;
``prime_data_context``, ``_create_file_context``, ``execute_file_path_command`` and
``set_debug_mode`` are BaseHandler's SPEC helpers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from types import MappingProxyType
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence

from core import events as ev
from core.callables import call_sync_or_async
from core.memory.types import DataContext, MatchItem
from core.types import TaskResult, TaskStatus, error_result, now, ok_result

log = logging.getLogger(__name__)


class BaseHandlerSpecApi:
    """Mixed into BaseHandler; relies on its ``_file_access``, ``project_root``, ``config`` and ``approvals``."""

    _file_access: Any
    project_root: Path
    config: Any
    approvals: Any
    _data_context: DataContext | None
    _debug_mode: bool
    _get_relevant_files: Callable[[str], list[str]]
    log_debug: Callable[[str], None]

    @property
    def debug_mode(self) -> bool:
        """Debug logging on or off (:meth:`set_debug_mode`)."""
        return self._debug_mode

    @property
    def data_context(self) -> DataContext | None:
        """What :meth:`prime_data_context` gathered; None after ``clear_data_context``."""
        return self._data_context

    def set_debug_mode(self, enabled: bool) -> None:
        self._debug_mode = bool(enabled)
        self.log_debug(f"debug mode {'on' if enabled else 'off'}")

    def prime_data_context(self, query: str | None = None, initial_files: Sequence[str] | None = None) -> DataContext:
        """Fill the data context from explicit files (first) and/or relevance matching."""
        paths: list[str] = []
        for path in list(initial_files or []) + (self._get_relevant_files(query) if query else []):
            absolute = str((self.project_root / path).resolve()) if not Path(path).is_absolute() else str(Path(path))
            if absolute not in paths:
                paths.append(absolute)
        items: list[MatchItem] = []
        for path in paths:
            content = self._file_access.read(path)
            if content is None:
                continue
            items.append(MatchItem(id=path, content=content, content_type="file_content", source_path=path))
        self._data_context = DataContext(items=items, source_query=query or "", retrieved_at=now())
        return self._data_context

    def _create_file_context(self, paths: Iterable[str]) -> str:
        """Each readable file as its path and fenced content; unreadable ones marked."""
        blocks = []
        for path in paths:
            content, refusal = self._file_access.load(path)
            if content is None:
                blocks.append(f"{path}: (could not be read: it {refusal.reason if refusal else 'cannot be read'})")
            else:
                blocks.append(f"{path}:\n```\n{content}\n```")
        return "\n\n".join(blocks)

    async def execute_file_path_command(self, command: str) -> list[str]:
        """Run a file-finding command safely; its absolute, existing file paths, or [] on any failure."""
        from core.tools.safe_exec import execute_command_safely, parse_file_paths_from_output

        try:
            result = await execute_command_safely(
                command,
                project_root=self.project_root,
                timeout=self.config.command_timeout,
                secrets=self.config.secrets(),
                approvals=self.approvals,
            )
        except Exception:  # noqa: BLE001
            log.exception("file path command failed")
            return []
        if result.status != "success":
            return []
        return await asyncio.to_thread(parse_file_paths_from_output, result.stdout, self.project_root)


class PassthroughSpecApi:
    """Mixed into PassthroughHandler; relies on ``stream_query``, ``register_tool``, ``task_system``, ``direct_tools`` and ``subtask_tools``."""

    register_tool: Callable[..., bool]
    task_system: Any
    _direct_tools: dict[str, Callable[..., Any]]
    _subtask_tools: dict[str, Callable[..., Any]]
    _active_subtask_id: str | None

    @property
    def active_subtask_id(self) -> str | None:
        """The subtask the conversation continues; None until the first turn and after ``reset_conversation``."""
        return self._active_subtask_id

    @property
    def direct_tools(self) -> Mapping[str, Callable[..., Any]]:
        """Tools registered with :meth:`registerDirectTool`, by name (read-only)."""
        return MappingProxyType(self._direct_tools)

    @property
    def subtask_tools(self) -> Mapping[str, Callable[..., Any]]:
        """Tools registered with :meth:`registerSubtaskTool`, by name (read-only)."""
        return MappingProxyType(self._subtask_tools)

    stream_query: Callable[[str], AsyncIterator[ev.Event]]

    async def handle_query(self, query: str) -> TaskResult:
        """Run one user turn to the end and return its TaskResult."""
        result: TaskResult = {"status": TaskStatus.FAILED.value, "content": "", "metadata": {}}
        async with contextlib.aclosing(self.stream_query(query)) as events:
            async for event in events:
                if isinstance(event, (ev.TurnCompleted, ev.TurnFailed)):
                    result = event.result
        return result

    def registerDirectTool(self, name: str, func: Callable[..., Any]) -> bool:  # noqa: N802 - SPEC name
        """Register a tool taking ``query`` (required) and ``file_context`` (list of paths)."""
        if not self.register_tool(*self._wrapped_tool(name, func, "query", continuation=False)):
            return False
        self._direct_tools[name] = func
        return True

    def registerSubtaskTool(self, name: str, func: Callable[..., Any]) -> bool:  # noqa: N802 - SPEC name
        """Register a tool taking ``prompt`` and ``file_context``; CONTINUATION results run their subtask."""
        if not self.register_tool(*self._wrapped_tool(name, func, "prompt", continuation=True)):
            return False
        self._subtask_tools[name] = func
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

