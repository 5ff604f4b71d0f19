"""Application: builds the engine's parts from the settings (SPEC.md section 1).

Both the TUI and the headless CLI use it, so they behave the same. Heavy pieces
(SDKs, aider) are imported on first use, not here.
"""

from __future__ import annotations

import logging
import shlex
from pathlib import Path
from typing import Any, Awaitable, Callable

from core.config import Settings
from core.handlers.pacing import Pacing
from core.handlers.passthrough import PassthroughHandler
from core.providers import create_provider
from core.providers.base import ProviderAdapter
from core.types import TaskResult

log = logging.getLogger(__name__)

InteractiveRunner = Callable[[Callable[[], TaskResult]], Awaitable[TaskResult]]


class Application:
    """The TaskSystem, MemorySystem, PassthroughHandler and AiderBridge of one project.

    Args:
        settings: the loaded settings.
        provider: the model provider (built from the settings when not given).
        run_interactive: how an interactive aider session takes the terminal, given once
            here and kept by the bridge, which both the ``aiderInteractive`` tool and
            ``/task aider:interactive`` go through (the TUI suspends itself; ACP refuses;
            None runs it in this terminal).
        pacing: the handler's clocks and retry pause (tests and benchmarks fix them).
    """

    memory_system_class: type | None = None
    """The MemorySystem built (None: the engine's; :class:`core.compat.Application` builds the SPEC's)."""
    task_system_class: type | None = None
    """The TaskSystem built (None: the engine's)."""
    handler_class: type[PassthroughHandler] = PassthroughHandler
    """The handler built."""

    def __init__(
        self,
        settings: Settings,
        *,
        provider: ProviderAdapter | None = None,
        run_interactive: InteractiveRunner | None = None,
        pacing: Pacing | None = None,
    ) -> None:
        from core.memory.system import MemorySystem
        from core.tasks import TaskSystem
        from core.tools.aider_bridge import AiderBridge

        from core.gitutil import harden_git_environment

        # git run by aider (in this process) and by children ignores every program the repository names
        harden_git_environment(cwd=Path(settings.project_root).resolve())
        self.settings = settings
        self.project_root = Path(settings.project_root).resolve()
        self.provider = provider or create_provider(settings)
        self.memory_system = (self.memory_system_class or MemorySystem)(self.project_root, provider=self.provider)
        self.bridge = AiderBridge(settings, interactive_runner=run_interactive)  # the one route to the terminal
        self.task_system = (self.task_system_class or TaskSystem)(self.bridge)
        self.handler = self.handler_class(self.task_system, self.memory_system, self.provider, settings, pacing=pacing)
        from core.sandbox import Preflight
        from core.tools.commands import CommandTools

        self.commands = CommandTools(settings, Preflight(self.project_root))
        self._register_tools()
        self.mcp = self._build_mcp()
        from core.session import Session

        self.session_state = Session(self.handler, application=self)
        from core.checkpoints.manager import Checkpoints

        self.checkpoints = Checkpoints(self.project_root, self.session_state)  # issue 26
        self.handler.use_checkpoints(self.checkpoints)
        """The open conversation: history, file context, approvals, transcript, metrics."""

    def _register_tools(self) -> None:
        from core.tools.aider_tools import register_aider_tools
        from core.tools.files import MAX_READ_CHARS, READ_FILE_SPEC, read_file_tool

        handler = self.handler

        def read_file(params: dict[str, Any]) -> TaskResult:
            return read_file_tool(params, project_root=self.project_root, explicit_files=set(handler.pinned_files),
                                  policy=self.memory_system.policy,
                                  max_chars=self.settings.max_tool_result_chars or MAX_READ_CHARS)

        handler.register_tool(READ_FILE_SPEC, read_file)
        after_edit = None
        if self.settings.auto_test:
            from core.tools.auto_test import AutoTest

            after_edit = AutoTest(self.commands, self.bridge, self.settings.auto_test_attempts)
        register_aider_tools(handler, self.bridge, after_edit=after_edit)
        from core.tools.edit_file import register_edit_file

        register_edit_file(handler)  # issue 26: exact edits, reviewed as a diff
        self.commands.register(handler)
        self._register_task_list_tool()

    def _build_mcp(self) -> Any:
        """The MCP servers of the config files (none with ``--no-mcp``); nothing starts yet."""
        from core.mcp import McpConfig, McpManager, load_mcp_config
        from core.mcp.config import refuse_secrets

        if self.settings.mcp_enabled:
            config = load_mcp_config(self.project_root, extra_file=self.settings.mcp_config or None)
            refuse_secrets(config, self.settings.secrets())
        else:
            config = McpConfig()
        for problem in config.errors:
            log.warning("MCP configuration: %s", problem)
        return McpManager(self.handler, config, allow_read_only=self.settings.mcp_allow_read_only)

    def prewarm(self) -> None:
        """Import what a first reply and its first tool call need (the SDK and its client, ``jsonschema``).

        Blocking: run it in a thread after the first paint, so neither import stalls the event loop.
        """
        from core.handlers import validation

        self.provider.prewarm()
        validation.prewarm()

    def start_mcp(self) -> None:
        """Start the MCP servers in the background on the running event loop (returns at once).

        Their tools join the registry as each server becomes ready; a server that
        fails is shown by ``/mcp`` and never blocks a turn.
        """
        self.mcp.start()

    async def start_mcp_and_wait(self) -> None:
        """Start the MCP servers and wait until each is ready or failed (headless runs, before the first request)."""
        self.mcp.start()
        await self.mcp.wait_started()

    async def aclose(self) -> None:
        """Stop the MCP servers (their processes end), close the session transcript and the checkpoints' watch."""
        await self.mcp.aclose()
        self.session_state.close()
        self.checkpoints.close()  # issue 26: the project's watch

    def _register_task_list_tool(self) -> None:
        spec = {
            "name": "listTasks",
            "description": "List the structured tasks (/task) that exist and their parameters.",
            "input_schema": {"type": "object", "properties": {}},
        }
        self.handler.register_tool(spec, lambda params: self.describe_tasks())

    def describe_tasks(self) -> str:
        """``/task list``: the task templates and their parameters, one per line."""
        return self.task_system.format_template_list()

    async def run_task_command(self, text: str) -> TaskResult:
        """Run ``/task ...`` directly, without the chat model."""
        from core.tasks import run_task_command

        from core.checkpoints.hooks import checkpointed_command

        return await checkpointed_command(self, text, lambda: run_task_command(text, self.task_system, self.project_root))

    # -- commands (/run, /test) ------------------------------------------------------
    async def run_user_command(self, argv: list[str], on_output: Any = None) -> TaskResult:
        """``/run`` and ``/test``: the user's own command, in the sandbox, added to the conversation.

        The user typed it, so it needs no approval; it still runs only in the sandbox
        (or, when that is unavailable, only if ``allow_unsandboxed`` is set).
        """
        from core.tools.commands import describe

        verdict = await self.commands.verdict(argv, False, user=True)
        if verdict.action == "deny":
            from core.types import error_result

            return error_result(verdict.reason)
        from core.checkpoints.hooks import checkpointed_command

        async def run() -> TaskResult:
            return describe(await self.commands.run(argv, on_output=on_output))

        result = await checkpointed_command(self, f"/run {shlex.join(argv)}", run)  # issue 26: what it changed can be rewound
        # in the conversation and the transcript, so the model and a resumed session have it
        await self.session_state.add_note(f"I ran a command, `{shlex.join(argv)}`; its output:\n```\n{result['content']}\n```")
        return result

    def test_argv(self) -> list[str]:
        """The project's test command (raises TestCommandError when there is none)."""
        return self.commands.test_command()[0]

    @property
    def session(self) -> Any:
        """The open transcript's identity (``core.sessions.StoredSession``: id, path), or None."""
        return self.session_state.stored
