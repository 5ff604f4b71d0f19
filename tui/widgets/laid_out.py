"""Widgets in the chat are laid out once per change, not twice.

After a layout, Textual's screen tells each widget its new size through
``Widget._size_updated``, which sets the ``virtual_size`` reactive; that reactive is
declared ``layout=True``, so every widget whose size changed asks for another layout
and a full repaint of itself. The layout they ask for was the one just made: the
compositor already placed everything at those sizes and redraws the regions that
changed. Every streamed write paid for it: a second layout and a second redraw of
the whole visible chat (the chat's virtual size grows with each write) that drew no
new line. Textual itself skips the reactive's refresh when it lays out on scroll
(``layout=False``).

:class:`LaidOutOnce` keeps the reactive (its watchers run, the chat's growth count
reads it) and drops only the refresh it requested from within the layout: a layout
or repaint pending before is kept, except on a widget's first layout (a block whose
text was set before it was mounted is measured afresh and drawn whole in that frame;
its request came back as a second layout). Measured with 8,000 characters in
200-character writes at 80x38: 2.0 layouts and 2 whole-chat redraws per write before,
1.0 and one redraw (plus the scrollbar) after. Checked in
``tests/tui/test_stream_layouts.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from textual.geometry import Size
from textual.widget import Widget

W = TypeVar("W", bound=type[Widget])


class LaidOutOnce:
    """A widget that does not ask for another layout because the last one resized it.

    A mixin placed before the widget's class (not a Widget itself: Textual's CSS type
    names follow the first Widget base, which must stay the widget's own).
    """

    _laid_out = False
    """True once the screen has laid this widget out."""

    if TYPE_CHECKING:  # Widget's, which follows this mixin
        _layout_required: bool
        _repaint_required: bool

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        layout_pending, repaint_pending = self._layout_required, self._repaint_required
        resized: bool = super()._size_updated(size, virtual_size, container_size, layout)  # type: ignore[misc]
        if layout:
            # The virtual_size reactive asked for a layout at the size just laid out: drop that request.
            # A widget laid out for the first time was measured afresh (its parent's children changed)
            # and is drawn whole in this frame: what it asked for before (its text set before it was
            # mounted) is done too.
            first = not self._laid_out
            self._laid_out = True
            self._layout_required = layout_pending and not first
            self._repaint_required = repaint_pending and not first
        return resized


def laid_out_once(cls: W) -> W:
    """``cls`` with :class:`LaidOutOnce` (same name, so the same CSS rules match it)."""
    if issubclass(cls, LaidOutOnce):
        return cls
    return type(cls.__name__, (LaidOutOnce, cls), {"__module__": cls.__module__, "__doc__": cls.__doc__})  # type: ignore[return-value]
