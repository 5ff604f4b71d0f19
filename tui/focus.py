"""Where the keys go: the panes (context, trace, chat) and the way back to the prompt.

The prompt is home. ctrl+g, ctrl+t and ctrl+l go to a pane (again: back); Esc in a pane goes
back; a printable key a pane has no use for is typing, so it goes to the prompt and the focus
with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.widget import Widget
from textual.widgets import Input, TextArea

from tui.widgets.chat_view import ChatView
from tui.widgets.context import ContextPane
from tui.widgets.prompt import PromptInput
from tui.widgets.trace import ToolTrace

if TYPE_CHECKING:
    from tui.hosts import FocusHost


class PaneFocus:
    """Moves the focus between the prompt and the panes for the app's bindings, and routes typing.

    Args:
        host: the running app (its screen and focus).
        prompt: where typing goes.
        context: the context pane (its file list takes the focus).
        trace: the tool trace (its newest call takes the focus).
        chat: the chat (it scrolls with the arrows; Tab reaches its messages).
    """

    def __init__(self, host: "FocusHost", prompt: PromptInput, *, context: ContextPane, trace: ToolTrace, chat: ChatView) -> None:
        self.host = host
        self.prompt = prompt
        self.context = context
        self.trace = trace
        self.chat = chat

    def in_a_pane(self) -> bool:
        """The focus is on the main screen, away from the prompt (Esc goes back)."""
        return self.host.screen is self.prompt.screen and self.host.focused is not self.prompt

    def toggle(self, name: str) -> None:
        """Go to the pane ``name`` (``context``, ``trace``, ``chat``), or back to the prompt when already there or ``name`` is ``prompt``."""
        pane = {"context": self.context, "trace": self.trace, "chat": self.chat}.get(name)
        focused = self.host.focused
        if pane is None or (focused is not None and pane in focused.ancestors_with_self):
            self.prompt.focus()
        elif pane is self.trace:
            if not self.trace.focus_last():
                self.host.notify("No tool calls yet.")
        elif pane is self.context:
            self.context.focus_files()
        else:
            self.chat.focus()

    def route(self, event: events.Key | events.Paste) -> None:
        """Before the app hands a key or a paste to the focused widget: typing a pane has no use for moves the focus to the prompt.

        Decided as the key arrives (not once it has bubbled back up), so the keys typed after it in the
        same burst follow it into the prompt: "add a reader" typed in the context pane is text, not a
        drop, an accept and a read-only toggle. A paste is typing too: no pane takes one, and
        Textual would hand it to the pane, which drops it.
        """
        if event.is_forwarded:
            return
        if isinstance(event, events.Paste):
            if self.in_a_pane() and not _takes_pastes(self.host.focused):
                self.host.screen.set_focus(self.prompt)
            return
        if not event.is_printable:
            return
        focused = self.host.focused
        if focused is None or not self.in_a_pane() or focused.check_consume_key(event.key, event.character):
            return
        screen = self.host.screen
        active = screen.active_bindings.get(event.key)
        if active is not None and active.enabled and active.node not in (screen, self.host) and active.node in focused.ancestors_with_self:
            return  # the pane's own key (d in the context pane, j in the trace)
        screen.set_focus(self.prompt)


def _takes_pastes(widget: Widget | None) -> bool:
    """Whether ``widget`` does something with a paste (Textual's text inputs do; panes, lists and the chat do not)."""
    return isinstance(widget, (Input, TextArea))
