"""A line filter that keeps control characters from content out of the terminal."""

from __future__ import annotations

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from core.text import has_controls, visible_controls


class ControlCharacterFilter(LineFilter):
    """Shows control characters in any widget's text as visible symbols.

    Applied to every line the app renders, so no widget (present or future) can pass
    an OSC 52 clipboard write, an OSC 8 link or a cursor movement from model or tool
    output to the terminal.
    """

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(not segment.control and has_controls(segment.text) for segment in segments):
            return segments
        return [
            segment if segment.control or not has_controls(segment.text) else Segment(visible_controls(segment.text), segment.style)
            for segment in segments
        ]
