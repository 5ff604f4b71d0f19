"""A yes/no question, keyboard first (y / n or Esc)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui.widgets.footer import KeyFooter


class ConfirmScreen(ModalScreen[bool]):
    """Ask ``question``; dismisses with True (y) or False (n, Esc)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, question: str, yes: str = "Yes") -> None:
        super().__init__(classes="confirm-screen")
        self.title_text = title
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        yield KeyFooter()  # this dialog's keys, not those of the screen underneath
        with Vertical(id="confirm-dialog") as dialog:
            dialog.border_title = self.title_text
            yield Static(Text(self.question), id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes} (y)", id="yes", variant="warning")
                yield Button("No (n)", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
