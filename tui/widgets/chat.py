"""The chat pane: user messages, streamed assistant answers, tool-call lines and notes."""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets._markdown import MarkdownStream

from core.types import ToolCall
from tui.format import STATUS_ICONS, format_duration, summarize_args
from tui.plan import TagFilter, split_plan

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


class AssistantMessage(Vertical):
    """One assistant message, streamed as Markdown.

    Fragments go through ``Markdown.get_stream`` so many small deltas are
    batched into few incremental appends (never a re-render of the whole text).
    ``<plan>`` answers become a :class:`PlanView` when the message completes.
    """

    def __init__(self) -> None:
        super().__init__(classes="assistant-message")
        self.text = ""
        self.interrupted = False
        self.finished = False
        self._body = Markdown(classes="body")
        self._stream: MarkdownStream | None = None
        self._filter = TagFilter()

    def compose(self):  # type: ignore[override]
        yield self._body

    async def append(self, fragment: str) -> None:
        """Append a streamed fragment."""
        self.text += fragment
        shown = self._filter.feed(fragment)
        if not shown:
            return
        if self._stream is None:
            self._stream = Markdown.get_stream(self._body)
        await self._stream.write(shown)

    async def finish(self, content: str | None = None, *, interrupted: bool = False) -> None:
        """End the stream; ``content`` (the complete message) replaces what streamed if it differs."""
        if self.finished:
            return
        self.finished = True
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        held = self._filter.flush()
        if content is not None and content != self.text:
            self.text = content
            await self._body.update(content)
            held = ""
        plan = split_plan(self.text)
        if plan is not None:
            await self._body.update(plan.before)
            self._body.display = bool(plan.before)
            await self.mount(PlanView(plan.steps))
            if plan.after:
                await self.mount(Markdown(plan.after, classes="body"))
        elif held:
            await self._body.append(held)
        if interrupted:
            await self.mark_interrupted()

    async def mark_interrupted(self) -> None:
        """Label the message as cut short by the user."""
        if self.interrupted:
            return
        self.interrupted = True
        self.add_class("-interrupted")
        if not self.text:
            self._body.display = False
        await self.mount(Static("■ interrupted", classes="interrupted-label"))


class ToolCallLine(Static):
    """A compact line in the chat for one tool call."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(classes="tool-line", markup=False)
        self.call = call
        self.status = "running"
        self.duration: float | None = None
        self._render_line()

    def set_status(self, status: str, duration: float | None = None) -> None:
        self.status = status
        self.duration = duration
        self._render_line()

    def _render_line(self) -> None:
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{STATUS_ICONS.get(self.status, '?')} ", style=f"bold {_STATUS_STYLE.get(self.status, '')}")
        line.append(self.call.name, style="bold")
        if self.duration is not None:
            line.append(f" · {self.status} {format_duration(self.duration)}", style=_STATUS_STYLE.get(self.status, ""))
        summary = summarize_args(self.call.parameters, 200)
        if summary:
            line.append(f"  {summary}", style="dim")
        self.update(line)


_STATUS_STYLE = {"success": "green", "error": "red", "denied": "yellow", "interrupted": "yellow", "running": "cyan", "pending": ""}


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
    """App-provided Markdown (``/help``, onboarding, file lists)."""

    def __init__(self, markdown: str, *, title: str = "", classes: str = "") -> None:
        super().__init__(markdown, classes=f"md-note {classes}".strip())
        if title:
            self.border_title = title


class ChatView(VerticalScroll):
    """The conversation. Anchored to the bottom; the live widget tree is kept bounded.

    Every layout pass costs time in proportion to the widgets mounted, so only the
    newest messages stay mounted: at most :attr:`max_live` messages and
    :attr:`max_nodes` widgets in all (each Markdown block counts). Older ones are
    pruned; the app's transcript keeps everything.
    """

    max_live: int = 200
    max_nodes: int = 300

    def __init__(self, *, max_live: int | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        if max_live is not None:
            self.max_live = max_live
        self.pruned = 0
        self._pruned_notice = Static("", classes="pruned-notice")
        self._pruned_notice.display = False

    def compose(self):  # type: ignore[override]
        yield self._pruned_notice

    def on_mount(self) -> None:
        self.anchor()

    async def add(self, *widgets: Widget) -> None:
        """Mount widgets at the end and prune the oldest beyond the bounds."""
        await self.mount_all(widgets)
        await self.prune()

    async def prune(self) -> None:
        """Remove the oldest messages while the bounds are exceeded (the newest always stays)."""
        live = [child for child in self.children if child is not self._pruned_notice]
        weights = [1 + sum(1 for _ in child.walk_children()) for child in live]
        total, cut = sum(weights), 0
        while cut < len(live) - 1 and (len(live) - cut > self.max_live or total > self.max_nodes):
            total -= weights[cut]
            cut += 1
        if not cut:
            return
        self.pruned += cut
        await self.remove_children(live[:cut])
        self._pruned_notice.update(f"… {self.pruned} earlier items are not shown here: f2 shows the whole transcript, /export writes it")
        self._pruned_notice.display = True

    async def clear(self) -> None:
        """Remove every message."""
        await self.remove_children([child for child in self.children if child is not self._pruned_notice])
        self.pruned = 0
        self._pruned_notice.display = False
