"""The chat pane's scrolling: it follows new output until the reader scrolls away, then stays put.

Following rides on Textual's anchoring (``Widget.anchor()``): while anchored, the
compositor keeps the view at the bottom as content grows, with no scroll call per
write. Any user scroll releases the anchor (``release_anchor``); from then on new
output does not move the view, a "N new messages ↓" marker is docked at the
bottom, and End, ctrl+End from the prompt, a click on the marker or scrolling
back to the bottom resumes following.

Textual exposes ``is_anchored`` but not whether the anchor was released; that is
``Widget._anchor_released`` (Textual 8.2), read by :attr:`ChatView.following` and
guarded by ``tests/tui/test_chat_follow.py``.
"""

from __future__ import annotations

from typing import Literal

from textual import events
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

ScrollTarget = Literal["page_up", "page_down", "top", "bottom"]


class NewOutputMarker(Static):
    """"N new messages ↓", docked at the bottom of the chat while the reader is scrolled up."""

    DEFAULT_CSS = """
    NewOutputMarker {
        dock: bottom;
        width: 100%;
        height: 1;
        text-align: center;
        background: $accent-muted;
        color: $text-accent;
        text-style: bold;
    }
    NewOutputMarker:hover { background: $accent 40%; }
    """

    def __init__(self) -> None:
        super().__init__("", markup=False)
        self.display = False

    def show_count(self, count: int) -> None:
        """Show ``count`` unseen items (hidden at 0)."""
        self.display = count > 0
        if count:
            self.update(f"{count} new message{'s' if count != 1 else ''} ↓ · ctrl+end follows")

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Clicked())

    class Clicked(Message):
        """The reader clicked the marker."""


class ChatView(VerticalScroll):
    """The conversation. Follows new output unless scrolled up; the live widget tree is kept bounded.

    Every layout pass (each streamed write, each resize) visits every mounted
    widget, about 25 µs each, and keeps their caches alive, so only the newest
    messages stay mounted: at most :attr:`max_live` messages and :attr:`max_nodes`
    widgets in all (each Markdown block counts; a table is one). With 300, a
    resumed long session streamed with a p99 loop lag 4x that of an empty chat.
    Older ones are pruned; the transcript (f2, /export) keeps everything. While
    the reader is scrolled up nothing they might be reading is pruned: only items
    wholly above the view go, and only past :attr:`max_nodes_reading` widgets.
    """

    BINDINGS = [
        Binding("end", "follow", "Follow", tooltip="Jump to the newest output and follow it again", id="chat.follow"),
    ]

    max_live: int = 200
    max_nodes: int = 60
    max_nodes_reading: int = 240
    """The bound while the reader is scrolled up (the tree may grow until they come back)."""

    def __init__(self, *, max_live: int | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        if max_live is not None:
            self.max_live = max_live
        self.pruned = 0
        self._pruned_notice = Static("", classes="pruned-notice")
        self._pruned_notice.display = False
        self._notice_height = 0
        """The rows the pruned notice takes, as last written (its laid-out size lags until the next layout)."""
        self._marker = NewOutputMarker()
        self._unseen: set[Widget] = set()
        self._was_following = True
        self._growing: Widget | None = None
        """The newest item when the reader scrolled up (it may still be streaming)."""
        self._growing_height = 0

    def compose(self):  # type: ignore[override]
        yield self._pruned_notice
        yield self._marker

    def on_mount(self) -> None:
        self.anchor()

    # -- following -----------------------------------------------------------
    @property
    def following(self) -> bool:
        """True while new output keeps the view at the bottom (the reader has not scrolled away)."""
        return self.is_anchored and not self._anchor_released

    @property
    def unseen(self) -> int:
        """Items that arrived or grew below the view since the reader scrolled up."""
        return len(self._unseen)

    @property
    def items(self) -> list[Widget]:
        """The messages, notes and tool lines mounted now (oldest first)."""
        return [child for child in self.children if child is not self._pruned_notice and child is not self._marker]

    def follow(self) -> None:
        """Jump to the bottom and follow new output again."""
        self.anchor()
        self._sync()

    def scroll_chat(self, where: ScrollTarget) -> None:
        """Scroll by a page or to an end (the prompt's PageUp/PageDown/ctrl+Home/ctrl+End)."""
        if where == "bottom":
            self.follow()
        elif where == "top":
            self.scroll_home(animate=False)
        elif where == "page_up":
            self.scroll_page_up(animate=False)
        else:
            self.scroll_page_down(animate=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "follow":
            return not self.following  # in the footer only while scrolled up
        return True

    def action_follow(self) -> None:
        self.follow()

    def release_anchor(self) -> None:
        super().release_anchor()
        # A scroll that lands on (or stays at) the bottom keeps following: Textual only
        # re-anchors when the position changes, so PageDown at the bottom would stop it.
        self.call_later(self._settle)

    def _settle(self) -> None:
        if self._anchor_released and self.scroll_target_y >= self.max_scroll_y:
            self._anchor_released = False
        self._sync()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._was_following != self.following:
            self._sync()

    def _sync(self) -> None:
        """Show or hide the marker and tell the app when following changed."""
        following = self.following
        if following:
            self._unseen.clear()
        self._marker.show_count(0 if following else self.unseen)
        if following != self._was_following:
            self._was_following = following
            items = self.items
            self._growing = None if following or not items else items[-1]
            self._growing_height = self._growing.outer_size.height if self._growing is not None else 0
            self.refresh_bindings()  # the footer shows ctrl+end only while scrolled up
            if following:
                self.call_later(self.prune)

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        if not self.following and new.height > old.height and self._growing is not None and self._growing not in self._unseen:
            self.call_after_refresh(self._check_growth)

    def _check_growth(self) -> None:
        """Count the message that was newest when the reader scrolled up once it grows (a streamed answer)."""
        growing = self._growing
        if growing is not None and not self.following and growing.outer_size.height > self._growing_height:
            self._unseen.add(growing)
            self._marker.show_count(self.unseen)

    def on_new_output_marker_clicked(self, event: NewOutputMarker.Clicked) -> None:
        self.follow()

    # -- content -------------------------------------------------------------
    async def add(self, *widgets: Widget) -> None:
        """Mount widgets at the end and prune the oldest beyond the bounds.

        A user message (the reader just sent something) jumps back to the bottom.
        """
        await self.mount_all(widgets, before=self._marker)
        if any(widget.has_class("user-message") for widget in widgets):
            self.follow()
        elif not self.following:
            self._unseen.update(widgets)
            self._marker.show_count(self.unseen)
        await self.prune()

    async def prune(self) -> None:
        """Remove the oldest messages while the bounds are exceeded (the newest always stays).

        While the reader is scrolled up, only items wholly above the view are removed,
        and the view is moved up by their height so what the reader sees stays put.
        """
        live = self.items
        weights = [1 + sum(1 for _ in child.walk_children()) for child in live]
        reading = not self.following
        max_nodes = self.max_nodes_reading if reading else self.max_nodes
        total, cut = sum(weights), 0
        while cut < len(live) - 1 and (len(live) - cut > self.max_live or total > max_nodes):
            if reading and live[cut + 1].virtual_region.y > self.scroll_y:
                break  # the next kept item would start inside the view: this one may be on screen
            total -= weights[cut]
            cut += 1
        if not cut:
            return
        shift = live[cut].virtual_region.y - live[0].virtual_region.y if reading else 0
        # The notice's height as last written, not its laid-out size: two prunes before the
        # next layout (a burst of output) would otherwise count a new notice twice.
        notice_before = self._notice_height
        self.pruned += cut
        self._unseen.difference_update(live[:cut])
        await self.remove_children(live[:cut])
        notice = f"… {self.pruned} earlier items are not shown here: f2 shows the whole transcript, /export writes it"
        self._pruned_notice.update(notice)
        self._pruned_notice.display = True
        self._notice_height = self._pruned_notice.get_content_height(self.size, self.size, self.scrollable_content_region.width)
        if reading:
            y = max(0, self.scroll_y - shift + (self._notice_height - notice_before))
            self.set_scroll(None, y)
            self.scroll_target_y = y

    async def clear(self) -> None:
        """Remove every message."""
        await self.remove_children(self.items)
        self.pruned = 0
        self._unseen.clear()
        self._pruned_notice.display = False
        self._notice_height = 0
        self.follow()
