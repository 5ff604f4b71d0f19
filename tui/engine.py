"""The TUI's link to the engine: the ``core.app.Application`` (or a bare handler in tests) and its settings.

The Application may be built after the first frame (in a thread), so every controller
reads it through one :class:`Engine` instead of keeping its own reference.
No widgets here.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from tui import runtime

if TYPE_CHECKING:  # the settings module imports pydantic: loaded after the first frame, not with the app
    from core.config import Settings
    from core.session import Session  # with the events' dataclasses: imported when a session is first needed

log = logging.getLogger(__name__)

Approver = Callable[[Any], Awaitable[Any]]
InteractiveRunner = Callable[[Callable[[], Any]], Awaitable[Any]]


class Engine:
    """The Application, its handler and settings, as the TUI's controllers see them.

    Args:
        settings: the loaded settings, or None until :meth:`configure` loads them (the CLI).
        application: a ``core.app.Application``, or None (not built yet, or a test drives a bare handler).
        handler: the handler to drive; the Application's when not given.
        error: why the engine could not be built ("" when it was).
        factory: builds the Application (blocking); called once by :meth:`build`.
        load_settings: loads the settings (blocking); called once by :meth:`configure`.
        project_root: the project directory while the settings are not loaded yet.
    """

    def __init__(self, settings: "Settings | None", *, application: Any = None, handler: Any = None, error: str = "",
                 factory: Callable[[], Any] | None = None, load_settings: Callable[[], "Settings"] | None = None,
                 project_root: Path | None = None) -> None:
        self._settings = settings
        self.load_settings = load_settings
        self._project_root = project_root
        self.application = application
        self.handler = handler if handler is not None else getattr(application, "handler", None)
        self.error = error
        self.factory = factory
        self.approve: Approver | None = None
        self.run_interactive: InteractiveRunner | None = None
        self._session: Session | None = None

    @property
    def settings(self) -> "Settings":
        """The settings (the CLI's app reads them only after :meth:`configure`, which the start-up awaits first)."""
        if self._settings is None:
            raise RuntimeError("the settings are read before they were loaded (StartUp.configure runs first)")
        return self._settings

    @property
    def configured(self) -> bool:
        """True once the settings are loaded."""
        return self._settings is not None

    @property
    def deferred(self) -> bool:
        """True while the settings or the Application are still to be loaded or built (after the first frame)."""
        return self.load_settings is not None or self.factory is not None

    async def configure(self) -> None:
        """Load the deferred settings in a thread (the prompt is already on screen).

        Raises:
            core.cli.StartupError: the configuration is invalid or unreadable (the app exits with its message).
        """
        load, self.load_settings = self.load_settings, None
        if load is not None:
            self._settings = await asyncio.to_thread(load)

    @property
    def session(self) -> Session:
        """The open conversation the TUI reads and commands (``core.session.Session``).

        The Application's; for a bare handler (tests) or no engine at all, one built here,
        which still holds the file context.
        """
        from core.session import Session

        owned = getattr(self.application, "session_state", None)
        if isinstance(owned, Session):
            return owned
        if self._session is None or self._session.handler is not self.handler:
            self._session = Session(self.handler, project_root=self.project_root)
            if self.approve is not None:
                self._session.set_approver(self.approve)
        return self._session

    def connect(self, *, approve: Approver, run_interactive: InteractiveRunner) -> None:
        """Answer the handler's approvals with ``approve`` (also once built later); keep ``run_interactive`` for the
        Application's one terminal hand-over (``make_app`` builds it with a runner that calls this one)."""
        self.approve, self.run_interactive = approve, run_interactive
        if self.handler is not None or self._session is not None:  # else the session built on first use gets it
            self.session.set_approver(approve)

    async def build(self) -> bool:
        """Build the deferred Application in a thread; False (and :attr:`error` set) when that failed."""
        factory, self.factory = self.factory, None
        if factory is None:
            return True
        try:
            application = await asyncio.to_thread(factory)
        except Exception as exc:  # the app still runs: panes and /help work, the error is shown
            log.exception("could not build the application")
            self.error = f"{exc}\nThe panes and /help still work; fix the configuration and restart."
            return False
        self.application, self.handler = application, application.handler
        if self.approve is not None and self.run_interactive is not None:
            self.connect(approve=self.approve, run_interactive=self.run_interactive)
        return True

    @property
    def project_root(self) -> Path:
        """The project directory (the handler's when there is one)."""
        root = getattr(self.handler, "project_root", None) or (self._settings.project_root if self._settings is not None else self._project_root)
        return Path(root or Path.cwd()).resolve()

    @property
    def provider_label(self) -> str:
        """``provider:model`` for the status line, "no provider", or "starting…" before the settings are loaded."""
        if self._settings is None:
            return "starting…"
        if not self.settings.provider_configured:
            return "no provider"
        getter = getattr(self.handler, "get_provider_identifier", None)
        return getter() if getter else f"{self.settings.provider}:{self.settings.model_name}"

    @property
    def mcp(self) -> Any:
        """The Application's MCP servers (``core.mcp.McpManager``), or None without an engine."""
        return getattr(self.application, "mcp", None)

    def metrics(self) -> dict[str, Any] | None:
        """The session's resource metrics, or None (metrics are informative only: a failure is logged)."""
        if self.handler is None:
            return None
        try:
            return self.session.metrics()
        except Exception:  # metrics are informative only
            log.exception("could not read metrics")
            return None

    def start_mcp(self, on_failure: Callable[[str], None]) -> None:
        """Start the MCP servers in the background; ``on_failure(message)`` hears of each server that fails."""
        manager = self.mcp
        if manager is None or manager.started:
            return
        states: dict[str, str] = {}

        def changed(server: Any) -> None:
            before, states[server.name] = states.get(server.name), str(server.state)
            if server.state == "failed" and before != "failed":
                on_failure(f"MCP server {server.name} failed: {server.last_error}\n/mcp shows the servers and restarts one.")

        manager.listeners.append(changed)
        self.application.start_mcp()

    async def sandbox_problem(self) -> str | None:
        """What is wrong with the command sandbox and what happens instead, or None when it works."""
        commands = getattr(self.application, "commands", None)
        if commands is None:
            return None
        status = await commands.status()
        if status.available:
            return None
        fallback = ("Commands will run UNSANDBOXED, after asking each time (allow_unsandboxed is on)."
                    if self.settings.allow_unsandboxed else "runCommand, runTests, /test and /run are refused until it works.")
        return f"{status.problem}\n{fallback}"

    def prewarm(self) -> None:
        """Import the SDK and build the client (blocking: run in a thread after the first paint), so the first reply starts at once."""
        prewarm = getattr(getattr(self.handler, "model_provider", None), "prewarm", None)
        if prewarm is not None and self.settings.provider_configured:
            prewarm()
        runtime.after_start_up()  # start-up objects are never rescanned

    async def close(self) -> None:
        """Stop the MCP servers and close the session (best effort, at exit)."""
        if self.mcp is not None:
            try:
                async with asyncio.timeout(6):
                    await self.mcp.aclose()
            except Exception:  # stopping servers is best effort at exit; their processes get SIGTERM/SIGKILL
                log.exception("stopping the MCP servers failed")
        if self.application is not None:
            try:
                self.session.close()
            except Exception:  # closing is best effort at exit
                log.exception("closing the session failed")
