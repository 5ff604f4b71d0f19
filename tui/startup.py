"""The app's first moments: the settings, the greeting, then the engine, the session, MCP, the sandbox notice, the file list and the SDK.

The prompt is on screen first: with a deferred engine (the CLI) all of this runs after the first frame.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from core.cli import StartupError
from tui.engine import Failed, Ready
from tui.help import onboarding_markdown, show_top_when_taller
from tui.slash import note
from tui.widgets.chat import MarkdownNote

if TYPE_CHECKING:
    from tui.context_ops import FileContext
    from tui.conversation import Conversation
    from tui.engine import Engine
    from tui.file_source import FileSource
    from tui.hosts import StartHost
    from tui.sessions import Sessions
    from tui.widgets.status import StatusLine


class StartUp:
    """Start-up in order; a query sent meanwhile waits for :meth:`wait`.

    Args:
        engine: the engine link (built here when deferred).
        sessions: opens the session (``session_request``: ``--continue`` / ``--resume`` as given).
        conversation, file_context: their first metrics and pane.
        files: the project's file list, loaded in a thread.
        status: gets the provider once the engine is built.
        host: what the start-up may ask of the app (:class:`tui.hosts.StartHost`).
        session_request: ``--continue`` / ``--resume`` as given on the command line.
        send: sends what the user typed (a query, a command) once the start-up is over: what :meth:`keep` held.
    """

    def __init__(self, engine: "Engine", *, sessions: "Sessions", conversation: "Conversation", file_context: "FileContext",
                 files: "FileSource", status: "StatusLine", host: "StartHost", session_request: dict[str, Any],
                 send: Callable[[str], Awaitable[None]]) -> None:
        self.engine = engine
        self.sessions, self.conversation, self.file_context = sessions, conversation, file_context
        self.chat = conversation.chat
        self.files, self.status, self.host = files, status, host
        self.session_request = session_request
        self.send = send
        self.kept: list[str] = []
        """What the user sent while the engine was loading, in order: sent once the start-up is over."""
        self.failure: StartupError | None = None
        """Why the settings could not be loaded (the app has exited)."""
        self.started = asyncio.Event()
        """Set once the engine is attached and the session opened."""

    async def greet(self) -> None:
        """The engine's error, then the onboarding (no provider) or the welcome line."""
        engine = self.engine
        if isinstance(engine.state, Failed):
            await note(self.chat, engine.state.reason, "error", "The engine could not start")
        if not engine.settings.provider_configured:
            onboarding = MarkdownNote(onboarding_markdown(engine.settings), title="Set up a model provider", classes="onboarding")
            await self.chat.add(onboarding)
            self.host.call_after_refresh(show_top_when_taller, onboarding)  # read from its first line at 80x24
        else:
            welcome = f"{engine.project_root.name} · {engine.provider_label}\nAsk a question and press Enter · / for commands · @ adds a file · f1 for help"
            await note(self.chat, welcome)

    async def run(self) -> None:
        """Load the settings and build the engine if they were deferred (in threads), greet, open the session, list the files, warm the SDK.

        Invalid settings end the app (:attr:`failure`; the command prints it as it does without the app).
        """
        engine, host = self.engine, self.host
        try:
            await self.ask_trust()
            try:
                await engine.configure()
            except StartupError as error:
                self.failure = error
                host.exit(return_code=error.status)
                return
            settings = engine.settings
            limits = {"context_window": settings.context_window, "max_tool_calls": settings.max_tool_calls}
            self.status.update_metrics(limits)
            self.file_context.show_figure(limits)
            self.status.set_provider(engine.provider_label)
            await self.greet()
            for notice in settings.notices:
                await note(self.chat, notice, "warning", "Settings")
            if engine.loading:
                match await engine.build():
                    case Ready():
                        self.files.attach(engine.memory_system)
                        self.status.set_provider(engine.provider_label)
                    case Failed(reason=reason):
                        await note(self.chat, reason, "error", "The engine could not start")
            await self.sessions.start(**self.session_request)
            engine.start_mcp(lambda message: host.call_later(note, self.chat, message, "warning", "MCP"))
            host.run_worker(self._sandbox_notice(), group="start-up", exit_on_error=False)
            self.conversation.refresh_metrics()
            self.file_context.refresh()
        finally:
            self.started.set()
        await self._send_kept()
        host.call_after_refresh(self._background)  # once what start-up showed (a resumed chat) is painted

    def _background(self) -> None:
        """List the project's files and warm the SDK in threads (the first reply starts at once): after the first
        frame, the engine built and the session (a resumed chat) on screen, so they share no core with drawing it."""
        self.host.run_worker(self.files.load, thread=True, group="files", exit_on_error=False)
        self.host.run_worker(self.engine.prewarm, thread=True, group="prewarm", exit_on_error=False)

    async def ask_trust(self) -> None:
        """Before the settings load: ask once whether to trust an untrusted project whose configuration changes something.

        Only when this app loads the settings (the CLI); "Not now" leaves the project's configuration ignored.
        """
        if self.engine.load_settings is None:
            return
        from core.trust import TrustError, trust_project
        from core.trust_changes import pending_trust
        from tui.screens.trust import TrustScreen

        root = self.engine.project_root
        changes = await asyncio.to_thread(pending_trust, root)
        if changes is None:
            return
        answer: asyncio.Future[bool | None] = asyncio.get_running_loop().create_future()
        self.host.push_screen(TrustScreen(changes), answer.set_result)
        if await answer:
            try:
                await asyncio.to_thread(trust_project, root)
            except TrustError as error:
                await note(self.chat, str(error), "error", "Trust")
                return
            await note(self.chat, f"Trusted {root}: its .env and .mcp.json apply (assistant-tui will not ask again).", title="Trust")

    async def _sandbox_notice(self) -> None:
        """Say once, at start-up, when commands cannot run in the sandbox (and what to install)."""
        if problem := await self.engine.sandbox_problem():
            await note(self.chat, problem, "warning", "No sandbox")

    def keep(self, text: str) -> bool:
        """Hold what the user sent while the engine loads (sent, in order, once it is ready); False when start-up is over."""
        if self.started.is_set():
            return False
        self.kept.append(text)
        self.host.notify("Starting up: your message is kept and sent once the engine is ready.")
        return True

    async def _send_kept(self) -> None:
        kept, self.kept = self.kept, []
        for text in kept:
            await self.send(text)

    async def wait(self) -> None:
        """Wait until the engine is attached and the session opened."""
        await self.started.wait()
