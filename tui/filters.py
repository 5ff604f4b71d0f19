"""A line filter that keeps control characters and hiding characters from content out of the terminal."""

from __future__ import annotations

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from core.text import changed_for_terminal, for_terminal


class ControlCharacterFilter(LineFilter):
    """Shows control characters in any widget's text as visible symbols.

    Applied to every line the app renders, so no widget (present or future) can pass
    an OSC 52 clipboard write, an OSC 8 link or a cursor movement from model or tool
    output to the terminal, nor reorder or hide text with bidirectional controls or tag
    characters (removed: they take no cells, so the line keeps its layout; what a person
    approves shows them as ``<U+202E>``, see :func:`core.text.visible_text`).
    """

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(not segment.control and changed_for_terminal(segment.text) for segment in segments):
            return segments
        return [
            segment if segment.control or not changed_for_terminal(segment.text) else Segment(for_terminal(segment.text), segment.style)
            for segment in segments
        ]
