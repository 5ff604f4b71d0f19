"""A list of matched paths that draws only its visible rows (the picker's results)."""

from __future__ import annotations

from rich.segment import Segment
from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

Match = tuple[str, list[int]]
"""A path and the indices of its matched characters."""


class PathList(ScrollView, can_focus=False):
    """Paths with their matched characters highlighted, a ``[x]`` mark on selected ones, one cursor row.

    Replacing the results repaints the visible rows only: the widget's size never
    depends on them, so typing in the picker never asks for a layout (an
    OptionList re-measured and re-rendered every option, and its height changed).
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

    def show(self, matches: list[Match], selected: set[str] | list[str]) -> None:
        """Replace the rows (the cursor goes to the first)."""
        self.matches = matches
        self.selected = set(selected)
        self.highlighted = 0 if matches else None
        self.virtual_size = Size(self.size.width, len(matches))
        self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    def set_selected(self, selected: set[str] | list[str]) -> None:
        """Update the ``[x]`` marks."""
        self.selected = set(selected)
        self.refresh()

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
        start = 0 if self.highlighted is None else self.highlighted
        self.highlighted = max(0, min(len(self.matches) - 1, start + step))
        top, height = round(self.scroll_offset.y), self.scrollable_content_region.height
        if self.highlighted < top:
            self.scroll_to(y=self.highlighted, animate=False, immediate=True)
        elif height and self.highlighted >= top + height:
            self.scroll_to(y=self.highlighted - height + 1, animate=False, immediate=True)
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        row = event.y + round(self.scroll_offset.y)
        if 0 <= row < len(self.matches):
            self.highlighted = row
            self.refresh()

    def render_line(self, y: int) -> Strip:
        row = y + round(self.scroll_offset.y)
        width = self.scrollable_content_region.width
        base = self.rich_style
        if not 0 <= row < len(self.matches):
            return Strip.blank(width, base)
        path, positions = self.matches[row]
        style = base + self.get_component_rich_style("path-list--cursor") if row == self.highlighted else base
        match = style + self.get_component_rich_style("path-list--match", partial=True)
        mark = "[x] " if path in self.selected else "[ ] "
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
