"""The chat pane: user messages, streamed assistant answers, tool-call lines and notes."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal

from rich.text import Text
from textual import events
from textual.await_complete import AwaitComplete
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from core.narration import stop_label
from core.types import ToolCall
from tui.widgets.markdown_code import FoldingFence
from tui.widgets.markdown_table import ChatMarkdown
from tui.format import NEVER_RAN, STATUS_ICONS, STATUS_LABELS, STATUS_STYLES, format_duration, status_timing, summarize_args
from tui.plan import TagFilter
from tui.widgets.chat_view import ChatView, NewOutputMarker  # noqa: F401  (re-exported: the pane is imported with its messages)

NoteKind = Literal["info", "warning", "error"]


class UserMessage(Static):
    """What the user sent."""

    def __init__(self, text: str) -> None:
        super().__init__(Text(text), classes="user-message", markup=False)
        self.text = text
        self.border_title = "you"


def _inline_code(text: str) -> Text:
    """Text with `code` spans shown bold (without the backticks)."""
    out = Text()
    for index, part in enumerate(text.split("`")):
        out.append(part, style="bold" if index % 2 else "")
    return out


class PlanView(Static):
    """A ``/plan`` answer's steps as a checklist."""

    def __init__(self, steps: tuple[str, ...] | list[str]) -> None:
        self.steps = tuple(steps)
        body = Text()
        for number, step in enumerate(self.steps, 1):
            if number > 1:
                body.append("\n")
            body.append("☐ ", style="bold")
            body.append(f"{number}. ", style="dim")
            body.append_text(_inline_code(step))
        if not self.steps:
            body.append("(the plan has no steps)", style="dim italic")
        super().__init__(body, classes="plan")
        self.border_title = f"Plan · {len(self.steps)} step{'s' if len(self.steps) != 1 else ''}"


FLUSH_INTERVAL = 0.2
"""Seconds between writes to a streaming message's Markdown (deltas in between are joined).

Each write costs a layout and a redraw of the whole visible chat (anchored, everything in
view moves up), whatever the write's size: at 0.125 s that frame was over half the app's CPU
while a reply streamed at 60 tokens/s. Five writes a second still read as a stream."""
BACKLOG_CHARS = 800
"""Unwritten characters at which the stream waits for the Markdown to catch up (it never falls far behind)."""
_CATCH_UP_TIMEOUT = 2.0


class StreamedMarkdown(ChatMarkdown):
    """A Markdown that knows whether an append is still being rendered (parsed and mounted)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._appending = 0
        self.appends_done = 0
        """Appends rendered so far (a refresh after the latest one means the blocks' heights are current)."""

    @property
    def busy(self) -> bool:
        """True while an append is being parsed and mounted."""
        return self._appending > 0

    def append(self, markdown: str) -> AwaitComplete:
        pending = super().append(markdown)
        self._appending += 1

        async def appended() -> None:
            try:
                await pending
            finally:
                self._appending -= 1
                self.appends_done += 1
                if not self._appending and isinstance(self.parent, AssistantMessage):
                    self.parent.appended()

        return AwaitComplete(appended())


NORMAL_STOPS = frozenset({"", "end_turn", "tool_use", "stop", "stop_sequence", "tool_calls", "pause_turn"})
"""Stop reasons of an answer that ended as the model meant it (no label; after ``pause_turn`` the model goes on in the same message: ``tui.turn``)."""
class AssistantMessage(Vertical):
    """One assistant message, streamed as Markdown.

    Fragments go through ``Markdown.get_stream``, joined so the Markdown is
    written at most every :data:`FLUSH_INTERVAL` seconds (each write costs a
    parse of the last block and a layout, whatever its size), and never
    re-rendered whole. When the Markdown falls :data:`BACKLOG_CHARS` behind,
    :meth:`append` waits for it to catch up, so the screen stays close to what
    has arrived. ``<plan>`` answers become a :class:`PlanView` when the message
    completes.

    Blocks that can no longer change are given their measured height: Textual
    re-arranges every auto-height container whose parent changed height, so
    without this each write re-arranged every table and list of the message.
    """

    def __init__(self) -> None:
        super().__init__(classes="assistant-message")
        self.text = ""
        self.interrupted = False
        self.stop_reason = ""
        self.stop_label = ""
        """The line under a message that did not end normally ("■ interrupted", …); empty otherwise."""
        self.finished = False
        self._body = StreamedMarkdown(classes="body")
        self._stream: MarkdownStream | None = None
        self._filter = TagFilter()
        self._pending: list[str] = []
        self._pending_chars = 0
        self._written_at = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._drained: asyncio.Event | None = None
        self._sealed: list[Widget] = []
        self._sealed_width = 0
        self._laid_out_at = 0
        """``appends_done`` of the body when the screen last laid it out: equal to it, block heights are current."""

    def compose(self):  # type: ignore[override]
        yield self._body

    @property
    def shown(self) -> str:
        """The Markdown written to the screen so far (streamed text lags :attr:`text` by up to one write interval)."""
        return self._body.source

    async def append(self, fragment: str) -> None:
        """Append a streamed fragment."""
        self.text += fragment
        shown = self._filter.feed(fragment)
        if not shown or self.finished:
            return
        self._pending.append(shown)
        self._pending_chars += len(shown)
        if not self._body.busy and time.monotonic() - self._written_at >= FLUSH_INTERVAL:
            await self._write()
        elif self._timer is None or self._pending_chars >= BACKLOG_CHARS:
            self._schedule()
        if self._pending_chars >= BACKLOG_CHARS:
            await self._caught_up()

    async def _caught_up(self) -> None:
        """Wait (at most a few seconds) until what is pending has been written."""
        if self._drained is None:
            self._drained = asyncio.Event()
        try:
            await asyncio.wait_for(self._drained.wait(), _CATCH_UP_TIMEOUT)
        except asyncio.TimeoutError:
            pass

    def _schedule(self) -> None:
        if not self._pending or self.finished:
            return
        # Behind (a backlog waiting): write as soon as the last write is on screen.
        backlog = self._pending_chars >= BACKLOG_CHARS
        due = self._written_at + (0.0 if backlog else FLUSH_INTERVAL)
        if self._timer is not None:
            if not backlog:
                return
            self._timer.cancel()
        # Not set_timer: a one-shot Textual timer whose moment passed before it started never fires.
        self._timer = asyncio.get_running_loop().call_later(max(0.0, due - time.monotonic()), self._due)

    def _due(self) -> None:
        self._timer = None
        if not self._body.busy:  # else appended() schedules the next write
            self.call_later(self._write)

    async def _write(self) -> None:
        """Write what is pending to the Markdown stream."""
        if not self._pending or self.finished:
            return
        self.seal()  # blocks laid out since the last write: their layout change rides with this one
        text = "".join(self._pending)
        self._pending.clear()
        self._pending_chars = 0
        if self._drained is not None:
            self._drained.set()
            self._drained = None
        self._written_at = time.monotonic()
        if self._stream is None:
            self._stream = Markdown.get_stream(self._body)
        await self._stream.write(text)

    def appended(self) -> None:
        """The Markdown finished rendering a write: the next one goes after a refresh.

        (A mount holds frames back, so back-to-back writes would starve the screen.)
        """
        self.call_after_refresh(self._refreshed, self._body.appends_done)

    def _refreshed(self, appends: int) -> None:
        """Append number ``appends`` is on screen: if it is still the latest, its blocks' heights are real
        and may be sealed. The next write may go."""
        self._laid_out_at = appends
        self._schedule()

    def seal(self) -> None:
        """Give laid-out blocks that can no longer change their height (all but the last while streaming)."""
        if self._laid_out_at != self._body.appends_done or self._body.busy:
            return  # what the last append changed is not laid out yet: its heights would be stale
        blocks = list(self._body.children)
        if not self.finished:
            blocks = blocks[:-1]
        width = self._body.size.width
        if self._sealed and width != self._sealed_width:
            return  # on_resize unseals; sealing resumes after the next refresh
        sealed = set(self._sealed)
        for block in blocks:
            height = block.outer_size.height
            if block in sealed or not height or not block.display:
                continue
            block.styles.height = height
            self._sealed.append(block)
        self._sealed_width = width

    def unseal(self) -> None:
        """Let sealed blocks size themselves again (the width changed)."""
        for block in self._sealed:
            block.styles.height = None
        self._sealed.clear()

    def on_resize(self, event: events.Resize) -> None:
        if self._sealed and self._body.size.width != self._sealed_width:
            self.unseal()
            self.call_after_refresh(self.seal)

    async def finish(self, content: str | None = None, *, interrupted: bool = False, stop_reason: str = "") -> None:
        """End the stream; ``content`` (the complete message) replaces what streamed if it differs.

        ``interrupted``: the user cancelled it, or (``stop_reason="incomplete"``) the
        stream ended before the provider finished it. Other stop reasons that are not
        a normal end (``max_tokens``, ``refusal``, ...) are labelled as what they are.
        """
        if self.finished:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        await self._write()
        self.finished = True
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        held = self._filter.flush()
        if content is not None and content != self.text:
            self.text = content
            self.unseal()
            await self._body.update(content)
            held = ""
        from core.plan import split_plan  # not on the path to the first frame

        plan = split_plan(self.text)
        if plan is not None:
            self.unseal()
            await self._body.update(plan.before)
            self._body.display = bool(plan.before)
            await self.mount(PlanView(plan.steps))
            if plan.after:
                await self.mount(ChatMarkdown(plan.after, classes="body"))
        elif held:
            await self._body.append(held)
        if interrupted or stop_reason not in NORMAL_STOPS:
            await self.mark(stop_reason or "interrupted", interrupted=interrupted)
        self.call_after_refresh(self.seal)

    async def mark(self, stop_reason: str, *, interrupted: bool = False) -> None:
        """Label how the message ended when it was not a normal end (worded by ``core.narration.stop_label``)."""
        if self.stop_label:
            return
        self.interrupted = interrupted
        self.stop_reason = stop_reason
        label, kind = stop_label(stop_reason)
        self.stop_label = label
        self.add_class(f"-{kind}")
        if not self.text:
            self._body.display = False
        await self.mount(Static(label, classes=f"stop-label -{kind}", markup=False))


THINKING_FLUSH = 0.2
"""Seconds between redraws of a streaming thinking block (fragments in between are joined)."""


class ThinkingBlock(Collapsible):
    """The model's reasoning: streamed collapsed and dimmed under "Thinking…".

    Enter on its title, a click, or f3 (the newest block) expands it. The text is
    redrawn at most every :data:`THINKING_FLUSH` seconds while it streams.
    """

    def __init__(self, text: str = "", *, finished: bool = False) -> None:
        self._body = Static("", classes="thinking-body", markup=False)
        super().__init__(self._body, title="Thinking…", collapsed=True, classes="thinking")
        self.text = text
        self.finished = finished
        self._timer: asyncio.TimerHandle | None = None

    def on_mount(self) -> None:
        self._flush()

    def append(self, fragment: str) -> None:
        """Add a streamed fragment (drawn with the next flush)."""
        self.text += fragment
        if self._timer is None and not self.finished:
            self._timer = asyncio.get_running_loop().call_later(THINKING_FLUSH, self._due)

    def _due(self) -> None:
        self._timer = None
        self.call_later(self._flush)

    def _flush(self) -> None:
        words = len(self.text.split())
        self.title = f"{'Thought' if self.finished else 'Thinking…'} · {words:,} word{'s' if words != 1 else ''}"
        self._body.update(Text(self.text))

    def finish(self) -> None:
        """The reasoning is complete (the answer or a tool call follows)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.finished = True
        if self.is_mounted:
            self._flush()


class ToolCallLine(Static):
    """A compact line in the chat for one tool call."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(classes="tool-line", markup=False)
        self.call = call
        self.status = "running"
        self.duration: float | None = None
        self.waited = 0.0
        self._render_line()

    def set_status(self, status: str, duration: float | None = None, waited: float = 0.0) -> None:
        """``duration``: the time the call ran; ``waited``: the time it waited for the user's approval."""
        self.status = status
        self.duration = duration
        self.waited = waited or self.waited
        self._render_line()

    def _render_line(self) -> None:
        style = STATUS_STYLES.get(self.status, "")
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{STATUS_ICONS.get(self.status, '?')} ", style=f"bold {style}")
        line.append(self.call.name, style="bold")
        if self.status == "pending":
            line.append(f" · {STATUS_LABELS['pending']}", style=style)
        elif self.duration is not None or self.status in NEVER_RAN:
            line.append(f" · {status_timing(self.status, self.duration)}", style=style)
            if self.waited:
                line.append(f" · waited {format_duration(self.waited)} for approval", style="italic")
        summary = summarize_args(self.call.parameters, 200)
        if summary:
            line.append(f"  {summary}", style="dim")
        self.update(line)


class NoteMessage(Static):
    """A message from the app itself: info, a warning, or an error with what to do."""

    def __init__(self, body: str, *, kind: NoteKind = "info", title: str = "") -> None:
        text = Text(body)
        super().__init__(text, classes=f"note -{kind}", markup=False)
        self.kind = kind
        self.body = body
        if title:
            self.border_title = title
            self.add_class("-titled")


class MarkdownNote(Markdown):
    """App-provided Markdown (``/help``, onboarding, file lists, ``/task`` results and diffs); long code lines fold."""

    BLOCKS = {**Markdown.BLOCKS, "fence": FoldingFence, "code_block": FoldingFence}

    def __init__(self, markdown: str, *, title: str = "", classes: str = "") -> None:
        super().__init__(markdown, classes=f"md-note {classes}".strip())
        if title:
            self.border_title = title
