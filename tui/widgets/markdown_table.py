"""Markdown tables drawn by one widget (stock Textual mounts a widget per cell).

Every layout pass visits every mounted widget, and a table of n cells cost
n + 2 widgets (half the widgets of a typical answer). :class:`CompactTable`
draws the same table, cells wrapped to fit, with box lines, as one widget.
"""

from __future__ import annotations

from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownTable

MIN_COLUMN = 3
"""Narrowest a column gets before the table is cut at the right edge."""


def column_widths(natural: list[int], available: int) -> list[int]:
    """Column widths (content cells, without padding and lines) fitting ``available`` cells.

    Columns narrower than an even share keep their natural width; the rest share
    what is left in proportion to their natural widths (at least :data:`MIN_COLUMN`).
    """
    if sum(natural) <= available:
        return list(natural)
    widths = list(natural)
    wide = set(range(len(natural)))
    while wide:
        share = max(MIN_COLUMN, available - sum(widths[i] for i in range(len(widths)) if i not in wide)) / len(wide)
        narrow = {i for i in wide if natural[i] <= share}
        if not narrow:
            break
        wide -= narrow
    fixed = sum(widths[i] for i in range(len(widths)) if i not in wide)
    room = max(available - fixed, MIN_COLUMN * len(wide))
    total = sum(natural[i] for i in wide) or 1
    for i in wide:
        widths[i] = max(MIN_COLUMN, natural[i] * room // total)
    return widths


class TableVisual(Visual):
    """A table of Content cells: header row, a line between rows, cells wrapped to their column."""

    def __init__(self, headers: list[Content], rows: list[list[Content]], header_style: Style, line_style: Style) -> None:
        columns = max([len(headers), *(len(row) for row in rows)] or [0])
        self.headers = [*headers, *([Content()] * (columns - len(headers)))]
        self.rows = [[*row, *([Content()] * (columns - len(row)))] for row in rows]
        self.header_style = header_style
        self.line_style = line_style
        self.natural = [max([cell.cell_length for cell in column] or [0]) for column in zip(self.headers, *self.rows)]
        self._lines: tuple[int, list[Content]] | None = None

    def _rule(self, widths: list[int], left: str, middle: str, right: str) -> Content:
        return Content.styled(left + middle.join("─" * (w + 2) for w in widths) + right, self.line_style)

    def lines(self, width: int) -> list[Content]:
        """The table's lines at ``width`` cells (cached for the last width)."""
        if self._lines is not None and self._lines[0] == width:
            return self._lines[1]
        columns = len(self.natural)
        if not columns:
            return []
        widths = column_widths(self.natural, width - 3 * columns - 1)
        bar = Content.styled("│", self.line_style)
        lines = [self._rule(widths, "┌", "┬", "┐")]
        for index, row in enumerate([self.headers, *self.rows]):
            if index:
                lines.append(self._rule(widths, "├", "┼", "┤"))
            cells = [cell.wrap(w, overflow="fold") or [Content()] for cell, w in zip(row, widths)]
            if index == 0:
                cells = [[line.stylize(self.header_style) for line in cell] for cell in cells]
            for y in range(max(len(cell) for cell in cells)):
                parts: list[Content | str] = [bar]
                for cell, w in zip(cells, widths):
                    text = cell[y] if y < len(cell) else Content()
                    parts += [" ", text.truncate(w, pad=True), " ", bar]
                lines.append(Content.assemble(*parts))
        lines.append(self._rule(widths, "└", "┴", "┘"))
        lines = [line.truncate(width) for line in lines]
        self._lines = (width, lines)
        return lines

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return sum(self.natural) + 3 * len(self.natural) + 1

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.lines(width))

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return Content("\n").join(self.lines(width)).render_strips(width, height, style, options)


class CompactTable(MarkdownTable):
    """A Markdown table as one widget; grows row by row while the answer streams."""

    DEFAULT_CSS = """
    CompactTable {
        width: 1fr;
        height: auto;
        margin-bottom: 1;
        & > .compact-table--header { color: $primary; text-style: bold; }
        & > .compact-table--lines { color: $foreground 25%; }
    }
    """
    COMPONENT_CLASSES = {"compact-table--header", "compact-table--lines"}

    def compose(self):  # type: ignore[override]
        self._headers, self._rows = self._get_headers_and_rows()
        self._blocks.clear()
        yield from ()

    def render(self) -> Visual:
        return TableVisual(self._headers, self._rows, self.get_visual_style("compact-table--header"), self.get_visual_style("compact-table--lines"))

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        if isinstance(block, MarkdownTable):
            self._headers, self._rows = block._get_headers_and_rows()
            self.refresh(layout=True)
            return
        await MarkdownBlock._update_from_block(self, block)


class ChatMarkdown(Markdown):
    """Markdown for the chat: tables are :class:`CompactTable`."""

    BLOCKS = {**Markdown.BLOCKS, "table_open": CompactTable}
