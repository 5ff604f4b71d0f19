"""Code blocks in the chat: long lines fold at the pane's edge with a "↪" on each continuation.

Textual's ``MarkdownFence`` scrolls horizontally with a hidden scrollbar, so a long
line was cut at the pane's edge with no sign (and no key scrolls it). Here a line
wider than the block folds onto the next rows, each continuation led by a dim
"↪ ", so every character stays on screen and a fold is never mistaken for a line
break. Selecting text copies the code as written (the markers are not part of it).
"""

from __future__ import annotations

from dataclasses import replace

from textual.content import Content
from textual.css.styles import RulesMap
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets import Label
from textual.widgets.markdown import MarkdownFence

CONTINUATION = "↪ "
"""Leads each folded continuation of a long code line."""


def fold_line(line: Content, width: int) -> list[tuple[int, Content]]:
    """``line`` as rows of at most ``width`` cells: ``(offset in the line, text)``; rows after the first leave room for the marker."""
    if line.cell_length <= width or width <= len(CONTINUATION) + 1:
        return [(0, line)]
    rows: list[tuple[int, Content]] = []
    head = line.fold(width)[0]
    rows.append((0, head))
    offset = len(head.plain)
    for piece in line[offset:].fold(width - len(CONTINUATION)):
        rows.append((offset, piece))
        offset += len(piece.plain)
    return rows


class FoldedCodeVisual(Visual):
    """Highlighted code whose long lines fold with a continuation marker."""

    def __init__(self, code: Content, marker_style: Style) -> None:
        self.code = code
        self.lines = [line.expand_tabs() for line in code.split("\n", allow_blank=True)]
        self.marker_style = marker_style
        self._rows: tuple[int, list[tuple[int, int, Content]]] | None = None

    def rows(self, width: int) -> list[tuple[int, int, Content]]:
        """``(line number, offset in the line, text)`` per screen row at ``width`` (cached for the last width)."""
        if self._rows is not None and self._rows[0] == width:
            return self._rows[1]
        rows = [(y, x, piece) for y, line in enumerate(self.lines) for x, piece in fold_line(line, width)]
        self._rows = (width, rows)
        return rows

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return max([line.cell_length for line in self.lines] or [0])

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.rows(width))

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        marker = Content.styled(CONTINUATION, self.marker_style)
        selection, selection_style = options.selection, options.selection_style
        plain = replace(options, selection=None, selection_style=None)
        strips: list[Strip] = []
        for y, x, piece in self.rows(width):
            if selection is not None and selection_style is not None and (span := selection.get_span(y)) is not None:
                start, end = span
                end = len(self.lines[y].plain) if end == -1 else end
                if start < x + len(piece.plain) and end > x:
                    piece = piece.stylize(selection_style, max(0, start - x), min(len(piece.plain), end - x))
            # Offsets name the character in the source line, so a selection maps back to the code as written.
            room = width - (len(CONTINUATION) if x else 0)
            text = piece.render_strips(room, 1, style, plain)[0].apply_offsets(x, y).extend_cell_length(room, style.rich_style)
            if x:
                text = Strip.join([marker.render_strips(len(CONTINUATION), 1, style, plain)[0], text])
            strips.append(text)
        return strips[:height] if height is not None else strips


class FoldedCode(Label):
    """The code of a :class:`FoldingFence`."""

    DEFAULT_CSS = """
    FoldedCode { width: 1fr; }
    FoldedCode > .folded-code--marker { color: $text-muted; text-style: none; }
    """
    COMPONENT_CLASSES = {"folded-code--marker"}

    _folded: FoldedCodeVisual | None = None

    def render(self) -> Visual:
        code = self.visual if isinstance(self.visual, Content) else Content(str(self.content))
        marker_style = self.get_visual_style("folded-code--marker")
        folded = self._folded
        if folded is None or folded.code is not code or folded.marker_style != marker_style:
            folded = self._folded = FoldedCodeVisual(code, marker_style)  # kept: its rows are cached per width
        return folded

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        code = "\n".join(line.expandtabs(8) for line in str(self.content).split("\n"))  # as drawn (Content.expand_tabs)
        return selection.extract(code), "\n"


class FoldingFence(MarkdownFence):
    """A fenced or indented code block whose long lines fold instead of being cut."""

    DEFAULT_CSS = """
    FoldingFence { overflow: hidden hidden; }
    """

    def compose(self):  # type: ignore[no-untyped-def]
        yield FoldedCode(self._highlighted_code, id="code-content", expand=True)
