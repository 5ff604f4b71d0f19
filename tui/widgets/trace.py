"""The tool-trace pane: every tool call of the session, live, expandable, grouped by user turn.

What it shows is what happened: the time a call waited for the user's approval
apart from the time it ran, and denied, refused, not-run and failed calls each
with their own mark (only failures are errors).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from tui.diff_text import diff_preview
from tui.format import (
    NEVER_RAN,
    STATUS_ICONS,
    STATUS_LABELS,
    STATUS_STYLES,
    approval_line,
    format_duration,
    pretty_args,
    status_timing,
    summarize_args,
    truncate_lines,
)

if TYPE_CHECKING:
    from core.types import ToolCall  # annotations only: the event types load after the first frame

Clock = Callable[[], float]

RESULT_PREVIEW_LINES = 12
DIFF_PREVIEW_LINES = 6
LIVE_LINES = 6
"""Lines of a running call's live output shown under it."""
LIVE_KEEP = 4_000


@dataclass
class CallRecord:
    """What the trace knows about one tool call."""

    call: ToolCall
    status: str = "running"
    started: float = 0.0
    duration: float | None = None
    result: str = ""
    decision: str = ""
    automatic: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    asked_at: float | None = None
    """When the approval prompt opened (the clock's time); None when nobody was asked."""
    waited: float | None = None
    """Seconds the user took to answer; None while unanswered or when nobody was asked."""
    turn: int = 0
    """The user turn the call belongs to."""
    output: str = ""
    """The end of the call's live output (a command's stdout and stderr), at most ``LIVE_KEEP`` characters."""
    output_lines: int = 0
    output_at: float | None = None
    """Seconds after the start when the latest output arrived."""

    def add_output(self, text: str, now: float) -> None:
        """Keep the end of the live output and count its lines."""
        self.output = (self.output + text)[-LIVE_KEEP:]
        self.output_lines += text.count("\n")
        self.output_at = max(0.0, now - self.started)

    @property
    def finished(self) -> bool:
        return self.status not in {"pending", "running"}


class ToolCallView(Widget, can_focus=True):
    """One call in the trace. Enter expands it; ``v`` shows the whole result."""

    BINDINGS = [
        Binding("enter", "toggle", "Expand", tooltip="Expand or collapse the call: arguments and result", id="trace.expand"),
        Binding("v", "view_all", "Full result", tooltip="Show the complete arguments and result", id="trace.view_all"),
        Binding("up,k", "move(-1)", "Previous", tooltip="Previous call", show=False, id="trace.previous"),
        Binding("down,j", "move(1)", "Next", tooltip="Next call", show=False, id="trace.next"),
    ]

    expanded: reactive[bool] = reactive(False)

    class ViewRequested(Message):
        """The user asked to see a call's complete arguments and result."""

        def __init__(self, record: CallRecord) -> None:
            super().__init__()
            self.record = record

    class MoveRequested(Message):
        """Up/Down on a call: the trace moves the focus to the previous or next call."""

        def __init__(self, view: "ToolCallView", step: int) -> None:
            super().__init__()
            self.view = view
            self.step = step

    def __init__(self, record: CallRecord, clock: Clock) -> None:
        super().__init__(classes="trace-call")
        self.record = record
        self._clock = clock

    def render(self) -> Group:
        record = self.record
        style = STATUS_STYLES.get(record.status, "")
        name = Text(no_wrap=True, overflow="ellipsis")
        name.append(f"{STATUS_ICONS.get(record.status, '?')} ", style=f"bold {style}")
        name.append(record.call.name, style="bold")
        if record.status == "pending":  # the words go on a line of their own: at 80 columns they left the name one letter
            since = record.asked_at if record.asked_at is not None else record.started
            timing = format_duration(self._clock() - since)
        elif record.status == "running":
            timing = f"running {format_duration(self._clock() - record.started)}"
        else:
            timing = status_timing(record.status, record.duration)
        header = Table.grid(expand=True, padding=(0, 1))
        header.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        header.add_column(justify="right", no_wrap=True)
        header.add_row(name, Text(timing, style=style))
        parts: list[Any] = [header]
        summary = summarize_args(record.call.parameters, 200)
        if summary and not self.expanded:
            parts.append(Text(f"  {summary}", style="dim", no_wrap=True, overflow="ellipsis"))
        if record.status == "pending":
            parts.append(Text(f"  {STATUS_LABELS['pending']}", style=f"italic {style}", no_wrap=True, overflow="ellipsis"))
        if record.decision:  # wrapped lines keep the indent: the pane is 26 columns wide at 80x24
            ran = record.duration if record.finished and record.status not in NEVER_RAN else None
            parts.append(Padding(Text(approval_line(record.decision, record.automatic, record.waited, ran), style="italic"), (0, 0, 0, 2)))
        from core.checkpoints.summary import files_lines  # its dataclasses are not on the path to the first frame

        for line in files_lines(record.metadata.get("files_changed")):  # issue 26: what the call created, changed, deleted
            parts.append(Text(f"  {line}", style="dim", no_wrap=True, overflow="ellipsis"))
        if record.metadata.get("edit_summary") and record.status == "success" and not self.expanded:  # issue 26: editFile's diff
            parts.append(Padding(diff_preview(record.result, DIFF_PREVIEW_LINES), (0, 0, 0, 2)))
        if record.metadata.get("unchanged_since") and not self.expanded:
            parts.append(Text("  unchanged: not resent", style="dim italic", no_wrap=True, overflow="ellipsis"))
        if record.status in NEVER_RAN and record.result and not self.expanded:
            reason = record.result.strip().splitlines()[0]
            parts.append(Text(f"  {reason}", style=f"italic {style}", no_wrap=True, overflow="ellipsis"))
        if record.status == "running" and record.output:
            lines = record.output.rstrip("\n").splitlines()[-LIVE_LINES:]
            at = format_duration(record.output_at or 0.0)
            parts.append(Text(f"  output · {record.output_lines:,} lines · latest at {at}", style="dim italic"))
            parts.append(Text("\n".join(f"    {line}" for line in lines), style="dim", no_wrap=True, overflow="ellipsis"))
        if self.expanded:
            parts.append(Text("  arguments", style="bold underline"))
            parts.append(Text(_indent(pretty_args(record.call.parameters))))
            parts.append(Text("  result", style="bold underline"))
            if not record.finished:
                parts.append(Text("  (not finished)", style="dim italic"))
            else:
                shown, cut = truncate_lines(record.result or "(empty)", RESULT_PREVIEW_LINES)
                parts.append(Text(_indent(shown)))
                if cut:
                    parts.append(Text(f"  … {cut} more lines · press v to see all", style="bold"))
        return Group(*parts)

    def watch_expanded(self, expanded: bool) -> None:
        self.refresh(layout=True)
        if expanded:
            self.call_after_refresh(self.scroll_visible, top=True, animate=False)

    def action_toggle(self) -> None:
        self.expanded = not self.expanded

    def action_view_all(self) -> None:
        self.post_message(self.ViewRequested(self.record))

    def action_move(self, step: int) -> None:
        self.post_message(self.MoveRequested(self, step))


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines()) or "    "


class TurnHeader(Static):
    """The row above a user turn's calls: ``turn 3 · find the auth code``."""

    def __init__(self, number: int, query: str) -> None:
        label = Text(no_wrap=True, overflow="ellipsis")
        label.append(f"turn {number}", style="bold")
        summary = " ".join(query.split())
        if summary:
            label.append(f" · {summary}", style="italic")
        super().__init__(label, classes="trace-turn", markup=False)
        self.number = number


class ToolTrace(VerticalScroll):
    """Every tool call of the session under a header per user turn; running ones show their elapsed time.

    Keeps at most :attr:`max_live` call widgets mounted (records are kept; the
    transcript and the chat's tool lines have every call). A new call always
    scrolls into view, even when the user expanded an earlier one.
    """

    max_live: int = 20

    def __init__(self, *, clock: Clock, id: str | None = None) -> None:
        super().__init__(id=id, can_focus=False)
        self._clock = clock
        self.records: dict[str, CallRecord] = {}
        self._views: dict[str, ToolCallView] = {}
        self._turn = (0, "")
        self._headers: dict[int, TurnHeader] = {}

    def on_mount(self) -> None:
        self.border_title = "Trace"
        self.anchor()
        self.set_interval(0.5, self.refresh_running, name="trace-tick")

    def refresh_running(self) -> None:
        """Redraw running and waiting calls (their elapsed time)."""
        for view in self._views.values():
            if not view.record.finished:
                view.refresh()

    def begin_turn(self, number: int, query: str) -> None:
        """Calls from now on belong to user turn ``number`` (its header appears with its first call)."""
        self._turn = (number, query)

    async def _view_for(self, call: ToolCall, status: str) -> ToolCallView:
        view = self._views.get(call.id)
        if view is None:
            number, query = self._turn
            record = CallRecord(call=call, status=status, started=self._clock(), turn=number)
            self.records[call.id] = record
            view = ToolCallView(record, self._clock)
            self._views[call.id] = view
            if number and number not in self._headers:
                header = self._headers[number] = TurnHeader(number, query)
                await self.mount(header)
            await self.mount(view)
            await self._prune()
            self.scroll_end(animate=False)  # also re-anchors after the user scrolled to an expanded call
        return view

    async def _prune(self) -> None:
        excess = len(self._views) - self.max_live
        if excess <= 0:
            return
        for call_id in list(self._views)[:excess]:
            await self._views.pop(call_id).remove()
        live_turns = {view.record.turn for view in self._views.values()}
        for number in [n for n in self._headers if n not in live_turns]:
            await self._headers.pop(number).remove()

    async def pending(self, call: ToolCall) -> None:
        """A call waits for the user's approval (from now: the wait is measured apart)."""
        view = await self._view_for(call, "pending")
        record = view.record
        if record.finished:
            return
        if record.status != "pending":
            record.status = "pending"
            record.asked_at = self._clock()
            view.refresh(layout=True)  # one line taller: "awaiting approval"
        # Let the pane lay out and follow its end before the approval dialog covers the screen:
        # under it the pane is not laid out again, so the label showed or not by timing.
        laid_out = asyncio.Event()
        if self.call_after_refresh(laid_out.set):
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await laid_out.wait()

    def output(self, call_id: str, text: str) -> None:
        """Live output of a running call: shown under it (its last lines) until it finishes."""
        view = self._views.get(call_id)
        if view is None:
            return
        view.record.add_output(text, self._clock())
        view.refresh(layout=True)

    async def started(self, call: ToolCall) -> None:
        """A call began running."""
        view = await self._view_for(call, "running")
        view.record.status = "running"
        view.record.started = self._clock()
        view.refresh()

    async def finished(
        self, call: ToolCall, status: str, result: str, duration: float, metadata: dict[str, Any] | None = None, *, waited: float = 0.0
    ) -> None:
        """A call ended: ``duration`` is the time it ran, ``waited`` the time it waited for approval."""
        view = await self._view_for(call, status)
        record = view.record
        record.status, record.result, record.duration = status, result, duration
        if waited:
            record.waited = waited
        record.metadata = dict(metadata or {})
        view.refresh(layout=True)

    async def approval(self, call: ToolCall, decision: str, automatic: bool, waited: float | None = None) -> None:
        """The decision on a call: allowed calls run from this moment, denied ones are done."""
        view = await self._view_for(call, "pending")
        record = view.record
        record.decision, record.automatic = decision, automatic
        if not automatic:
            now = self._clock()
            record.waited = waited if waited is not None else (now - record.asked_at if record.asked_at is not None else None)
            if not record.finished:
                record.status = "denied" if decision == "deny" else "running"
                record.started = now
        view.refresh(layout=True)

    def interrupt_running(self) -> None:
        """Mark unfinished calls interrupted (the turn was cancelled).

        A call cancelled while it waited for approval never ran: it shows the wait, not a run time.
        """
        now = self._clock()
        for view in self._views.values():
            record = view.record
            if record.finished:
                continue
            if record.status == "pending":
                record.waited = max(0.0, now - (record.asked_at if record.asked_at is not None else record.started))
                record.duration = None
                record.decision = record.decision or "no answer"
            else:
                record.duration = max(0.0, now - record.started)
            record.status = "interrupted"
            view.refresh(layout=True)

    async def clear(self) -> None:
        await self.remove_children()
        self.records.clear()
        self._views.clear()
        self._headers.clear()
        self._turn = (0, "")

    def on_tool_call_view_move_requested(self, event: ToolCallView.MoveRequested) -> None:
        event.stop()
        views = list(self._views.values())
        if event.view in views:
            view = views[max(0, min(len(views) - 1, views.index(event.view) + event.step))]
            view.focus()
            view.scroll_visible()

    def focus_last(self) -> bool:
        """Focus the newest call; False when there is none."""
        if not self._views:
            return False
        view = list(self._views.values())[-1]
        view.focus()
        view.scroll_visible()
        return True
