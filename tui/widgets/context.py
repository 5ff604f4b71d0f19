"""The file-context pane: what the next request contains, and how full the context is (the status line's figure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.format import CONTEXT_ESTIMATE_NOTE, context_figure, format_tokens
from tui.widgets.path_list import ELLIPSIS, shown_characters

WARN_AT = 0.8


@dataclass(frozen=True)
class ContextEntry:
    """A file in (or suggested for) the context."""

    path: str
    """Absolute path."""
    display: str
    """Path as shown (relative to the project)."""
    tokens: int
    source: Literal["picked", "suggested"] = "picked"
    read_only: bool = False


class EntryMessage(Message):
    """A message about one context entry."""

    def __init__(self, entry: ContextEntry) -> None:
        super().__init__()
        self.entry = entry


class ContextPane(Vertical):
    """Files in context: picked ones solid, suggestions dim; the total against the budget."""

    BINDINGS = [
        Binding("d,delete", "drop", "Drop", tooltip="Drop the file from the context (or dismiss a suggestion); u undoes", id="context.drop"),
        Binding("u,ctrl+z", "undo", "Undo", tooltip="Put back the file dropped last (or the suggestion dismissed last)", id="context.undo"),
        Binding("a", "accept", "Accept", tooltip="Accept a suggested file into the context", id="context.accept"),
        Binding("r", "read_only", "Read-only", tooltip="Toggle read-only (aider may read but not edit it); Enter previews", id="context.read_only"),
    ]
    """Each works only where it applies (``check_action``): a letter that does nothing here goes to the prompt."""

    class Dropped(EntryMessage):
        """The user dropped a file from the context (or dismissed a suggestion)."""

    class Accepted(EntryMessage):
        """The user accepted a suggested file."""

    class ReadOnlyToggled(EntryMessage):
        """The user toggled a file's read-only flag."""

    class PreviewRequested(EntryMessage):
        """The user asked to see a file."""

    class UndoRequested(Message):
        """The user asked to put back what was dropped (or dismissed) last."""

    def __init__(self, *, budget: int = 0, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[ContextEntry] = []
        self.metrics: dict[str, Any] = {"estimated_tokens": 0, "context_estimated_tokens": 0, "context_window": budget}
        """The handler's context figure (:class:`core.usage.ContextMeter` keys), as the status line shows it."""
        self._list = OptionList(id="context-files")
        # The scrollbar's column is always kept (one cell): at 80x24 the list's height can equal
        # its rows exactly, its scrollbar then comes and goes from one layout to the next, and the
        # screen kept the old scrollbar's track over the rows' last cells ("1.2k" read "1.").
        self._list.styles.scrollbar_gutter = "stable"
        self._list.styles.scrollbar_size_vertical = 1
        self._total = Static("", id="context-total", markup=False)
        self._total.tooltip = CONTEXT_ESTIMATE_NOTE
        self._undoable = False

    @property
    def budget(self) -> int:
        """The context window in tokens (0 while unknown)."""
        return int(self.metrics.get("context_window") or 0)

    def compose(self):  # type: ignore[override]
        yield self._list
        yield self._total

    def on_mount(self) -> None:
        self.border_title = "Context"
        self._refresh_view()

    @property
    def over_warning(self) -> bool:
        return context_figure(self.metrics)[0] >= WARN_AT

    def show_context(self, metrics: dict[str, Any]) -> None:
        """Take the handler's context figure (the metrics the status line is given) and redraw the total."""
        figure = {k: metrics[k] for k in ("estimated_tokens", "context_estimated_tokens", "context_window") if metrics.get(k) is not None}
        if figure and {**self.metrics, **figure} != self.metrics:
            self.metrics.update(figure)
            if self.is_mounted:
                self._refresh_view()

    def set_entries(self, entries: list[ContextEntry]) -> None:
        """Show these entries (picked first, then suggestions)."""
        self.entries = sorted(entries, key=lambda entry: entry.source != "picked")
        if self.is_mounted:
            self._refresh_view()

    def _refresh_view(self) -> None:
        highlighted = self._list.highlighted
        self._list.clear_options()
        self._list.add_options([Option(_entry_row(entry), id=entry.path) for entry in self.entries])
        if self.entries:
            self._list.highlighted = min(highlighted or 0, len(self.entries) - 1)
        self._refresh_total()
        self._refresh_keys()

    def on_resize(self) -> None:
        self._refresh_total()

    def _refresh_total(self) -> None:
        """The lines under the list: the hint when empty, the files and the context figure, suggestions, the warning.

        The figure's line never wraps: where ``2 files · context ~41k/200k`` is wider than the pane
        (under 80 columns) it reads ``2 files · ~41k/200k`` (a wrapped figure went below the pane's
        last row at 60x20, and the pane showed no figure at all).
        """
        fraction, figure = context_figure(self.metrics)
        picked = sum(1 for entry in self.entries if entry.source == "picked")
        text = Text()
        if not self.entries:
            text.append("No files yet: @ in the prompt, ctrl+o, or /add <glob>\n", style="dim")
        files = f"{picked} file{'s' if picked != 1 else ''}"
        line = f"{files} · context {figure}"
        width = self.content_size.width  # the total's width (the pane's content), known before the total is laid out
        text.append(line if not width or cell_len(line) <= width else f"{files} · {figure}")
        suggested = len(self.entries) - picked
        if suggested:
            text.append(f"\n{suggested} suggested (○): a accepts", style="dim")
        if self.over_warning:
            text.append(f"\n⚠ {fraction:.0%} of the context window", style="bold")
        self._total.update(text)
        self._total.set_class(self.over_warning, "-warning")

    def _current(self) -> ContextEntry | None:
        index = self._list.highlighted
        if index is None or not (0 <= index < len(self.entries)):
            return None
        return self.entries[index]

    def focus_files(self) -> None:
        """Put the focus on the list of files (ctrl+g)."""
        self._list.focus()

    def set_undoable(self, undoable: bool) -> None:
        """Whether there is a drop to undo (the controller keeps what was dropped): u and its footer key work only then."""
        if undoable != self._undoable:
            self._undoable = undoable
            self._refresh_keys()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        entry = self._current()
        if action == "drop":
            return entry is not None
        if action == "accept":
            return entry is not None and entry.source == "suggested"
        if action == "read_only":
            return entry is not None and entry.source == "picked"
        if action == "undo":
            return self._undoable
        return True

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._refresh_keys()

    def _refresh_keys(self) -> None:
        """The footer's d, a, r and u follow the highlighted entry (not while the app closes: no screen then)."""
        if self.is_attached:
            self.refresh_bindings()

    def action_undo(self) -> None:
        self.post_message(self.UndoRequested())

    def action_drop(self) -> None:
        if entry := self._current():
            self.post_message(self.Dropped(entry))

    def action_accept(self) -> None:
        entry = self._current()
        if entry and entry.source == "suggested":
            self.post_message(self.Accepted(entry))

    def action_read_only(self) -> None:
        entry = self._current()
        if entry and entry.source == "picked":
            self.post_message(self.ReadOnlyToggled(entry))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if entry := self._current():
            self.post_message(self.PreviewRequested(entry))


def _entry_row(entry: ContextEntry) -> Table:
    grid = Table.grid(expand=True, padding=(0, 0, 0, 1), pad_edge=False)  # one cell between the name and its count
    grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    grid.add_column(justify="right", no_wrap=True)
    if entry.source == "picked":
        name = EntryName(Text("● ", style="bold"), entry.display, "", Text(" ro", style="dim") if entry.read_only else Text())
    else:
        name = EntryName(Text("○ ", style="dim"), entry.display, "dim italic", Text())
    tokens = Text(format_tokens(entry.tokens), style="dim" if entry.source == "suggested" else "")
    grid.add_row(name, tokens)
    return grid


class EntryName:
    """A context row's mark, path and flag, fitted to the room the row leaves it: a path too long loses
    the middle of its directories, never its file name (at 80x24 the pane is 28 columns wide, and a
    deep path cut at the right showed only directories)."""

    def __init__(self, mark: Text, path: str, style: str, flag: Text) -> None:
        self.mark, self.path, self.style, self.flag = mark, path, style, flag

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        fixed = self.mark.cell_len + self.flag.cell_len
        return Measurement(fixed + 1, fixed + cell_len(self.path))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        room = options.max_width - self.mark.cell_len - self.flag.cell_len
        shown = "".join(ELLIPSIS if index is None else self.path[index] for index in shown_characters(self.path, room))
        text = Text.assemble(self.mark, (shown, self.style), self.flag, no_wrap=True, overflow="ellipsis")
        yield text
