"""The TUI's link to the engine, in one of three explicit states: loading, ready, failed.

The CLI paints the prompt first, then loads the settings and builds the ``core.app.Application``
in threads (:meth:`Engine.configure`, :meth:`Engine.build`), so every controller reads the
engine through one :class:`Engine` and asks its :attr:`Engine.state`, never probing the
Application or the handler for attributes. No widgets here.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal, Protocol

from tui import runtime

if TYPE_CHECKING:  # the settings module imports pydantic: loaded after the first frame, not with the app
    from core.app import Application
    from core.config import Settings
    from core.mcp import McpManager
    from core.session import Session  # with the events' dataclasses: imported when a session is first needed

log = logging.getLogger(__name__)

Approver = Callable[[Any], Awaitable[Any]]
InteractiveRunner = Callable[[Callable[[], Any]], Awaitable[Any]]

RESTART_HINT = "The panes and /help still work; fix the configuration and restart."


class DrivenHandler(Protocol):
    """What the TUI asks of a handler driven without an Application (tests inject scripted ones)."""

    def get_provider_identifier(self) -> str:
        """``provider:model`` for the status line."""

    def get_resource_metrics(self) -> dict[str, Any]:
        """Turns, tool calls, tokens (SPEC 4)."""


@dataclass(frozen=True, kw_only=True)
class Loading:
    """The settings or the Application are still to come (the CLI builds them after the first frame)."""

    kind: Literal["loading"] = "loading"


@dataclass(frozen=True, kw_only=True)
class Ready:
    """The engine runs: the open session, and the Application it belongs to.

    ``application`` is None only when a test or an embedder drives a bare handler (no tools,
    task system, MCP or checkpoints of an Application).
    """

    session: "Session"
    application: "Application | None" = None
    kind: Literal["ready"] = "ready"

    @property
    def handler(self) -> Any:
        """The session's handler (the tool loop)."""
        return self.session.handler


@dataclass(frozen=True, kw_only=True)
class Failed:
    """The Application could not be built: why, in words for the user (never a traceback)."""

    reason: str
    kind: Literal["failed"] = "failed"


EngineState = Loading | Ready | Failed


def failure_reason(exc: BaseException) -> str:
    """What the user is told when the Application cannot be built: the error's own words and what still works."""
    words = str(exc).strip() or type(exc).__name__
    return f"{words}\n{RESTART_HINT}"


class Engine:
    """The engine as the TUI's controllers see it: its :attr:`state`, its settings, its session.

    Build one with :meth:`deferred` (the CLI: settings and Application after the first frame),
    :meth:`built` (the Application built at once), :meth:`running` (an Application built already)
    or :meth:`driving` (a bare handler, for tests). The state changes only through
    :meth:`configure` and :meth:`build`.

    Args:
        settings: the loaded settings, or None until :meth:`configure` loads them.
        state: where the engine starts.
        load_settings: loads the settings (blocking); called once by :meth:`configure`.
        factory: builds the Application (blocking); called once by :meth:`build`.
        project_root: the project directory while the settings are not loaded yet.
    """

    def __init__(self, settings: "Settings | None", *, state: EngineState | None = None, load_settings: "Callable[[], Settings] | None" = None,
                 factory: "Callable[[], Application] | None" = None, project_root: Path | None = None) -> None:
        self._settings = settings
        self.load_settings = load_settings
        if factory is None and load_settings is not None:  # deferred: the Application from the settings once loaded
            factory = lambda: self._application(self.settings)  # noqa: E731
        self._factory = factory
        self._project_root = project_root
        self._state: EngineState = state or Loading()
        self._detached: Session | None = None
        self.approve: Approver | None = None
        self.run_interactive: InteractiveRunner | None = None

    # -- construction -------------------------------------------------------------------
    @classmethod
    def deferred(cls, load_settings: "Callable[[], Settings]", *, project_root: Path | None = None) -> "Engine":
        """Loading: the settings and then the Application come after the first frame, in threads (the CLI)."""
        return cls(None, load_settings=load_settings, project_root=project_root)

    @classmethod
    def built(cls, settings: "Settings") -> "Engine":
        """Ready with the Application built now from ``settings``, or Failed with the reason it could not be."""
        engine = cls(settings)
        try:
            engine._become(Ready(session=(application := engine._application(settings)).session_state, application=application))
        except Exception as exc:  # the app still starts: panes and /help work, the reason is shown
            log.exception("could not build the application")
            engine._become(Failed(reason=failure_reason(exc)))
        return engine

    @classmethod
    def running(cls, settings: "Settings", application: "Application") -> "Engine":
        """Ready with a built Application (its session is the one the TUI shows)."""
        return cls(settings, state=Ready(session=application.session_state, application=application))

    @classmethod
    def driving(cls, settings: "Settings", handler: DrivenHandler) -> "Engine":
        """Ready with a bare handler and a session built around it (tests inject scripted or fake-server-backed handlers)."""
        from core.session import Session

        return cls(settings, state=Ready(session=Session(handler, project_root=Path(settings.project_root))))

    def _application(self, settings: "Settings") -> "Application":
        from core.app import Application

        return Application(settings, run_interactive=self.hand_over)

    async def hand_over(self, fn: Callable[[], Any]) -> Any:
        """The Application's one terminal hand-over (interactive aider, ``/task aider:interactive``): the runner :meth:`connect` gave."""
        assert self.run_interactive is not None, "the app connects the engine when it composes"
        return await self.run_interactive(fn)

    # -- the state ------------------------------------------------------------------------
    @property
    def state(self) -> EngineState:
        """Loading, Ready (with its session and Application) or Failed (with its reason)."""
        return self._state

    @property
    def loading(self) -> bool:
        """True while the settings or the Application are still to be loaded or built (after the first frame)."""
        return isinstance(self._state, Loading)

    @property
    def application(self) -> "Application | None":
        """The Application when ready with one; None while loading, after a failure, or driving a bare handler."""
        return self._state.application if isinstance(self._state, Ready) else None

    @property
    def handler(self) -> Any:
        """The handler when ready, else None (read-only: the session is what the TUI commands)."""
        return self._state.handler if isinstance(self._state, Ready) else None

    @property
    def error(self) -> str:
        """Why the engine could not be built ("" unless it failed)."""
        return self._state.reason if isinstance(self._state, Failed) else ""

    def _become(self, state: Ready | Failed) -> None:
        self._state = state
        if isinstance(state, Ready) and self.approve is not None:
            state.session.set_approver(self.approve)

    # -- settings -------------------------------------------------------------------------
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

    async def configure(self) -> None:
        """Load the deferred settings in a thread (the prompt is already on screen).

        Raises:
            core.cli.StartupError: the configuration is invalid or unreadable (the app exits with its message).
        """
        load, self.load_settings = self.load_settings, None
        if load is not None:
            self._settings = await asyncio.to_thread(load)

    async def build(self) -> EngineState:
        """Loading -> Ready or Failed: build the deferred Application in a thread (the settings first, :meth:`configure`).

        Returns the new state; a state other than Loading is returned unchanged.
        """
        factory, self._factory = self._factory, None
        if not isinstance(self._state, Loading):
            return self._state
        if factory is None:
            self._become(Failed(reason=f"The engine was never built (nothing builds it).\n{RESTART_HINT}"))
            return self._state
        try:
            application = await asyncio.to_thread(factory)
        except Exception as exc:  # the app still runs: panes and /help work, the reason is shown
            log.exception("could not build the application")
            self._become(Failed(reason=failure_reason(exc)))
        else:
            self._become(Ready(session=application.session_state, application=application))
        return self._state

    # -- what controllers read ------------------------------------------------------------
    @property
    def session(self) -> "Session":
        """The open conversation the TUI reads and commands (``core.session.Session``).

        Ready: the Application's (or the one around a bare handler). Loading or failed: a
        session without a handler, which still holds the file context.
        """
        if isinstance(self._state, Ready):
            return self._state.session
        if self._detached is None:
            from core.session import Session

            self._detached = Session(None, project_root=self.project_root)
        return self._detached

    def connect(self, *, approve: Approver, run_interactive: InteractiveRunner) -> None:
        """Answer the handler's approvals with ``approve`` (also once built later); keep ``run_interactive`` for the
        Application's one terminal hand-over (``make_app`` builds it with a runner that calls this one)."""
        self.approve, self.run_interactive = approve, run_interactive
        if isinstance(self._state, Ready):
            self._state.session.set_approver(approve)

    @property
    def project_root(self) -> Path:
        """The project directory: the session's when ready, else the settings' (or the one given before they load)."""
        if isinstance(self._state, Ready):
            return self._state.session.project_root
        root = self._settings.project_root if self._settings is not None else self._project_root
        return Path(root or Path.cwd()).resolve()

    @property
    def provider_label(self) -> str:
        """``provider:model`` for the status line, "no provider", or "starting…" before the settings are loaded."""
        if self._settings is None:
            return "starting…"
        if not self.settings.provider_configured:
            return "no provider"
        if isinstance(self._state, Ready):
            return self._state.handler.get_provider_identifier()
        return f"{self.settings.provider}:{self.settings.model_name}"

    @property
    def mcp(self) -> "McpManager | None":
        """The Application's MCP servers, or None without an Application."""
        application = self.application
        return application.mcp if application is not None else None

    @property
    def memory_system(self) -> Any:
        """The Application's file index (``core.memory.MemorySystem``: ``@`` completion, the picker), or None without one."""
        application = self.application
        return application.memory_system if application is not None else None

    @property
    def checkpoints(self) -> Any:
        """The Application's file checkpoints (``core.checkpoints.Checkpoints``, /rewind), or None without an Application."""
        application = self.application
        return application.checkpoints if application is not None else None

    def metrics(self) -> dict[str, Any] | None:
        """The session's resource metrics when ready, else None (metrics are informative only: a failure is logged)."""
        if not isinstance(self._state, Ready):
            return None
        try:
            return self._state.session.metrics()
        except Exception:  # metrics are informative only
            log.exception("could not read metrics")
            return None

    def start_mcp(self, on_failure: Callable[[str], None]) -> None:
        """Start the MCP servers in the background; ``on_failure(message)`` hears of each server that fails."""
        application = self.application
        if application is None or application.mcp.started:
            return
        states: dict[str, str] = {}

        def changed(server: Any) -> None:
            before, states[server.name] = states.get(server.name), str(server.state)
            if server.state == "failed" and before != "failed":
                on_failure(f"MCP server {server.name} failed: {server.last_error}\n/mcp shows the servers and restarts one.")

        application.mcp.listeners.append(changed)
        application.start_mcp()

    async def sandbox_problem(self) -> str | None:
        """What is wrong with the command sandbox and what happens instead, or None when it works (or there are no commands)."""
        application = self.application
        if application is None:
            return None
        status = await application.commands.status()
        if status.available:
            return None
        fallback = ("Commands will run UNSANDBOXED, after asking each time (allow_unsandboxed is on)."
                    if self.settings.allow_unsandboxed else "runCommand, runTests, /test and /run are refused until it works.")
        return f"{status.problem}\n{fallback}"

    def prewarm(self) -> None:
        """Import the SDK, build the client and load the argument validator (blocking: run in a thread after the first paint),
        so the first reply and its first tool call start at once."""
        runtime.collect_start_up()  # before the SDK: a shorter collection, and not while the user types
        application = self.application
        if application is not None and self.settings.provider_configured:
            application.prewarm()
        runtime.freeze_start_up()  # start-up objects are never rescanned

    async def close(self) -> None:
        """Stop the MCP servers and close the session (best effort, at exit)."""
        application = self.application
        if application is None:
            return
        try:
            async with asyncio.timeout(6):
                await application.mcp.aclose()
        except Exception:  # stopping servers is best effort at exit; their processes get SIGTERM/SIGKILL
            log.exception("stopping the MCP servers failed")
        try:
            application.session_state.close()
        except Exception:  # closing is best effort at exit
            log.exception("closing the session failed")
