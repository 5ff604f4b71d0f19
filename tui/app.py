"""The Textual app, the composition root: it builds the widgets and the controllers and wires them.

Nothing in ``tui/`` imports this module (``tui.cli`` launches it); see docs/architecture.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.filter import LineFilter

from tui import draft, late, runtime
from tui.context_ops import FileContext
from tui.engine import Engine
from tui.file_source import FileSource
from tui.focus import PaneFocus
from tui.filters import ControlCharacterFilter
from tui.palette import AssistantCommands
from tui.widgets.chat_view import ChatView, ScrollTarget
from tui.widgets.context import ContextPane, EntryMessage
from tui.widgets.footer import KeyFooter
from tui.widgets.prompt import PromptArea, PromptInput
from tui.widgets.status import StatusLine
from tui.widgets.trace import ToolCallView, ToolTrace

if TYPE_CHECKING:  # pydantic: the CLI's app loads the settings after its first frame
    from core.config import Settings
    from tui.turn import TurnRenderer
    from tui.widgets.pasted import PastedMessage

log = logging.getLogger(__name__)

Clock = Callable[[], float]

RELIST_AFTER = 10.0
"""Seconds a file listing stays fresh for the picker (opening it re-lists when older)."""


class AssistantApp(App[None]):
    """assistant-tui's full-screen app. Build it with :func:`make_app`."""

    CSS_PATH = "app.tcss"
    TITLE = "assistant-tui"
    COMMANDS = App.COMMANDS | {AssistantCommands}

    BINDINGS = [
        Binding("escape", "toggle_focus('prompt')", "Prompt", tooltip="Back to the prompt from a pane (context, trace, chat)", id="app.focus_prompt"),
        Binding("escape", "cancel_turn", "Cancel", tooltip="Cancel the running reply (the partial answer is kept)", id="app.cancel"),
        Binding("ctrl+o", "pick_files", "Pick", tooltip="Pick files into the context with the fuzzy picker", id="app.pick_files"),
        Binding("ctrl+g", "toggle_focus('context')", "Context", tooltip="Go to the context pane (again: back to the prompt)", id="app.focus_context"),
        Binding("ctrl+t", "toggle_focus('trace')", "Trace", tooltip="Go to the tool trace (again: back to the prompt)", id="app.focus_trace"),
        Binding("ctrl+l", "toggle_focus('chat')", "Chat", tooltip="Go to the chat to scroll it (again: back to the prompt)", id="app.focus_chat", show=False),
        Binding("f2", "transcript", "History", tooltip="Show the whole conversation, including pruned messages", id="app.transcript"),
        Binding("f3", "toggle_thinking", "Thinking", tooltip="Show or hide the model's newest thinking", id="app.thinking", show=False),
        Binding("f1", "help", "Help", tooltip="Keys and commands", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", tooltip="Quit assistant-tui", id="app.quit", show=False, priority=True),
    ]

    def __init__(self, engine: Engine, *, clock: Clock | None = None, session_request: dict[str, Any] | None = None) -> None:
        super().__init__()
        self._control_filter = ControlCharacterFilter()
        self.engine = engine
        self.clock: Clock = clock or time.monotonic
        self.session_request = session_request or {}
        """``--continue`` / ``--resume`` as given on the command line (the session opened at start-up)."""
        self._parts_built = asyncio.Event()
        self.files = FileSource(engine.project_root, engine.memory_system)
        """The project's files for ``@`` completion and the picker (indexed off the event loop)."""

    # The engine's state, as tests and benchmarks read it.
    handler = property(lambda self: self.engine.handler)
    application = property(lambda self: self.engine.application)
    engine_error = property(lambda self: self.engine.error)
    mcp = property(lambda self: self.engine.mcp)
    pinned = property(lambda self: self.file_context.pinned)
    turn_running = property(lambda self: self._built("conversation") and self.conversation.running)

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then one that shows control characters: content is shown, never obeyed by the terminal."""
        return [*super().get_line_filters(), self._control_filter]

    # -- composition --------------------------------------------------------
    def compose(self) -> ComposeResult:
        self.chat = ChatView(id="chat")
        self.context_pane = ContextPane(id="context")  # the settings' limits arrive in StartUp.run (after the first frame for the CLI)
        self.trace = ToolTrace(clock=self.clock, id="trace")
        self.status = StatusLine(provider=self.engine.provider_label, id="status")
        prompt_area = PromptArea(completer=partial(late.complete, files=self.files), draft=draft.take(self.engine.project_root), keep_draft=partial(draft.keep, self.engine.project_root), id="prompt-area")
        self.prompt = prompt_area.input
        self.file_context = FileContext(self.engine, self.context_pane, self.chat, self)
        self.pane_focus = PaneFocus(self, self.prompt, context=self.context_pane, trace=self.trace, chat=self.chat)
        with Horizontal(id="main"):
            with Vertical(id="chat-column"):
                yield self.chat
                yield prompt_area
            with Vertical(id="side"):
                yield self.context_pane
                yield self.trace
        yield self.status
        yield KeyFooter()

    # What the first frame does not need, built at the first use (tui/late.py).
    conversation = cached_property(late.conversation)
    sessions = cached_property(late.sessions)
    startup = cached_property(late.startup)
    command_context = cached_property(late.command_context)

    def _built(self, part: str) -> bool:
        """Whether a part built at its first use exists yet (the footer asks before the first frame)."""
        return part in self.__dict__

    async def on_mount(self) -> None:
        self.prompt.focus()
        self.call_after_refresh(runtime.first_frame)  # the collector, paused by the console script until the prompt is on screen
        self.prompt.cursor_blink = False if self.is_headless else self.prompt.cursor_blink
        if self.engine.loading:  # the prompt is on screen before the settings are loaded and the engine built
            self.call_after_refresh(self._start_after_first_frame)
        else:
            self.command_context  # noqa: B018  (built now: a test's engine is ready)
            self._parts_built.set()
            await self.startup.run()

    def _start_after_first_frame(self) -> None:
        self.run_worker(self._start(), group="start-up", exit_on_error=False)

    async def _start(self) -> None:
        await asyncio.to_thread(late.preload)  # the chat's messages and the commands, imported off the event loop
        self.command_context  # noqa: B018  (the conversation, sessions and commands, built before the first key needs them)
        self._parts_built.set()
        await self.startup.run()

    async def wait_started(self) -> None:
        """Wait until the engine is attached and the session opened."""
        await self._parts_built.wait()  # not built here: that would race the import in the thread
        await self.startup.wait()

    async def on_unmount(self) -> None:
        await self.engine.close()

    # -- prompt ------------------------------------------------------------
    @on(PromptInput.CompletionAccepted)
    async def _completion_accepted(self, event: PromptInput.CompletionAccepted) -> None:
        if event.completion.kind == "file":
            await self.file_context.add_files(event.completion.label)

    @on(PromptInput.Submitted)
    async def _submitted(self, event: PromptInput.Submitted) -> None:
        await self.submit(event.text)

    async def submit(self, text: str) -> None:
        """Handle what the user sent: a slash command, or a query for the model."""
        if self.startup.keep(text):  # sent in the first moments, while the engine is being built: sent when it is
            return
        self.chat.follow()  # what follows is the answer to this: follow it (the onboarding left the top in view)
        from tui import commands

        await commands.submit(self.command_context, text)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.Paste)):  # typing in a pane goes to the prompt: decided before it is handed on
            self.pane_focus.route(event)
        await super().on_event(event)

    # -- actions -----------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_focus" and parameters == ("prompt",):
            return self.pane_focus.in_a_pane()  # Esc: back from a pane (in the prompt it cancels the reply)
        if action == "cancel_turn":
            return self._built("conversation") and self.conversation.running
        if action == "scroll_chat" and parameters == ("bottom",):
            return not self.chat.following  # in the footer only while the reader is scrolled up
        return True

    def action_cancel_turn(self) -> None:
        """Cancel the running turn at once."""
        self.conversation.cancel()

    def action_scroll_chat(self, where: ScrollTarget) -> None:
        """PageUp/PageDown/ctrl+Home/ctrl+End in the prompt: scroll the chat, keep the focus."""
        self.chat.scroll_chat(where)

    async def action_submit(self, text: str) -> None:
        await self.submit(text)

    def action_prefill(self, text: str) -> None:
        """Put ``text`` in the prompt for the user to finish (a palette command that needs an argument)."""
        self.prompt.load_text(text)
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()

    def action_toggle_focus(self, pane: str) -> None:
        """Go to a pane (``context``, ``trace``, ``chat``), or back to the prompt when already there (or asked: ``prompt``)."""
        self.pane_focus.toggle(pane)

    def action_toggle_thinking(self) -> None:
        self.conversation.toggle_thinking()

    def action_transcript(self) -> None:
        """Show the whole conversation in a scrollable view (the chat pane keeps only the newest messages)."""
        from tui.screens.text_view import TextViewScreen

        self.push_screen(TextViewScreen("Transcript", self.sessions.transcript_markdown(), language="markdown"))

    async def action_help(self) -> None:
        from tui import commands

        await commands.run(self.command_context, "/help", "")

    async def action_pick_files(self) -> None:
        from tui.screens.picker import FilePickerScreen

        self.push_screen(FilePickerScreen(self.files), self._picked)
        # re-list at most every RELIST_AFTER seconds: re-listing 80,000 files competed for the GIL with the first keystrokes
        self.run_worker(partial(self.files.refresh, max_age=RELIST_AFTER), thread=True, group="files", exit_on_error=False)

    async def _picked(self, paths: list[str] | None) -> None:
        for path in paths or []:
            await self.file_context.add_files(path)

    # Handlers named for their messages (Textual's naming), so the first frame need not import the classes.
    def on_turn_renderer_query_returned(self, event: TurnRenderer.QueryReturned) -> None:
        self.prompt.restore(event.query)

    def on_turn_renderer_files_suggested(self, event: TurnRenderer.FilesSuggested) -> None:
        self.file_context.suggest(event.paths)

    def on_pasted_message_view_requested(self, event: PastedMessage.ViewRequested) -> None:
        from tui.screens.text_view import TextViewScreen

        self.push_screen(TextViewScreen(event.title, event.text))

    @on(ToolCallView.ViewRequested)
    def _view_call(self, event: ToolCallView.ViewRequested) -> None:
        self.conversation.show_call(event.record)

    @on(ContextPane.Dropped)
    @on(ContextPane.Accepted)
    @on(ContextPane.ReadOnlyToggled)
    @on(ContextPane.PreviewRequested)
    @on(ContextPane.UndoRequested)
    async def _context_entry(self, event: EntryMessage | ContextPane.UndoRequested) -> None:
        await self.file_context.handle(event)


def make_app(
    settings: "Settings | None",
    *,
    application: Any = None,
    handler: Any = None,
    clock: Clock | None = None,
    continue_session: bool = False,
    resume: str | None = None,
    load_settings: "Callable[[], Settings] | None" = None,
    project_root: Path | None = None,
) -> AssistantApp:
    """Build the app for the CLI and for tests.

    Args:
        settings: the loaded settings; None when ``load_settings`` loads them after the first frame.
        application: a ``core.app.Application``; built from the settings when neither it nor ``handler`` is given.
        handler: a handler to drive directly (tests inject scripted or fake-server-backed ones).
        clock: monotonic clock for elapsed times (tests pass a fixed one).
        continue_session: reopen the project's most recent session.
        resume: id of a session to reopen.
        load_settings: loads the settings after the first frame, in a thread, and then builds the Application there too (the CLI).
        project_root: the project directory, shown before the settings are loaded.
    """

    if application is not None:
        engine = Engine.running(settings, application)
    elif handler is not None:
        engine = Engine.driving(settings, handler)
    elif load_settings is not None:
        engine = Engine.deferred(load_settings, project_root=project_root)
    else:
        engine = Engine.built(settings)
    return AssistantApp(engine, clock=clock, session_request={"continue_session": continue_session, "resume": resume})


def run_app(load_settings: "Callable[[], Settings]", *, project_root: Path, continue_session: bool = False, resume: str | None = None) -> int:
    """Run the full-screen app until the user quits; returns its exit status. Settings and engine come after the first frame.

    Raises:
        core.cli.StartupError: the settings could not be loaded (the app has closed; the command prints it).
    """
    app = make_app(None, load_settings=load_settings, project_root=project_root, continue_session=continue_session, resume=resume)
    app.run()
    if app.startup.failure is not None:
        raise app.startup.failure
    return app.return_code or 0
