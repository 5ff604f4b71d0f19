"""The full file picker: fuzzy search, Space multi-selects, Enter adds, Esc closes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option


if TYPE_CHECKING:
    from tui.file_source import FileSource

MAX_RESULTS = 50


class PickerInput(Input):
    """The search field; Space selects the highlighted file instead of typing (paths rarely contain spaces)."""

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "space":
            event.prevent_default()
            event.stop()
            await self.run_action("screen.toggle")


class FilePickerScreen(ModalScreen[list[str]]):
    """Pick files into the context. Returns the selected relative paths (empty when closed)."""

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

    def compose(self) -> ComposeResult:
        with Vertical(id="picker") as box:
            box.border_title = "Add files to the context"
            yield PickerInput(placeholder="Type to search files…", id="picker-input")
            yield OptionList(id="picker-results")
            yield Static("", id="picker-hint")

    def on_mount(self) -> None:
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

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self.refresh_results(event.value)

    def refresh_results(self, query: str) -> None:
        matches = self.files.search(query, MAX_RESULTS)
        self.results = [path for path, _ in matches]
        results = self.query_one(OptionList)
        results.clear_options()
        results.add_options([Option(self._row(path, positions), id=path) for path, positions in matches])
        results.highlighted = 0 if matches else None
        loaded = self.files.count
        self.query_one("#picker-hint", Static).update(
            f"{len(self.selected)} selected · {loaded} files · Space selects · Enter adds · Esc closes"
        )

    def _row(self, path: str, positions: list[int]) -> Text:
        text = Text(("[x] " if path in self.selected else "[ ] ") + path)
        for index in positions:
            text.stylize("bold reverse", index + 4, index + 5)
        return text

    def action_move(self, step: int) -> None:
        results = self.query_one(OptionList)
        if step > 0:
            results.action_cursor_down()
        else:
            results.action_cursor_up()

    def action_toggle(self) -> None:
        results = self.query_one(OptionList)
        if results.highlighted is None:
            return
        path = self.results[results.highlighted]
        if path in self.selected:
            self.selected.remove(path)
        else:
            self.selected.append(path)
        highlighted = results.highlighted
        self.refresh_results(self.query_one(Input).value)
        results.highlighted = highlighted

    def action_add(self) -> None:
        results = self.query_one(OptionList)
        chosen = list(self.selected)
        if not chosen and results.highlighted is not None and self.results:
            chosen = [self.results[results.highlighted]]
        self.dismiss(chosen)

    def action_close(self) -> None:
        self.dismiss([])
