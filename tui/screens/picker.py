"""The full file picker: fuzzy search, Space multi-selects, Enter adds, Esc closes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.geometry import Size
from textual.reactive import Reactive
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tui import runtime
from tui.widgets.footer import KeyFooter
from tui.widgets.path_list import PathList

if TYPE_CHECKING:
    from tui.file_source import FileSource

MAX_RESULTS = 50


class PickerInput(Input):
    """The search field; Space selects the highlighted file instead of typing (paths rarely contain spaces).

    Its virtual size (the text's width, for horizontal scrolling) changes with every
    character; Textual's Input asks for a layout of the whole screen then, though the
    field's own size is fixed by its style. Here that change only repaints the field.
    """

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "space":
            event.prevent_default()
            event.stop()
            await self.run_action("screen.toggle")


class FilePickerScreen(ModalScreen[list[str]]):
    """Pick files into the context. Returns the selected relative paths (empty when closed).

    Each keystroke searches on the event loop (the matcher answers 80,000 paths in a
    few milliseconds; a thread only added its start, the GIL's hand-overs and a hop
    back to the loop) and repaints only the visible rows, in the frame that shows the
    typed character. No full garbage collection runs while it is open.
    """

    BINDINGS = [
        Binding("escape", "close", "Close", id="picker.close"),
        Binding("space,tab", "toggle", "Select", id="picker.toggle", priority=True),
        Binding("enter", "add", "Add", id="picker.add", priority=True),
        Binding("down", "move(1)", show=False, priority=True),
        Binding("up", "move(-1)", show=False, priority=True),
    ]

    def __init__(self, files: "FileSource") -> None:
        super().__init__(classes="picker-screen")
        self.files = files
        self.selected: list[str] = []
        self.results: list[str] = []
        self._filtered = False
        self._resume_collections = lambda: None
        self._hint = ""

    def compose(self) -> ComposeResult:
        yield KeyFooter()  # the picker's keys, not the conversation's '⏎ Send' underneath (issue 23)
        with Vertical(id="picker") as box:
            box.border_title = "Add files to the context"
            yield PickerInput(placeholder="Type to search files…", id="picker-input")
            yield PathList(id="picker-results")
            yield Static("", id="picker-hint")

    def on_mount(self) -> None:
        self._resume_collections = runtime.defer_full_collections()
        self.query_one(Input).focus()
        self.refresh_results("")
        self._seen = (self.files.generation, self.files.count)
        self.set_interval(0.25, self._maybe_refresh)

    def _maybe_refresh(self) -> None:
        # Files are indexed in the background: redraw when the listing changed.
        seen = (self.files.generation, self.files.count)
        if seen != self._seen:
            self._seen = seen
            self.refresh_results(self.query_one(Input).value)

    def on_unmount(self) -> None:
        self._resume_collections()

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self.refresh_results(event.value)

    def refresh_results(self, query: str) -> None:
        """Search for ``query`` and show the best matches."""
        matches = self.files.search(query, MAX_RESULTS)
        self.results = [path for path, _ in matches]
        self._filtered = bool(query.strip())
        self.query_one(PathList).show(matches, self.selected)
        self._update_hint()

    def _update_hint(self) -> None:
        hint = f"{len(self.selected)} selected · {self._shown()} · Space selects · Enter adds · Esc closes"
        if hint != self._hint:  # typing mostly leaves it as it was: no repaint then
            self._hint = hint
            self.query_one("#picker-hint", Static).update(hint, layout=False)

    def _shown(self) -> str:
        """How many files the list holds: all of them, or how many of them match the query."""
        total = self.files.count
        if not self._filtered:
            return f"{total:,} files"
        shown = len(self.results)
        return f"top {shown} of {total:,} files" if shown >= MAX_RESULTS else f"{shown} of {total:,} files"

    def action_move(self, step: int) -> None:
        self.query_one(PathList).move(step)

    def action_toggle(self) -> None:
        path = self.query_one(PathList).current
        if path is None:
            return
        if path in self.selected:
            self.selected.remove(path)
        else:
            self.selected.append(path)
        self.query_one(PathList).set_selected(self.selected)
        self._update_hint()

    def action_add(self) -> None:
        chosen = list(self.selected)
        current = self.query_one(PathList).current
        if not chosen and current is not None:
            chosen = [current]
        self.dismiss(chosen)

    def action_close(self) -> None:
        self.dismiss([])
