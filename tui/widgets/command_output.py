"""A command the user ran (``/run``, ``/test``): its output live, then how it ended."""

from __future__ import annotations

from rich.text import Text

from tui.widgets.chat import NoteMessage

LIVE_LINES = 15
KEEP_CHARS = 6_000


class CommandOutput(NoteMessage):
    """Shows the last lines of a running command, then its result (a note styled by outcome)."""

    def __init__(self, title: str) -> None:
        super().__init__("(running…)", kind="info", title=title)
        self._tail = ""
        self.lines = 0

    def append(self, text: str) -> None:
        """More output arrived: keep the end, show the last lines."""
        self._tail = (self._tail + text)[-KEEP_CHARS:]
        self.lines += text.count("\n")
        self.update(Text("\n".join(self._tail.rstrip("\n").splitlines()[-LIVE_LINES:])))

    def finish(self, content: str, *, failed: bool) -> None:
        """The command ended: show the result (its last lines) in the outcome's colours."""
        self.remove_class("-info")
        self.add_class("-error" if failed else "-info")
        lines = content.rstrip("\n").splitlines()
        shown = lines[-LIVE_LINES:]
        if len(lines) > len(shown):
            shown.insert(0, f"… {len(lines) - len(shown)} earlier lines (the whole output is in the conversation)")
        self.body = content
        self.update(Text("\n".join(shown)))
