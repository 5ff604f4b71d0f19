"""A user message holding a large paste: the paste shows as one chip until expanded."""

from __future__ import annotations

from typing import Sequence

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message

from tui.paste import describe, segments
from tui.widgets.chat import UserMessage

PREVIEW_LINES = 12
"""Lines of a paste shown when its chip is expanded (v shows all of it in a scrollable view)."""
PREVIEW_CHARS = 2000
"""Characters of a paste shown at most when expanded (one huge line would fill the chat)."""


class PastedMessage(UserMessage, can_focus=True):
    """What the user sent, its large pastes collapsed to chips.

    Enter or a click shows the first lines of each paste; v opens the whole text in a
    scrollable view (drawing 2,000 lines inline took seconds per redraw).
    """

    BINDINGS = [
        Binding("enter,space", "toggle", "Preview", tooltip="Show or hide the first lines of a pasted message in the chat", id="pasted.toggle"),
        Binding("v", "view", "View paste", tooltip="A pasted message's whole text in a scrollable view", id="pasted.view"),
    ]
    COMPONENT_CLASSES = {"pasted-message--chip"}
    DEFAULT_CSS = """
    PastedMessage > .pasted-message--chip {
        color: $text-accent;
        background: $boost;
        text-style: bold;
    }
    PastedMessage:focus {
        border: round $accent;
    }
    """

    class ViewRequested(Message):
        """The user asked to see the message's pastes whole (v); the app opens them in a text view."""

        def __init__(self, title: str, text: str) -> None:
            super().__init__()
            self.title = title
            self.text = text

    def __init__(self, text: str, parts: list[tuple[str, bool]]) -> None:
        super().__init__(text)
        self.parts = parts
        self.expanded = False
        self.add_class("-pasted")
        self.tooltip = "Click or Enter: the first lines of the paste · v: all of it"

    def on_mount(self) -> None:
        self._draw()

    def _draw(self) -> None:
        chip_style = self.get_component_rich_style("pasted-message--chip")
        out = Text()
        after_chip = False
        for part, is_paste in self.parts:
            if not is_paste:
                out.append(part[1:] if after_chip and part.startswith("\n") else part)  # the chip ended its line
                after_chip = False
                continue
            after_chip = True
            if out and not out.plain.endswith("\n"):
                out.append("\n")
            out.append(f" {'▾' if self.expanded else '▸'} pasted {describe(part)} ", style=chip_style)
            out.append("\n")
            if self.expanded:
                out.append(_preview(part), style="dim")
        out.rstrip()
        self.update(out)

    def action_view(self) -> None:
        """Ask for the message's pastes in a scrollable, read-only view."""
        pastes = [part for part, is_paste in self.parts if is_paste]
        title = f"pasted {describe(pastes[0])}" if len(pastes) == 1 else f"{len(pastes)} pastes"
        self.post_message(self.ViewRequested(title, "\n".join(pastes)))

    def action_toggle(self) -> None:
        """Show or hide the pasted text."""
        self.expanded = not self.expanded
        self._draw()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_toggle()


def _preview(text: str) -> str:
    """The first lines of ``text`` and how much more there is, ending with a newline."""
    lines = text[:PREVIEW_CHARS].splitlines()[:PREVIEW_LINES]
    shown = "\n".join(lines)
    rest = text.count("\n") + (not text.endswith("\n")) - len(lines)
    if len(shown) < len(text.rstrip("\n")):
        more = f"{rest:,} more line{'s' if rest != 1 else ''}" if rest > 0 else "the rest of the line"
        shown += f"\n… {more} (v shows it all)"
    return shown + "\n"


def user_message(text: str, pastes: Sequence[str] = ()) -> UserMessage:
    """The chat's widget for a message the user sent: a plain one, or one with its pastes as chips."""
    parts = segments(text, list(pastes))
    if any(is_paste for _, is_paste in parts):
        return PastedMessage(text, parts)
    return UserMessage(text)
