"""The footer: the keys that work where the focus is, fitted to the terminal's width."""

from __future__ import annotations

from typing import Iterable

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # private: guarded by tests/tui/test_textual_internals.py

DROP_ORDER = (
    "transcript",
    "toggle_focus('trace')",
    "toggle_focus('context')",
    "newline",
    "pick_files",
)
"""Actions whose keys the footer leaves out first, in this order, when they do not all fit.

Then any other key, from the right. Send, Cancel (while a reply runs), Help and the
palette stay longest: with them a user can do and find everything else (f1 lists all keys).
"""


def key_width(key: FooterKey) -> int:
    """Cells a key takes in the compact footer: ``key description`` and a margin of one."""
    description = 1 + cell_len(key.description) if key.description else 0
    return cell_len(key.key_display) + description + 1


def fit_keys(keys: list[FooterKey], width: int, drop_order: Iterable[str] = DROP_ORDER) -> list[FooterKey]:
    """The keys that fit ``width`` cells, leaving out those of :data:`DROP_ORDER` first, then from the right."""
    kept = list(keys)
    order = list(drop_order)
    while kept and sum(key_width(key) for key in kept) > width:
        ranked = [key for name in order for key in kept if key.action == name]
        kept.remove(ranked[0] if ranked else kept[-1])
    return kept


class KeyFooter(Footer):
    """Textual's footer (compact), which leaves keys out whole rather than cut the last ones off.

    The command palette key is docked right and always shown; the others share what is left.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(compact=True, id=id)
        self._laid_out_width = 0

    def compose(self) -> ComposeResult:
        widgets = list(super().compose())
        keys = [w for w in widgets if isinstance(w, FooterKey) and not w.has_class("-command-palette")]
        docked = [w for w in widgets if w not in keys]
        width = self.size.width
        self._laid_out_width = width
        if width:
            room = width - sum(key_width(w) + 1 for w in docked if isinstance(w, FooterKey))  # + its left border
            kept = fit_keys(keys, room)
            keys = [key for key in keys if key in kept]
        yield from keys
        yield from docked

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._laid_out_width and self._bindings_ready:
            self.call_after_refresh(self.recompose)

