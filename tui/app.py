"""The Textual app: chat, file context and tool trace, driven live by the handler's event stream."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.filter import LineFilter
from textual.app import SuspendNotSupported
from textual.worker import Worker, WorkerState

from core.config import Settings
from core.types import ApprovalRequest, Decision, error_result
from tui import context_ops, runtime, sessions, wrap
from tui.commands import complete_command, find_command, parse_command
from tui.file_source import FileSource
from tui.filters import ControlCharacterFilter
from tui.format import format_tokens, pretty_args
from tui.help import help_renderable, onboarding_markdown, show_top_when_taller
from tui.palette import AssistantCommands
from tui.screens.approval import ApprovalScreen
from tui.screens.text_view import TextViewScreen
from tui.turn import TurnRenderer
from tui.widgets.chat_view import ScrollTarget
from tui.widgets.chat import ChatView, MarkdownNote, NoteMessage, ThinkingBlock
from tui.widgets.context import ContextEntry, ContextPane
from tui.widgets.pasted import user_message
from tui.widgets.prompt import Completion, CompletionMenu, PromptInput
from tui.widgets.footer import KeyFooter
from tui.widgets.status import StatusLine
from tui.widgets.trace import ToolCallView, ToolTrace

log = logging.getLogger(__name__)

Clock = Callable[[], float]

GC_AFTER_TURN = 0.5
"""Seconds after a turn ends before the garbage collector's pause (``tui.runtime.after_turn``)."""
RELIST_AFTER = 10.0
"""Seconds a file listing stays fresh for the picker (opening it re-lists when older)."""


class AssistantApp(App[None]):
    """assistant-tui's full-screen app. Build it with :func:`make_app`."""

    CSS_PATH = "app.tcss"
    TITLE = "assistant-tui"
    COMMANDS = App.COMMANDS | {AssistantCommands}

    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel", tooltip="Cancel the running reply (the partial answer is kept)", id="app.cancel"),
        Binding("ctrl+o", "pick_files", "Pick", tooltip="Pick files into the context with the fuzzy picker", id="app.pick_files"),
        Binding("ctrl+g", "toggle_focus('context')", "Context", tooltip="Go to the context pane (again: back to the prompt)", id="app.focus_context"),
        Binding("ctrl+t", "toggle_focus('trace')", "Trace", tooltip="Go to the tool trace (again: back to the prompt)", id="app.focus_trace"),
        Binding("f2", "transcript", "History", tooltip="Show the whole conversation, including pruned messages", id="app.transcript"),
        Binding("f3", "toggle_thinking", "Thinking", tooltip="Show or hide the model's newest thinking", id="app.thinking", show=False),
        Binding("f1", "help", "Help", tooltip="Keys and commands", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", tooltip="Quit assistant-tui", id="app.quit", show=False, priority=True),
    ]

    def __init__(
        self,
        settings: Settings,
        *,
        application: Any = None,
        handler: Any = None,
        clock: Clock | None = None,
        engine_error: str = "",
        engine_factory: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__()
        wrap.install()  # long URLs and paths break after their separators, not mid-word
        self._control_filter = ControlCharacterFilter()
        self.settings = settings
        self.application = application
        self.handler = handler if handler is not None else getattr(application, "handler", None)
        self.clock: Clock = clock or time.monotonic
        self.engine_error = engine_error
        self.transcript: list[dict[str, Any]] = []
        """Everything shown in the chat, in order (the live widget tree is pruned; this is not)."""
        self.read_only: set[str] = set()
        self.suggested: list[str] = []
        self._local_pinned: list[str] = []
        self.files = FileSource(self.project_root, getattr(application, "memory_system", None))
        """The project's files for ``@`` completion and the picker (indexed off the event loop)."""
        self._turn: Worker[None] | None = None
        self._renderer: TurnRenderer | None = None
        self.recorded_context: list[dict[str, Any]] | None = None
        self.session_request: dict[str, Any] = {}
        """``--continue`` / ``--resume`` as given on the command line (sessions attach to it)."""
        if self.handler is not None:
            self.handler.approve = self.approve
        self._engine_factory = engine_factory
        """Builds the Application (blocking) after the first frame; None when it was given or built already."""
        self._mcp_states: dict[str, str] = {}
        self._started = asyncio.Event()
        """Set once the engine is attached and the session opened (a query sent earlier waits for it)."""

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then one that shows control characters: content is shown, never obeyed by the terminal."""
        return [*super().get_line_filters(), self._control_filter]

    # -- layout ------------------------------------------------------------
    def compose(self) -> ComposeResult:
        self.chat = ChatView(id="chat")
        self.context_pane = ContextPane(budget=self.settings.context_window, id="context")
        self.trace = ToolTrace(clock=self.clock, id="trace")
        self.status = StatusLine(provider=self.provider_label, context_window=self.settings.context_window, max_tool_calls=self.settings.max_tool_calls, id="status")
        menu = CompletionMenu(id="completion")
        self.prompt = PromptInput(menu=menu, completer=self.complete, id="prompt")
        with Horizontal(id="main"):
            with Vertical(id="chat-column"):
                yield self.chat
                yield menu
                yield self.prompt
            with Vertical(id="side"):
                yield self.context_pane
                yield self.trace
        yield self.status
        yield KeyFooter()

    async def on_mount(self) -> None:
        self.prompt.focus()
        self.prompt.cursor_blink = False if self.is_headless else self.prompt.cursor_blink
        if self.engine_error:
            await self.chat.add(NoteMessage(self.engine_error, kind="error", title="The engine could not start"))
        if not self.settings.provider_configured:
            onboarding = MarkdownNote(onboarding_markdown(self.settings), title="Set up a model provider", classes="onboarding")
            await self.chat.add(onboarding)
            self.call_after_refresh(show_top_when_taller, onboarding)  # read from its first line at 80x24
        else:
            welcome = f"{self.project_root.name} · {self.provider_label}\nAsk a question and press Enter · / for commands · @ adds a file · f1 for help"
            await self.chat.add(NoteMessage(welcome, kind="info"))
        if self._engine_factory is not None:
            self.call_after_refresh(self._start_after_first_frame)  # the prompt is on screen before the engine is built
        else:
            await self._start_up()

    def _start_after_first_frame(self) -> None:
        self.run_worker(self._start_up(), group="start-up", exit_on_error=False)

    async def _start_up(self) -> None:
        """Build the engine if it was deferred (in a thread), open the session, list the files, warm the SDK."""
        try:
            if self._engine_factory is not None:
                factory, self._engine_factory = self._engine_factory, None
                try:
                    application = await asyncio.to_thread(factory)
                except Exception as exc:  # the app still runs: panes and /help work, the error is shown
                    log.exception("could not build the application")
                    self.engine_error = f"{exc}\nThe panes and /help still work; fix the configuration and restart."
                    await self.chat.add(NoteMessage(self.engine_error, kind="error", title="The engine could not start"))
                else:
                    self.attach_engine(application)
            await sessions.start(self, **self.session_request)
            self.start_mcp()
            self.run_worker(self._sandbox_notice(), group="start-up", exit_on_error=False)
            self._refresh_metrics()
            self.refresh_context()
        finally:
            self._started.set()
        self.load_project_files()
        self.prewarm_provider()

    async def _sandbox_notice(self) -> None:
        """Say once, at start-up, when commands cannot run in the sandbox (and what to install)."""
        commands = getattr(self.application, "commands", None)
        if commands is None:
            return
        status = await commands.status()
        if not status.available:
            fallback = ("Commands will run UNSANDBOXED, after asking each time (allow_unsandboxed is on)."
                        if self.settings.allow_unsandboxed else "runCommand, runTests, /test and /run are refused until it works.")
            await self.chat.add(NoteMessage(f"{status.problem}\n{fallback}", kind="warning", title="No sandbox"))

    def attach_engine(self, application: Any) -> None:
        """Use ``application`` (built after the first frame) as this app's engine."""
        self.application = application
        self.handler = application.handler
        self.handler.approve = self.approve
        self.files.attach(application.memory_system)
        bridge = getattr(application, "bridge", None)
        if bridge is not None and hasattr(bridge, "interactive_runner"):
            bridge.interactive_runner = self.run_interactive
        self.status.set_provider(self.provider_label)

    @property
    def mcp(self) -> Any:
        """The Application's MCP servers (``core.mcp.McpManager``), or None without an engine."""
        return getattr(self.application, "mcp", None)

    def start_mcp(self) -> None:
        """Start the MCP servers in the background; a server that fails is reported in the chat."""
        manager = self.mcp
        if manager is None or manager.started:
            return
        manager.listeners.append(self._mcp_changed)
        self.application.start_mcp()

    def _mcp_changed(self, server: Any) -> None:
        before, self._mcp_states[server.name] = self._mcp_states.get(server.name), str(server.state)
        if server.state == "failed" and before != "failed":
            message = f"MCP server {server.name} failed: {server.last_error}\n/mcp shows the servers and restarts one."
            self.call_later(self.chat.add, NoteMessage(message, kind="warning", title="MCP"))

    async def wait_started(self) -> None:
        """Wait until the engine is attached and the session opened."""
        await self._started.wait()

    @work(thread=True, group="prewarm", exit_on_error=False)
    def prewarm_provider(self) -> None:
        """Import the SDK and build the client after the first paint, so the first reply starts at once."""
        prewarm = getattr(getattr(self.handler, "model_provider", None), "prewarm", None)
        if prewarm is not None and self.settings.provider_configured:
            prewarm()
        runtime.after_start_up()  # start-up objects are never rescanned

    async def on_unmount(self) -> None:
        if self.mcp is not None:
            try:
                async with asyncio.timeout(6):
                    await self.mcp.aclose()
            except Exception:  # stopping servers is best effort at exit; their processes get SIGTERM/SIGKILL
                log.exception("stopping the MCP servers failed")
        closer = getattr(self.application, "close_session", None)
        if closer is not None:
            try:
                closer()
            except Exception:  # closing is best effort at exit
                log.exception("closing the session failed")

    async def clear_conversation(self, *, keep_files: bool = True) -> None:
        """Cancel any reply and forget the conversation, the trace and the suggestions."""
        if self.turn_running:
            self.action_cancel_turn()
            await self.workers.wait_for_complete([self._turn] if self._turn else None)
        if self.handler is not None:
            self.handler.reset_conversation()
        await self.chat.clear()
        await self.trace.clear()
        self.transcript.clear()
        self.suggested = []
        if not keep_files:
            self.pinned.clear()
            self.read_only.clear()
        self.status.update_metrics({"turns": 0, "user_turns": 0, "tool_calls_this_turn": 0, "estimated_tokens": 0, "context_estimated_tokens": 0, "usage": {}})
        self.refresh_context()

    @work(thread=True, group="files", exit_on_error=False)
    def load_project_files(self, refresh: bool = False) -> None:
        """List (or re-list) the project's files off the event loop.

        Opening the picker re-lists at most every :data:`RELIST_AFTER` seconds:
        re-listing 80,000 files competed for the GIL with the first keystrokes.
        """
        if refresh:
            self.files.refresh(max_age=RELIST_AFTER)
        else:
            self.files.load()

    @property
    def provider_label(self) -> str:
        if not self.settings.provider_configured:
            return "no provider"
        getter = getattr(self.handler, "get_provider_identifier", None)
        return getter() if getter else f"{self.settings.provider}:{self.settings.model_name}"

    @property
    def turn_running(self) -> bool:
        return self._turn is not None and self._turn.state in (WorkerState.PENDING, WorkerState.RUNNING)

    def record(self, role: str, content: str, **extra: Any) -> None:
        """Append to the in-memory transcript."""
        self.transcript.append({"role": role, "content": content, **extra})

    # -- prompt ------------------------------------------------------------
    def complete(self, line: str) -> tuple[int, list[Completion]] | None:
        """Completion candidates for the line up to the cursor: slash commands at the start, ``@`` files anywhere."""
        if line.startswith("/") and " " not in line:
            return 0, [Completion(c.name, c.usage, c.help) for c in complete_command(line)]
        at = line.rfind("@")
        if at != -1 and (at == 0 or line[at - 1].isspace()) and " " not in line[at:]:
            return at, self.complete_files(line[at + 1 :])
        return None

    def complete_files(self, query: str, limit: int = 8) -> list[Completion]:
        """``@`` completion: the best fuzzy matches over the project's files."""
        return [Completion("@" + path, path, "", kind="file", highlight=tuple(hl)) for path, hl in self.files.search(query, limit)]

    @on(PromptInput.CompletionAccepted)
    async def _completion_accepted(self, event: PromptInput.CompletionAccepted) -> None:
        if event.completion.kind == "file":
            await self.add_files(event.completion.label)

    @on(PromptInput.Submitted)
    async def _submitted(self, event: PromptInput.Submitted) -> None:
        await self.submit(event.text)

    async def submit(self, text: str) -> None:
        """Handle what the user sent: a slash command, or a query for the model."""
        if not self._started.is_set():  # sent in the first moments, while the engine is being built
            await self._started.wait()
        self.chat.follow()  # what follows is the answer to this: follow it (the onboarding left the top in view)
        parsed = parse_command(text)
        command = find_command(parsed[0]) if parsed else None
        if parsed and command is None:
            await self.chat.add(NoteMessage(f"Unknown command {parsed[0]}. Type /help for the list (start with // to send a message beginning with /).", kind="warning"))
            self.prompt.restore(text)
            return
        if command is not None and not command.to_model:
            await self.run_command(command.name, parsed[1] if parsed else "")
            return
        query = text[1:] if text.lstrip().startswith("//") else text
        await self.start_turn(query)

    async def start_turn(self, query: str) -> None:
        """Show the query and run the turn in the exclusive turn worker."""
        if self.turn_running:
            self.notify("A reply is still running: Esc cancels it.", severity="warning")
            self.prompt.restore(query)
            return
        await self.chat.add(user_message(query, self.prompt.pastes.found_in(query)))
        self.record("user", query)
        if self.handler is None or not self.settings.provider_configured:
            await self.chat.add(NoteMessage("No model provider is configured, so nothing was sent. The setup steps are at the top of the chat; /task, /add and the panes work without a model.", kind="error", title="No provider"))
            self.prompt.restore(query)
            return
        self._sync_pinned()
        self._renderer = TurnRenderer(self, query)
        self._turn = self.run_turn(self._renderer)
        self.refresh_bindings()

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, renderer: TurnRenderer) -> None:
        """Consume the handler's event stream for one turn (cancelled by Esc)."""
        try:
            # aclosing: a fault while rendering closes the stream now (the turn ends, the engine is free)
            async with contextlib.aclosing(self.handler.stream_query(renderer.query)) as stream:
                async for event in stream:
                    await renderer.handle(event)
        except asyncio.CancelledError:
            await renderer.interrupted()
            await self.chat.add(NoteMessage("Interrupted. The partial answer is kept; send your next message.", kind="info"))
            raise
        except Exception as exc:  # never a traceback on screen: a clear note, and the prompt back
            log.exception("turn failed")
            await renderer.show_error("internal", f"Something went wrong while running the turn: {exc}")
        finally:
            self.status.set_state("ready")
            self._refresh_metrics()
            self.refresh_context()
            self.call_later(self.refresh_bindings)
            # The collector's pause once the answer is on screen (not a Textual timer: see AssistantMessage._schedule).
            asyncio.get_running_loop().call_later(GC_AFTER_TURN, runtime.after_turn)

    def _refresh_metrics(self) -> None:
        getter = getattr(self.handler, "get_resource_metrics", None)
        if getter is not None:
            try:
                self.status.update_metrics(getter())
            except Exception:  # metrics are informative only
                log.exception("could not read metrics")

    async def approve(self, request: ApprovalRequest) -> Decision:
        """The handler's approver: a modal with exactly what will run (called inside the turn worker)."""
        await self.trace.pending(request.tool_call)
        try:
            decision = await self.push_screen_wait(ApprovalScreen(request))
        except asyncio.CancelledError:
            if isinstance(self.screen, ApprovalScreen):
                self.screen.dismiss(Decision.DENY)
            raise
        return decision if isinstance(decision, Decision) else Decision.DENY

    async def run_interactive(self, fn: Callable[[], Any]) -> Any:
        """Give the terminal to an interactive program (aider) and take it back afterwards.

        ``fn`` blocks until the program exits; the app is suspended meanwhile, so
        nothing else needs the event loop.
        """
        try:
            with self.suspend():
                result = fn()
        except SuspendNotSupported:
            return error_result("This terminal cannot be handed over to aider; use aiderAutomatic or /task aider:automatic instead.")
        self.refresh(layout=True)
        return result

    # -- actions -----------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.turn_running
        if action == "scroll_chat" and parameters == ("bottom",):
            return not self.chat.following  # in the footer only while the reader is scrolled up
        return True

    def action_cancel_turn(self) -> None:
        """Cancel the running turn at once."""
        if self.turn_running and self._turn is not None:
            self._turn.cancel()

    def action_scroll_chat(self, where: ScrollTarget) -> None:
        """PageUp/PageDown/ctrl+Home/ctrl+End in the prompt: scroll the chat, keep the focus."""
        self.chat.scroll_chat(where)

    def action_focus_prompt(self) -> None:
        self.prompt.focus()

    def action_toggle_focus(self, pane: str) -> None:
        """Move to a side pane, or back to the prompt when already there."""
        target = self.trace if pane == "trace" else self.context_pane
        if self.focused is not None and target in self.focused.ancestors_with_self:
            self.prompt.focus()
        elif pane == "trace":
            if not self.trace.focus_last():
                self.notify("No tool calls yet.")
        else:
            self.context_pane.query_one("#context-files").focus()

    def action_toggle_thinking(self) -> None:
        """Expand or collapse the newest thinking block in the chat."""
        blocks = list(self.chat.query(ThinkingBlock))
        if not blocks:
            self.notify("No thinking to show: the model has not sent any in the messages on screen.")
            return
        blocks[-1].collapsed = not blocks[-1].collapsed

    def action_transcript(self) -> None:
        """Show the whole conversation in a scrollable view (the chat pane keeps only the newest messages)."""
        self.push_screen(TextViewScreen("Transcript", sessions.transcript_markdown(self), language="markdown"))

    async def action_help(self) -> None:
        await self.run_command("/help", "")

    async def action_pick_files(self) -> None:
        from tui.screens.picker import FilePickerScreen

        self.push_screen(FilePickerScreen(self.files), self._picked)
        self.load_project_files(refresh=True)

    async def _picked(self, paths: list[str] | None) -> None:
        for path in paths or []:
            await self.add_files(path)

    async def action_reset(self) -> None:
        await self.run_command("/reset", "")

    @on(ToolCallView.ViewRequested)
    def _view_call(self, event: ToolCallView.ViewRequested) -> None:
        record = event.record
        text = f"# arguments\n{pretty_args(record.call.parameters)}\n\n# result ({record.status})\n{record.result}"
        self.push_screen(TextViewScreen(f"{record.call.name} · {record.call.id}", text))

    # -- slash commands ----------------------------------------------------
    async def run_command(self, name: str, args: str) -> None:
        """Run a command that needs no model."""
        from tui import slash

        await slash.run(self, name, args)

    # -- file context ------------------------------------------------------
    @property
    def project_root(self) -> Path:
        return Path(getattr(self.handler, "project_root", None) or self.settings.project_root).resolve()

    @property
    def pinned(self) -> list[str]:
        """Absolute paths the user picked into the context (the handler's list when there is one)."""
        if self.handler is not None and isinstance(getattr(self.handler, "pinned_files", None), list):
            return self.handler.pinned_files
        return self._local_pinned

    def _sync_pinned(self) -> None:
        """Tell the handler which picked files are read-only (aider receives them as such)."""
        if self.handler is not None and hasattr(self.handler, "read_only_files"):
            self.handler.read_only_files = sorted(self.read_only)

    async def add_files(self, pattern: str) -> context_ops.AddOutcome:
        """Add files matching a path or glob; refused ones are reported with their reason.

        When the files would take the context past its budget, the user is asked first.
        """
        outcome = await asyncio.to_thread(context_ops.plan_add, pattern, self.project_root, list(self.pinned))
        for path, reason in outcome.refused:
            await self.chat.add(NoteMessage(f"{context_ops.display_path(str(path), self.project_root)} was not added: it {reason}.", kind="warning", title="Not added"))
        if not (outcome.added or outcome.refused or outcome.already):
            await self.chat.add(NoteMessage(f"No file matches {pattern!r} in {self.project_root}.", kind="warning"))
        budget = self.context_pane.budget
        after = self.context_pane.picked_tokens + outcome.tokens
        if outcome.added and budget and after > budget:
            from tui.screens.confirm import ConfirmScreen

            files = len(outcome.added)
            question = (
                f"Adding {files} file{'s' if files != 1 else ''} ({format_tokens(outcome.tokens)} tokens) puts the context at "
                f"{format_tokens(after)} of its {format_tokens(budget)}-token budget ({after * 100 // budget}%). "
                "Requests over the budget are not sent. Add anyway?"
            )

            async def answered(yes: bool | None) -> None:
                if yes:
                    self._commit_add(outcome)

            outcome.confirming = True
            self.push_screen(ConfirmScreen("Over the context budget", question, yes="Add anyway"), answered)
            return outcome
        self._commit_add(outcome)
        return outcome

    def _commit_add(self, outcome: context_ops.AddOutcome) -> None:
        self.pinned.extend(str(path) for path in outcome.added if str(path) not in self.pinned)
        self.suggested = [path for path in self.suggested if path not in self.pinned]
        self.refresh_context()

    def drop_files(self, pattern: str) -> list[str]:
        """Drop context entries matching a path or glob; returns what was dropped."""
        dropped = context_ops.match_current(pattern, self.project_root, list(self.pinned))
        for path in dropped:
            self.pinned.remove(path)
            self.read_only.discard(path)
        self.refresh_context()
        return dropped

    def show_suggestions(self, paths: list[str]) -> None:
        """Files the memory system suggests for the current query (not yet picked)."""
        root = self.project_root
        resolved = [str((root / path).resolve()) if not Path(path).is_absolute() else path for path in paths]
        self.suggested = [path for path in resolved if path not in self.pinned]
        self.refresh_context()

    def refresh_context(self) -> None:
        """Redraw the context pane from the picked and suggested files."""
        root = self.project_root
        entries = [ContextEntry(path, context_ops.display_path(path, root), context_ops.file_tokens(Path(path)), "picked", path in self.read_only) for path in self.pinned]
        entries += [ContextEntry(path, context_ops.display_path(path, root), context_ops.file_tokens(Path(path)), "suggested") for path in self.suggested]
        self.context_pane.set_entries(entries)
        sessions.record_context(self)

    @on(ContextPane.Dropped)
    def _dropped(self, event: ContextPane.Dropped) -> None:
        if event.entry.source == "suggested":
            self.suggested.remove(event.entry.path)
            self.refresh_context()
        else:
            self.drop_files(event.entry.path)

    @on(ContextPane.Accepted)
    async def _accepted(self, event: ContextPane.Accepted) -> None:
        await self.add_files(event.entry.path)

    @on(ContextPane.ReadOnlyToggled)
    def _read_only(self, event: ContextPane.ReadOnlyToggled) -> None:
        self.read_only ^= {event.entry.path}
        self.refresh_context()

    @on(ContextPane.PreviewRequested)
    def _preview(self, event: ContextPane.PreviewRequested) -> None:
        try:
            text = Path(event.entry.path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.notify(f"Cannot read {event.entry.display}: {exc.strerror}", severity="error")
            return
        self.push_screen(TextViewScreen(event.entry.display, text))

    def help_renderable(self) -> Any:
        """``/help``: the real bindings, grouped by where they work, and the commands."""
        from tui.screens.approval import ApprovalScreen as _Approval

        owners = [("anywhere", AssistantApp), ("prompt", PromptInput), ("chat", ChatView), ("trace", ToolCallView), ("context", ContextPane), ("approval", _Approval)]
        return help_renderable([(where, [b for b in cls.BINDINGS if isinstance(b, Binding)]) for where, cls in owners])


def make_app(
    settings: Settings,
    *,
    application: Any = None,
    handler: Any = None,
    clock: Clock | None = None,
    continue_session: bool = False,
    resume: str | None = None,
    defer_engine: bool = False,
) -> AssistantApp:
    """Build the app for the CLI and for tests.

    Args:
        settings: the loaded settings.
        application: a ``core.app.Application``; built from ``settings`` when neither it nor ``handler`` is given.
        handler: a handler to drive directly (tests inject scripted or fake-server-backed ones).
        clock: monotonic clock for elapsed times (tests pass a fixed one).
        continue_session: reopen the project's most recent session.
        resume: id of a session to reopen.
        defer_engine: build the Application in a thread after the first frame (the CLI), not before returning.
    """
    engine_error = ""
    app_ref: list[AssistantApp] = []

    async def run_interactive(fn: Callable[[], Any]) -> Any:
        return await app_ref[0].run_interactive(fn)

    def build() -> Any:
        from core.app import Application

        return Application(settings, run_interactive=run_interactive)

    factory = None
    if application is None and handler is None:
        if defer_engine:
            factory = build
        else:
            try:
                application = build()
            except Exception as exc:  # the app still starts: panes and /help work, the error is shown
                log.exception("could not build the application")
                engine_error = f"{exc}\nThe panes and /help still work; fix the configuration and restart."
    app = AssistantApp(settings, application=application, handler=handler, clock=clock, engine_error=engine_error, engine_factory=factory)
    bridge = getattr(application, "bridge", None)
    if bridge is not None and hasattr(bridge, "interactive_runner"):
        bridge.interactive_runner = run_interactive  # /task aider:interactive suspends the app too
    app.session_request = {"continue_session": continue_session, "resume": resume}
    app_ref.append(app)
    return app


def run_app(settings: Settings, *, continue_session: bool = False, resume: str | None = None) -> None:
    """Run the full-screen app until the user quits (the engine is built after the first frame)."""
    make_app(settings, continue_session=continue_session, resume=resume, defer_engine=True).run()
