"""A list of matched paths that draws only its visible rows (the picker's results)."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

Match = tuple[str, list[int]]
"""A path and the indices of its matched characters."""

RowKey = tuple[str, tuple[int, ...], bool, bool]
"""What a row shows: path, matched positions, selected, under the cursor."""


class PathList(ScrollView, can_focus=False):
    """Paths with their matched characters highlighted, a ``[x]`` mark on selected ones, one cursor row.

    One widget draws every row (Textual's line API): replacing the results mounts
    nothing and asks for no layout (the widget's size never depends on them; only
    the scrollbar appearing or going does), and only the visible rows whose content
    changed are repainted, each drawn once per content (a cache of drawn rows).
    """

    DEFAULT_CSS = """
    PathList {
        height: 1fr;
        padding: 0 1;
        background: $surface;
        overflow-x: hidden;
        scrollbar-size-vertical: 1;
        & > .path-list--cursor {
            color: $block-cursor-blurred-foreground;
            background: $block-cursor-blurred-background;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .path-list--match {
            text-style: bold reverse;
        }
    }
    """
    COMPONENT_CLASSES = {"path-list--cursor", "path-list--match"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.matches: list[Match] = []
        self.selected: set[str] = set()
        self.highlighted: int | None = None
        self._styles: tuple[Style, Style, Style, Style] | None = None
        self._strips: LRUCache[tuple[RowKey, int], Strip] = LRUCache(256)

    def show(self, matches: list[Match], selected: set[str] | list[str]) -> None:
        """Replace the rows (the cursor goes to the first)."""
        before = self._visible_keys()
        self.matches = matches
        self.selected = set(selected)
        self.highlighted = 0 if matches else None
        size = Size(self.size.width, len(matches))
        if size != self.virtual_size:
            # Not through the reactive, which lays out the whole screen: the scrollbars are
            # updated here, and only their showing or hiding asks for a layout.
            self.set_reactive(Widget.virtual_size, size)
            self._scroll_update(size)
        self._repaint(before, scroll_to=0)

    def set_selected(self, selected: set[str] | list[str]) -> None:
        """Update the ``[x]`` marks."""
        before = self._visible_keys()
        self.selected = set(selected)
        self._repaint(before)

    @property
    def current(self) -> str | None:
        """The path under the cursor."""
        if self.highlighted is None or not 0 <= self.highlighted < len(self.matches):
            return None
        return self.matches[self.highlighted][0]

    def move(self, step: int) -> None:
        """Move the cursor, keeping it in view."""
        if not self.matches:
            return
        before = self._visible_keys()
        start = 0 if self.highlighted is None else self.highlighted
        self.highlighted = max(0, min(len(self.matches) - 1, start + step))
        top, height = self._window()
        target = None
        if self.highlighted < top:
            target = self.highlighted
        elif height and self.highlighted >= top + height:
            target = self.highlighted - height + 1
        self._repaint(before, scroll_to=target)

    def _window(self) -> tuple[int, int]:
        """The first visible row and how many rows fit."""
        return round(self.scroll_offset.y), self.scrollable_content_region.height

    def _row_key(self, row: int) -> RowKey | None:
        if not 0 <= row < len(self.matches):
            return None
        path, positions = self.matches[row]
        return (path, tuple(positions), path in self.selected, row == self.highlighted)

    def _visible_keys(self) -> tuple[int, list[RowKey | None]]:
        top, height = self._window()
        return top, [self._row_key(row) for row in range(top, top + height)]

    def _repaint(self, before: tuple[int, list[RowKey | None]], scroll_to: int | None = None) -> None:
        """Repaint the visible rows whose content changed since ``before`` (all of them after a scroll)."""
        top, old = before
        if scroll_to is not None and scroll_to != top:
            self.scroll_to(y=scroll_to, animate=False, immediate=True)
        if round(self.scroll_offset.y) != top or not self.is_mounted:
            self.refresh()
            return
        height = self._window()[1]
        old = old + [None] * (height - len(old))
        changed = [y for y in range(height) if self._row_key(top + y) != old[y]]
        if changed:
            first, last = changed[0], changed[-1]
            self.refresh_lines(top + first, last - first + 1)

    def on_click(self, event: events.Click) -> None:
        row = event.y + round(self.scroll_offset.y)
        if 0 <= row < len(self.matches):
            before = self._visible_keys()
            self.highlighted = row
            self._repaint(before)

    def notify_style_update(self) -> None:
        self._styles = None
        self._strips.clear()
        super().notify_style_update()

    def _row_styles(self) -> tuple[Style, Style, Style, Style]:
        """Plain, cursor, matched and matched-under-the-cursor styles (resolved once per style change)."""
        if self._styles is None:
            base = self.rich_style
            cursor = base + self.get_component_rich_style("path-list--cursor")
            match = self.get_component_rich_style("path-list--match", partial=True)
            self._styles = (base, cursor, base + match, cursor + match)
        return self._styles

    def render_line(self, y: int) -> Strip:
        row = y + round(self.scroll_offset.y)
        width = self.scrollable_content_region.width
        key = self._row_key(row)
        if key is None:
            return Strip.blank(width, self._row_styles()[0])
        strip = self._strips.get((key, width))
        if strip is None:
            strip = self._draw(key, width)
            self._strips[(key, width)] = strip
        return strip

    def _draw(self, key: RowKey, width: int) -> Strip:
        """One row: its mark, then the path fitted to the width with the matched characters highlighted."""
        path, positions, selected, under_cursor = key
        base, cursor, plain_match, cursor_match = self._row_styles()
        style, match = (cursor, cursor_match) if under_cursor else (base, plain_match)
        mark = "[x] " if selected else "[ ] "
        segments = [Segment(mark, style)]
        hits = set(positions)
        run, run_style = "", style
        for index in shown_characters(path, width - len(mark)):
            character, character_style = (ELLIPSIS, style) if index is None else (path[index], match if index in hits else style)
            if character_style != run_style and run:
                segments.append(Segment(run, run_style))
                run = ""
            run, run_style = run + character, character_style
        if run:
            segments.append(Segment(run, run_style))
        return Strip(segments).crop_extend(0, width, style)


ELLIPSIS = "…"


def shown_characters(path: str, room: int) -> list[int | None]:
    """The indices of ``path``'s characters to draw in ``room`` cells, ``None`` where an ellipsis stands.

    A path too long for the row loses the middle of its directories, never its file name (a
    deep path cut at the right hid what the user was looking for): ``src/…/deep/module.py``;
    a name too long even alone keeps its end (the extension).
    """
    if len(path) <= room or room <= 1:
        return list(range(len(path)))[: max(room, 0)]
    tail = len(path) - path.rfind("/")  # "/name" (the whole path when it has no directory)
    if tail + 1 >= room:
        return [None, *range(len(path) - room + 1, len(path))]
    head = room - 1 - tail
    return [*range(head), None, *range(len(path) - tail, len(path))]
