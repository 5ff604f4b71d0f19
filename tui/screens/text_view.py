"""A full-screen read-only view of a long text (a complete tool result, a file preview)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from tui.widgets.footer import KeyFooter


class TextViewScreen(ModalScreen[None]):
    """Shows ``text`` in a scrollable, selectable, read-only area, long lines wrapped (at 80 columns a
    transcript's paragraphs are one line each); Esc or q closes."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="view.close")]

    def __init__(self, title: str, text: str, *, language: str | None = None, wrap: bool = True) -> None:
        """``wrap``: long lines wrap at the screen's width (a wrapped line keeps one line number); False scrolls sideways."""
        super().__init__(classes="text-view-screen")
        self.title_text = title
        self.text = text
        self.language = language
        self.wrap = wrap

    def compose(self) -> ComposeResult:
        yield KeyFooter()  # this view's keys, not those of the screen underneath
        with Vertical(id="text-view") as box:
            box.border_title = self.title_text
            area = TextArea(self.text, read_only=True, show_line_numbers=True, soft_wrap=self.wrap, id="text-view-area")
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

