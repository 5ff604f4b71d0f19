"""The ``/rewind`` screen: the user turns with what each changed, and the diff a rewind applies (issue 26).

Up/Down choose a turn (or an earlier rewind, to undo it); the diff below shows what rewinding the
files to before it writes, files changed outside the app marked. ``b``/Enter rewinds both,
``f`` the files, ``c`` the conversation; ``o`` also overwrites files changed outside the app;
Esc closes. Fits 80x24: the list takes the top, the diff scrolls (PageUp/PageDown), the footer
shows this screen's keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Sequence

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from core.text import visible_text
from tui.diff_text import diff_text
from tui.widgets.footer import KeyFooter


@dataclass(frozen=True)
class RewindChoice:
    """What the user chose: the row's key and what to rewind."""

    key: str
    files: bool
    conversation: bool
    force: bool = False


class RewindScreen(ModalScreen[RewindChoice | None]):
    """Choose a turn to rewind to before; dismisses with a :class:`RewindChoice`, or None."""

    DEFAULT_CSS = """
    RewindScreen { align: center middle; }
    #rewind-dialog { width: 100%; max-width: 120; height: 100%; max-height: 40; border: round $accent; padding: 0 1; }
    #rewind-rows { height: 40%; min-height: 4; border: none; }
    #rewind-diff-scroll { height: 1fr; border-top: solid $panel; }
    #rewind-hint { height: auto; color: $text-muted; }
    """

    BINDINGS = [
        Binding("enter,b", "choose(True, True)", "Both", id="rewind.both"),
        Binding("f", "choose(True, False)", "Files", id="rewind.files"),
        Binding("c", "choose(False, True)", "Conversation", id="rewind.conversation"),
        Binding("o", "toggle_force", "Overwrite outside edits", id="rewind.force"),
        Binding("pagedown", "scroll_diff(1)", "Diff down", show=False),
        Binding("pageup", "scroll_diff(-1)", "Diff up", show=False),
        Binding("escape,q", "cancel", "Close", id="rewind.close"),
    ]

    def __init__(self, rows: Sequence[Any], plan_for: Callable[[Any], Awaitable[Any]], selected: str = "") -> None:
        super().__init__(classes="rewind-screen")
        self.rows = list(rows)
        self.plan_for = plan_for
        self.selected = selected
        self.force = False
        self.plans: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield KeyFooter()  # this screen's keys, not those of the conversation underneath
        with Vertical(id="rewind-dialog") as dialog:
            dialog.border_title = "Rewind to before…"
            yield OptionList(*[Option(_row_text(row), id=row.key) for row in self.rows], id="rewind-rows")
            with VerticalScroll(id="rewind-diff-scroll"):
                yield Static("", id="rewind-diff", markup=False)
            yield Static(self._hint(), id="rewind-hint", markup=False)

    def on_mount(self) -> None:
        rows = self.query_one("#rewind-rows", OptionList)
        keys = [row.key for row in self.rows]
        rows.highlighted = keys.index(self.selected) if self.selected in keys else len(keys) - 1
        rows.focus()

    def _hint(self) -> Text:
        """What the footer's keys do not say: how to scroll the diff, and what ``o`` is set to now."""
        if self.force:
            return Text.assemble("PgUp/PgDn scroll the diff · outside edits: ", ("OVERWRITTEN", "bold"), " (o leaves them)")
        return Text("PgUp/PgDn scroll the diff · outside edits: left alone (o overwrites them)")

    @property
    def current(self) -> Any:
        index = self.query_one("#rewind-rows", OptionList).highlighted
        return self.rows[index] if index is not None and 0 <= index < len(self.rows) else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if self.current is not None:
            self.show_plan(self.current)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_choose(True, True)

    @work(exclusive=True, group="rewind-plan")
    async def show_plan(self, row: Any) -> None:
        diff = self.query_one("#rewind-diff", Static)
        if row.key not in self.plans:
            diff.update(Text("Working out the diff…", style="dim italic"))
            self.plans[row.key] = await self.plan_for(row)
        plan = self.plans[row.key]
        if self.current is not row:
            return
        lines = [f"{len(plan.changes)} file(s) would be restored"]
        if plan.outside:
            names = ", ".join(item.path for item in plan.outside)
            lines.append(f"changed outside the app since (left alone unless o): {names}")
        head = Text("\n".join(lines) + "\n", style="bold")
        diff.update(head + (diff_text(plan.diff) if plan.diff else Text("No file changes from here.", style="dim")))

    def action_choose(self, files: bool, conversation: bool) -> None:
        row = self.current
        if row is None:
            return
        if conversation and not row.is_turn:
            self.notify("That is a rewind: only its files can be rewound (f).", severity="warning")
            return
        self.dismiss(RewindChoice(row.key, files, conversation, self.force))

    def action_toggle_force(self) -> None:
        self.force = not self.force
        self.query_one("#rewind-hint", Static).update(self._hint())

    def action_scroll_diff(self, pages: int) -> None:
        scroll = self.query_one("#rewind-diff-scroll", VerticalScroll)
        (scroll.scroll_page_down if pages > 0 else scroll.scroll_page_up)(animate=False)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _row_text(row: Any) -> Table:
    """One row: ``turn 3  the prompt…  · 2 file(s) +4 −1: calc.py, …``; the prompt gives way, never the files."""
    grid = Table.grid(expand=True)
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    grid.add_column(no_wrap=True, overflow="ellipsis", max_width=44)
    name = f"turn {row.key}" if row.is_turn else f"undo {row.key}"
    label = Text(visible_text(" ".join(row.label.split())), no_wrap=True, overflow="ellipsis")
    if row.files:
        added = sum(f[2] for f in row.files)
        removed = sum(f[3] for f in row.files)
        files = Text(f"  · {len(row.files)} file(s) +{added} −{removed}: " + ", ".join(visible_text(f[0]) for f in row.files[:3]), style="dim")
    else:
        files = Text("  · no file changes", style="dim")
    grid.add_row(Text(f"{name:>8}  ", style="bold"), label, files)
    return grid
