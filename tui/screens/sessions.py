"""The /sessions picker: this project's sessions, newest first; Enter opens one."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.widgets.footer import KeyFooter


def session_row(info: Any, current: str | None) -> Table:
    """Date, turn count and first prompt (or title) of one session; ``this session`` stays however long the prompt."""
    grid = Table.grid(expand=True, padding=(0, 2))
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column(no_wrap=True, justify="right")
    grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    when = _dt.datetime.fromtimestamp(info.updated).strftime("%Y-%m-%d %H:%M")
    cells: list[Any] = [when, f"{info.turn_count} turn{'s' if info.turn_count != 1 else ''}", Text(info.label, no_wrap=True, overflow="ellipsis")]
    if info.id == current:
        grid.add_column(no_wrap=True)
        cells.append(Text("(this session)", style="italic dim"))
    grid.add_row(*cells)
    return grid


class SessionPickerScreen(ModalScreen[str | None]):
    """Pick a session to open; returns its id, or None when closed."""

    BINDINGS = [Binding("escape", "close", "Close", id="sessions.close")]

    def __init__(self, sessions: Sequence[Any], current: str | None = None) -> None:
        super().__init__(classes="sessions-screen")
        self.sessions = list(sessions)
        self.current = current

    def compose(self) -> ComposeResult:
        yield KeyFooter()  # this picker's keys, not those of the screen underneath
        with Vertical(id="sessions") as box:
            box.border_title = "Sessions of this project"
            options = OptionList(*[Option(session_row(info, self.current), id=info.id) for info in self.sessions], id="sessions-list")
            yield options
            hint = "Enter opens · Esc closes" if self.sessions else "No saved sessions yet · Esc closes"
            yield Static(hint, id="sessions-hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
