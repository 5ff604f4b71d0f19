"""Application: builds the engine's parts from the settings (SPEC.md section 1).

Both the TUI and the headless CLI use it, so they behave the same. Heavy pieces
(SDKs, aider) are imported on first use, not here.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Awaitable, Callable

from core.config import Settings
from core.handlers.passthrough import PassthroughHandler
from core.providers import create_provider
from core.providers.base import ProviderAdapter
from core.types import TaskResult

log = logging.getLogger(__name__)

InteractiveRunner = Callable[[Callable[[], TaskResult]], Awaitable[TaskResult]]


class Application:
    """The TaskSystem, MemorySystem, PassthroughHandler and AiderBridge of one project."""

    def __init__(
        self,
        settings: Settings,
        *,
        provider: ProviderAdapter | None = None,
        run_interactive: InteractiveRunner | None = None,
    ) -> None:
        from core.memory.system import MemorySystem
        from core.tasks import TaskSystem
        from core.tools.aider_bridge import AiderBridge

        self.settings = settings
        self.project_root = Path(settings.project_root).resolve()
        self.provider = provider or create_provider(settings)
        self.memory_system = MemorySystem(self.project_root, provider=self.provider)
        self.bridge = AiderBridge(settings)
        self.task_system = TaskSystem(self.bridge)
        self.handler = PassthroughHandler(self.task_system, self.memory_system, self.provider, settings)
        self._register_tools(run_interactive)

    def _register_tools(self, run_interactive: InteractiveRunner | None) -> None:
        from core.tools.aider_tools import register_aider_tools
        from core.tools.files import READ_FILE_SPEC, read_file_tool

        handler = self.handler

        def read_file(params: dict[str, Any]) -> TaskResult:
            return read_file_tool(params, project_root=self.project_root, explicit_files=set(handler.pinned_files))

        handler.register_tool(READ_FILE_SPEC, read_file)
        register_aider_tools(handler, self.bridge, run_interactive=run_interactive)
        self._register_task_list_tool()

    def _register_task_list_tool(self) -> None:
        spec = {
            "name": "listTasks",
            "description": "List the structured tasks (/task) that exist and their parameters.",
            "input_schema": {"type": "object", "properties": {}},
        }
        self.handler.register_tool(spec, lambda params: self.describe_tasks())

    def describe_tasks(self) -> str:
        """``/task list``: the task templates and their parameters, one per line."""
        from core.tasks import format_template_list

        return format_template_list(self.task_system)

    async def run_task_command(self, text: str) -> TaskResult:
        """Run ``/task ...`` directly, without the chat model."""
        from core.tasks import run_task_command

        return await run_task_command(text, self.task_system, self.project_root)

    @property
    def provider_identifier(self) -> str:
        return self.handler.get_provider_identifier()
