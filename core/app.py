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

        from core.gitutil import harden_git_environment

        # git run by aider (in this process) and by children ignores every program the repository names
        harden_git_environment(cwd=Path(settings.project_root).resolve())
        self.settings = settings
        self.project_root = Path(settings.project_root).resolve()
        self.provider = provider or create_provider(settings)
        self.memory_system = MemorySystem(self.project_root, provider=self.provider)
        self.bridge = AiderBridge(settings)
        if run_interactive is not None:
            self.bridge.interactive_runner = run_interactive
        self.task_system = TaskSystem(self.bridge, run_interactive=run_interactive)
        self.handler = PassthroughHandler(self.task_system, self.memory_system, self.provider, settings)
        from core.sandbox import Preflight
        from core.tools.commands import CommandTools

        self.commands = CommandTools(settings, Preflight(self.project_root))
        self._register_tools(run_interactive)
        self.mcp = self._build_mcp()
        self.session: Any = None
        self.recorder: Any = None
        self.loaded_session: Any = None

    def _register_tools(self, run_interactive: InteractiveRunner | None) -> None:
        from core.tools.aider_tools import register_aider_tools
        from core.tools.files import READ_FILE_SPEC, read_file_tool

        handler = self.handler

        def read_file(params: dict[str, Any]) -> TaskResult:
            return read_file_tool(params, project_root=self.project_root, explicit_files=set(handler.pinned_files),
                                  policy=self.memory_system.policy)

        handler.register_tool(READ_FILE_SPEC, read_file)
        after_edit = None
        if self.settings.auto_test:
            from core.tools.auto_test import AutoTest

            after_edit = AutoTest(self.commands, self.bridge, self.settings.auto_test_attempts)
        register_aider_tools(handler, self.bridge, run_interactive=run_interactive, after_edit=after_edit)
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
        """Stop the MCP servers (their processes end) and close the session transcript."""
        await self.mcp.aclose()
        self.close_session()

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

        return await run_task_command(text, self.task_system, self.project_root)

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
        result = describe(await self.commands.run(argv, on_output=on_output))
        message = f"I ran a command; its output:\n```\n{result['content']}\n```"
        self.handler.add_message("user", message)
        if self.recorder is not None:  # in the transcript too, so a resumed session has it
            self.recorder.user(message)
        return result

    def test_argv(self) -> list[str]:
        """The project's test command (raises TestCommandError when there is none)."""
        return self.commands.test_command()[0]

    # -- sessions ------------------------------------------------------------------
    def start_session(self, *, continue_latest: bool = False, resume: str | None = None, fork_if_locked: bool = False) -> list[str]:
        """Open (or create) this project's session transcript and restore it into the handler.

        Returns notices for the user (repairs made while loading, a fork, a fresh
        start when there was nothing to continue).

        Raises:
            SessionNotFound: ``resume`` names no session.
            SessionLocked: another assistant-tui has the session open (and no fork was asked).
            SessionError: the data directory cannot be used.
        """
        from core.sessions import SessionLocked, SessionRecorder, SessionStore, load_session

        store = self.session_store = SessionStore()
        notices: list[str] = []
        if resume:
            session = store.open(resume, self.project_root)
        elif continue_latest:
            session = store.latest(self.project_root)
            if session is None:
                notices.append("No earlier session in this project; starting a new one.")
                session = store.create(self.project_root)
        else:
            session = store.create(self.project_root)
        try:
            writer = store.writer(session, provider=self.settings.provider, model=self.settings.model_name)
        except SessionLocked:
            if not fork_if_locked:
                raise
            session = store.fork(session, self.project_root)
            notices.append(f"That session is open in another assistant-tui; continuing in a fork, {session.id}.")
            writer = store.writer(session, provider=self.settings.provider, model=self.settings.model_name)
        if session.path.exists() and session.path.stat().st_size:
            loaded = load_session(session)
            self.loaded_session = loaded
            restore = getattr(self.handler, "restore_conversation", None)
            if restore is not None:
                restore(loaded.messages, loaded.usage)
            else:
                self.handler.conversation_history = list(loaded.messages)
            files = (loaded.context or {}).get("files") or []
            self.handler.pinned_files = [f["path"] for f in files if Path(f["path"]).exists()]
            notices.extend(loaded.warnings)
        self.close_session()
        self.session = session
        self.recorder = SessionRecorder(writer)
        self.handler.add_observer(self.recorder)
        return notices

    def new_session(self) -> None:
        """``/new``: close the current transcript, forget the conversation, start a fresh one."""
        self.handler.reset_conversation()
        self.loaded_session = None
        self.start_session()

    def record_context(self, files: list[dict[str, Any]] | list[str]) -> list[Any]:
        """Record the file-context pane in the transcript (call when the pinned files change)."""
        return self.recorder.context(files) if self.recorder else []

    def close_session(self) -> None:
        """Stop recording; the transcript stays on disk."""
        if self.recorder is not None:
            self.handler.remove_observer(self.recorder)
            try:
                self.recorder.writer.close()
            except Exception:  # noqa: BLE001 - pending records are reported by the writer's own error
                log.exception("closing the session writer failed")
            self.recorder = None
