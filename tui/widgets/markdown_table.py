"""Markdown tables and lists drawn by one widget each (stock Textual mounts a widget per cell or item part).

Every layout pass visits every mounted widget: a table of n cells cost n + 2
widgets, a list of n items 4n + 1; together most of the widgets of a typical
answer. :class:`CompactTable` draws the same table, cells wrapped to fit, with
box lines; :class:`CompactBulletList` and :class:`CompactOrderedList` draw a
list whose items hold only paragraphs (others keep the stock widgets).
"""

from __future__ import annotations

from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock
from textual.widgets._markdown import (  # private: guarded by tests/tui/test_textual_internals.py
    MarkdownBulletList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownParagraph,
    MarkdownTable,
)

from tui.widgets.markdown_code import FoldingFence

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


class ListVisual(Visual):
    """List items: a symbol, then the item's paragraphs wrapped with a hanging indent."""

    def __init__(self, items: list[tuple[str, list[Content]]], bullet_style: Style) -> None:
        self.items = items
        self.bullet_style = bullet_style
        self.indent = max([len(symbol) for symbol, _ in items] or [0])
        self._lines: tuple[int, list[Content]] | None = None

    def lines(self, width: int) -> list[Content]:
        """The list's lines at ``width`` cells (cached for the last width)."""
        if self._lines is not None and self._lines[0] == width:
            return self._lines[1]
        lines: list[Content] = []
        room = max(1, width - self.indent)
        for symbol, paragraphs in self.items:
            first = True
            for paragraph in paragraphs or [Content()]:
                for line in paragraph.wrap(room) or [Content()]:
                    lead = Content.styled(symbol.ljust(self.indent), self.bullet_style) if first else Content(" " * self.indent)
                    lines.append(Content.assemble(lead, line))
                    first = False
        self._lines = (width, lines)
        return lines

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.indent + max([p.cell_length for _, ps in self.items for p in ps] or [0])

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.lines(width))

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return Content("\n").join(self.lines(width)).render_strips(width, height, style, options)


class _CompactList:
    """One widget for a list whose items hold only paragraphs; otherwise the stock item widgets."""

    DEFAULT_CSS = """
    & > .compact-list--bullet { color: $text-primary; }
    """
    COMPONENT_CLASSES = {"compact-list--bullet"}
    _items: list[tuple[str, list[Content]]] | None = None

    def _symbols(self, items: list[MarkdownListItem]) -> list[str]:
        raise NotImplementedError

    def _compact_items(self) -> list[tuple[str, list[Content]]] | None:
        items = [block for block in self._blocks if isinstance(block, MarkdownListItem)]  # type: ignore[attr-defined]
        if not all(isinstance(child, MarkdownParagraph) for item in items for child in item._blocks):
            return None
        return [(symbol, [child._content for child in item._blocks]) for symbol, item in zip(self._symbols(items), items)]

    def compose(self):  # type: ignore[no-untyped-def]
        self._items = self._compact_items()
        if self._items is None:
            yield from super().compose()  # type: ignore[misc]
        else:
            self._blocks.clear()  # type: ignore[attr-defined]

    def render(self) -> Visual:
        if self._items is None:
            return super().render()  # type: ignore[misc]
        return ListVisual(self._items, self.get_visual_style("compact-list--bullet"))  # type: ignore[attr-defined]

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        if self._items is not None and type(block) is type(self):
            items = block._compact_items()  # type: ignore[attr-defined]
            if items is not None:
                self._items = items
                self.refresh(layout=True)  # type: ignore[attr-defined]
                return
        await MarkdownBlock._update_from_block(self, block)  # type: ignore[arg-type]


class CompactBulletList(_CompactList, MarkdownBulletList):
    """A bullet list as one widget (items of paragraphs only)."""

    DEFAULT_CSS = "CompactBulletList {" + _CompactList.DEFAULT_CSS + "}"
    COMPONENT_CLASSES = _CompactList.COMPONENT_CLASSES

    def _symbols(self, items: list[MarkdownListItem]) -> list[str]:
        return [item.bullet for item in items]


class CompactOrderedList(_CompactList, MarkdownOrderedList):
    """A numbered list as one widget (items of paragraphs only)."""

    DEFAULT_CSS = "CompactOrderedList {" + _CompactList.DEFAULT_CSS + "}"
    COMPONENT_CLASSES = _CompactList.COMPONENT_CLASSES

    def _symbols(self, items: list[MarkdownListItem]) -> list[str]:
        try:
            start = int(items[0].bullet) if items else 1
        except ValueError:
            start = 1
        numbers = [f"{number}. " for number in range(start, start + len(items))]
        width = max([len(n) for n in numbers] or [0]) + 1
        return [n.rjust(width) for n in numbers]


class ChatMarkdown(Markdown):
    """Markdown for the chat: tables and lists of paragraphs are one widget each; long code lines fold."""

    BLOCKS = {
        **Markdown.BLOCKS,
        "table_open": CompactTable,
        "bullet_list_open": CompactBulletList,
        "ordered_list_open": CompactOrderedList,
        "fence": FoldingFence,
        "code_block": FoldingFence,
    }
