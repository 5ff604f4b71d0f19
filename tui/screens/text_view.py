"""A full-screen read-only view of a long text (a complete tool result, a file preview)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea


class TextViewScreen(ModalScreen[None]):
    """Shows ``text`` in a scrollable, selectable, read-only area; Esc or q closes."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="view.close")]

    def __init__(self, title: str, text: str, *, language: str | None = None) -> None:
        super().__init__(classes="text-view-screen")
        self.title_text = title
        self.text = text
        self.language = language

    def compose(self) -> ComposeResult:
        with Vertical(id="text-view") as box:
            box.border_title = self.title_text
            area = TextArea(self.text, read_only=True, show_line_numbers=True, soft_wrap=False, id="text-view-area")
            area.cursor_blink = False
            if self.language:
                try:
                    area.language = self.language
                except Exception:  # unknown or unavailable grammar: plain text is fine
                    pass
            yield area
            yield Static("Esc or q to close", id="text-view-hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

