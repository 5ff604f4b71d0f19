"""A streamed answer's Markdown in segments: finished blocks are drawn once, only the last block is live.

Textual's ``Markdown.append`` re-parses from the last top-level block and keeps the
blocks before it, but they stay children of the one growing ``Markdown``: each write
lays out every block of the answer so far, and the finished ones were re-measured and
re-rendered as their container grew. Here, once a later block has begun, a finished
top-level block (paragraph, list, fenced code, table, heading...) leaves the
:class:`LiveMarkdown` for a :class:`MarkdownSegment` of its own, parsed and mounted
once, whose size never changes again; the live Markdown keeps only the unfinished
tail, so a write costs what is new. A block is finished once a later top-level block
has begun: markdown-it's token map (the line each top-level block starts on), which
Textual's append also re-parses from.

Identical look: inside one ``Markdown`` the vertical margins of neighbouring blocks
collapse (the larger wins); between two widgets they would add up. So a segment and the
live Markdown carry their first block's top margin (and a segment its last block's
bottom margin) themselves, the block's own set to 0, and the message's vertical layout
collapses them exactly as the single ``Markdown`` did.
"""

from __future__ import annotations

from typing import Awaitable, Callable

from textual.await_complete import AwaitComplete
from textual.widgets.markdown import MarkdownBlock

from tui.widgets.markdown_table import ChatMarkdown

FinishedBlocks = Callable[[list[str]], Awaitable[None]]
"""Mounts one segment per finished block's source text (before the live Markdown)."""


def _blocks(container: ChatMarkdown) -> list[MarkdownBlock]:
    return [child for child in container.children if isinstance(child, MarkdownBlock)]


def lift_margins(container: ChatMarkdown, *, bottom: bool) -> None:
    """Carry the top margin of ``container``'s first block (and with ``bottom`` its last block's bottom one) on
    ``container`` itself, so that its parent's layout collapses it with the neighbours' as one Markdown would.

    Idempotent: a first block lifted already is left; a new first block (the one before it moved
    out, or was replaced) brings its own margin, 0 included.
    """
    blocks = _blocks(container)
    top, _, low, _ = container.styles.margin
    if blocks and blocks[0] is not getattr(container, "_lifted_top", None):
        first = blocks[0]
        top, right, first_bottom, left = first.styles.margin
        if top:
            first.styles.margin = (0, right, first_bottom, left)
        container._lifted_top = first  # type: ignore[attr-defined]
    elif not blocks:
        top = 0
    if bottom and blocks:
        last = blocks[-1]
        last_top, right, low, left = last.styles.margin
        if low:
            last.styles.margin = (last_top, right, 0, left)
    if (top, low) != (container.styles.margin.top, container.styles.margin.bottom):
        container.styles.margin = (top, 0, low, 0)


class MarkdownSegment(ChatMarkdown):
    """One finished top-level block of a streamed answer: parsed and mounted once, then left alone."""

    def update(self, markdown: str) -> AwaitComplete:
        """Mount the block of ``markdown`` (a finished block is small: parsed here, not in a thread)."""
        self._markdown = markdown
        blocks = self._build_from_source(markdown)

        async def mount() -> None:
            async with self.lock:
                await self.query_children(MarkdownBlock).remove()
                await self.mount_all(blocks)
                lift_margins(self, bottom=True)

        return AwaitComplete(mount())


class LiveMarkdown(ChatMarkdown):
    """The live tail of a streamed answer; knows whether an append is still being rendered (parsed and mounted).

    While :attr:`segmenting`, after each append the blocks that a later block has closed
    are handed to ``finished`` as their source text and removed from here (in one
    batch: no frame shows a block twice or not at all), so this Markdown holds only the
    block still being written. ``appended`` is called once no append is pending.
    """

    def __init__(self, *, finished: FinishedBlocks, appended: Callable[[], None], classes: str = "") -> None:
        super().__init__(classes=classes)
        self._finished = finished
        self._appended = appended
        self._appending = 0
        self.appends_done = 0
        """Appends rendered so far (a refresh after the latest one means the blocks' heights are current)."""
        self.segmenting = True
        """True while streaming: finished blocks leave for segments after each append."""

    @property
    def busy(self) -> bool:
        """True while an append is being parsed and mounted."""
        return self._appending > 0

    @property
    def blocks(self) -> list[MarkdownBlock]:
        """The top-level blocks mounted here."""
        return _blocks(self)

    def append(self, markdown: str) -> AwaitComplete:
        pending = super().append(markdown)
        self._appending += 1

        async def appended() -> None:
            try:
                await pending
                if self.segmenting:
                    await self._hand_over_finished()
            finally:
                self._appending -= 1
                self.appends_done += 1
                if not self._appending:
                    self._appended()

        return AwaitComplete(appended())

    async def _hand_over_finished(self) -> None:
        """Move every block but the last out, to segments of their own.

        Under the Markdown's lock: an append queued meanwhile (``MarkdownStream.stop`` sends the
        rest while a shielded append still runs) parses either before or after the move, never
        half-way, so no block is handed over twice.
        """
        async with self.lock:
            blocks = self.blocks
            starts = [block.source_range[0] for block in blocks]
            if len(blocks) < 2 or starts != sorted(set(starts)) or not starts[-1]:
                lift_margins(self, bottom=False)  # a block that replaced the first one brings its own top margin
                return
            lines = self.source.splitlines(keepends=True)
            cut = starts[-1]
            texts = ["".join(lines[start:end]) for start, end in zip([0, *starts[1:-1]], starts[1:])]
            last = blocks[-1]
            # Textual keeps the source and the line its next append re-parses from: both lose the cut lines,
            # before any await (an append called meanwhile adds its text to the source at once, lock or not).
            self._markdown = self._markdown[sum(map(len, texts)) :]
            self._last_parsed_line = max(0, self._last_parsed_line - cut)
            start, end = last.source_range
            last.source_range = (start - cut, end - cut)
            with self.app.batch_update():
                await self._finished(texts)
                await self.remove_children(blocks[:-1])
                lift_margins(self, bottom=False)

    def stop_segmenting(self) -> None:
        """The stream ended: what is here stays here."""
        self.segmenting = False

    def reset_margins(self) -> None:
        """After a whole new text (``update``): the first block's top margin is carried again."""
        lift_margins(self, bottom=False)
