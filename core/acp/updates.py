"""Our handler's events (``core/events.py``) as ACP session updates.

One :class:`TurnMapper` per prompt turns each event into the updates a client
draws: text and thinking chunks, tool calls with their kind, locations, status and
content (aider's edits as diffs, live command output), and a ``/plan`` answer's
steps as a plan. :func:`history_updates` replays a saved conversation the same way
for ``session/load``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterable

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import ToolCallLocation, ToolCallUpdate, ToolKind

from core import events as ev
from core import narration
from core.acp.diffs import file_changes
from core.acp.replay import note_updates, shown_query
from core.plan import split_plan
from core.sessions.replay import Interrupted, Note, Replayed, replay
from core.types import ToolCall, ToolStatus

log = logging.getLogger(__name__)

MAX_SHOWN_CHARS = 20_000
"""Characters of a tool result or live output put in an update (the model still gets the full result)."""

_KINDS: dict[str, ToolKind] = {
    "readFile": "read",
    "aiderAutomatic": "edit",
    "aiderInteractive": "edit",
    "executeFilePathCommand": "search",
    "runCommand": "execute",
    "runTests": "execute",
    "listTasks": "other",
}
_FETCH_WORDS = ("fetch", "http", "url", "web", "download")


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of one of our tools (MCP tools: ``fetch`` when they fetch, else ``other``)."""
    if name in _KINDS:
        return _KINDS[name]
    if name.startswith("mcp__") and any(word in name.lower() for word in _FETCH_WORDS):
        return "fetch"
    return "other"


def tool_title(call: ToolCall) -> str:
    """A one-line title: what the call does, in the user's terms."""
    params = call.parameters
    first_line = lambda value: str(value or "").strip().splitlines()[0][:120] if str(value or "").strip() else ""  # noqa: E731
    if call.name == "readFile" and params.get("path"):
        return f"Read {params['path']}"
    if call.name == "executeFilePathCommand" and params.get("command"):
        return f"Find files: {first_line(params['command'])}"
    if call.name in ("runCommand", "runTests") and params.get("command"):
        command = params["command"]
        shown = narration.command_line(params) or str(command)
        return f"Run {first_line(shown)}" + (" (with network access)" if params.get("network") else "")
    if call.name == "aiderAutomatic":
        return f"aider: {first_line(params.get('prompt'))}".rstrip(": ")
    if call.name == "aiderInteractive":
        return f"aider (interactive): {first_line(params.get('query'))}".rstrip(": ")
    if call.name.startswith("mcp__") and call.name.count("__") >= 2:
        _, server, tool = call.name.split("__", 2)
        return f"{server}: {tool}"
    return narration.tool_line(call, 120)  # as the chat's line reads


def start_locations(call: ToolCall, project_root: Path) -> list[ToolCallLocation]:
    """The files a call names before it runs (a read's path, aider's explicit files)."""
    params = call.parameters
    paths: list[Any] = []
    line = None
    if call.name == "readFile":
        paths = [params.get("path")]
        line = params.get("start_line")
    elif call.name in ("aiderAutomatic", "aiderInteractive"):
        explicit = params.get("file_context")
        paths = [explicit] if isinstance(explicit, str) else list(explicit or [])
    return _locations(paths, project_root, line=line if isinstance(line, int) and line > 0 else None)


def finish_locations(event: ev.ToolCallFinished, project_root: Path) -> list[ToolCallLocation] | None:
    """The files a finished call touched (the paths a search found, aider's files), or None to keep."""
    meta = event.metadata or {}
    if event.call.name == "executeFilePathCommand":
        return _locations(meta.get("paths") or [], project_root)
    if event.call.name in ("aiderAutomatic", "aiderInteractive"):
        return _locations([*(meta.get("edited_files") or []), *(meta.get("file_context") or [])], project_root)
    if event.call.name == "readFile" and meta.get("path"):
        line = meta.get("start_line")
        return _locations([meta["path"]], project_root, line=line if isinstance(line, int) and line > 0 else None)
    return None


def _locations(paths: Iterable[Any], project_root: Path, line: int | None = None) -> list[ToolCallLocation]:
    seen: dict[str, ToolCallLocation] = {}
    for raw in paths:
        if not isinstance(raw, str) or not raw.strip():
            continue
        path = Path(raw)
        absolute = str(path if path.is_absolute() else (project_root / path).resolve())
        seen.setdefault(absolute, ToolCallLocation(path=absolute, line=line))
    return list(seen.values())


def _shown(text: str) -> str:
    if len(text) <= MAX_SHOWN_CHARS:
        return text
    return text[:MAX_SHOWN_CHARS] + f"\n... ({len(text) - MAX_SHOWN_CHARS:,} more characters)"


def text_content(text: str) -> list[Any]:
    """A tool call's content: one text block (empty text gives no content)."""
    return [tool_content(text_block(_shown(text)))] if text else []


def permission_tool_call(call: ToolCall, detail: str, reason: str, project_root: Path) -> ToolCallUpdate:
    """The tool call shown with a permission request: what will run and why it asks."""
    body = detail + (f"\n\n{reason}" if reason else "")
    return ToolCallUpdate(
        tool_call_id=call.id,
        title=tool_title(call),
        kind=tool_kind(call.name),
        status="pending",
        content=text_content(body) or None,
        locations=start_locations(call, project_root) or None,
        raw_input=dict(call.parameters),
    )


class TurnMapper:
    """Turns one prompt's events into ACP session updates.

    Args:
        project_root: the session's project (locations are absolute paths).
        needs_approval: whether a tool's calls wait for approval (they start as pending).
    """

    def __init__(self, project_root: Path, needs_approval: Any = lambda name: False, *, replaying: bool = False) -> None:
        self.project_root = project_root
        self.needs_approval = needs_approval
        self.replaying = replaying
        """Loading a saved session: the user's messages and the turns' errors are told as updates (live, the
        client sent the prompt and gets the error as the prompt's answer), each call once in its final state."""
        self.open_calls: dict[str, ToolCall] = {}
        self.running: set[str] = set()
        """Calls reported ``in_progress``: never reported ``pending`` again."""
        self.output: dict[str, str] = {}
        self.last_stop_reason = ""
        self.plan_steps: list[str] = []
        self._streamed = False
        """Text of the current message already went out as chunks (else its content goes out when it completes)."""
        self._query = ""

    def updates(self, event: Replayed) -> list[Any]:
        """The updates for one event (often none)."""
        if isinstance(event, ev.TurnStarted):
            self._query = event.query
            return [update_user_message_text(shown_query(event.query))] if self.replaying and event.query else []
        if isinstance(event, Note):
            return note_updates(event.text)
        if isinstance(event, ev.TextDelta):
            self._streamed = self._streamed or bool(event.text)
            return [update_agent_message_text(event.text)] if event.text else []
        if isinstance(event, ev.ThinkingDelta):
            return [update_agent_thought_text(event.text)] if event.text else []
        if isinstance(event, ev.AssistantMessage):
            return self._message(event)
        if isinstance(event, ev.ToolCallStarted):
            return [] if self.replaying else [self._started(event.call)]
        if isinstance(event, ev.ApprovalRequested):
            if event.call.id in self.open_calls and event.call.id not in self.running:  # waiting for the client's answer
                return [update_tool_call(event.call.id, status="pending")]
            return []
        if isinstance(event, ev.ApprovalRecorded):
            if event.decision.allowed and event.call.id in self.open_calls:
                self.running.add(event.call.id)
                return [update_tool_call(event.call.id, status="in_progress")]
            return []
        if isinstance(event, ev.ToolOutputChunk):
            return self._output(event)
        if isinstance(event, ev.ToolCallFinished):
            return [self._finished(event)]
        if isinstance(event, ev.Warning):
            return [update_agent_message_text(f"\n\n> **{narration.warning_title(event.code)}**: {event.message}\n\n")]
        if isinstance(event, ev.TurnFailed):
            if not self.replaying:  # live, the prompt's answer carries it (core.acp.agent)
                return []
            return [update_agent_message_text(f"\n\n> **{narration.error_title(event.reason)}**: {event.message or event.reason}\n\n")]
        if isinstance(event, Interrupted):
            closed = self.interrupted()
            return closed + ([update_agent_message_text(f"\n\n> {narration.interruption_text(event.reason)}\n\n")] if self.replaying else [])
        if isinstance(event, ev.TurnCompleted):
            steps = (event.result.get("metadata") or {}).get("plan_steps") or []
            if steps:
                self.plan_steps = list(steps)
                return [update_plan(plan_entry(step) for step in steps)]
        return []

    def _message(self, event: ev.AssistantMessage) -> list[Any]:
        """A complete message: its text when none streamed (a replay, a provider that does not stream), a /plan's steps."""
        self.last_stop_reason = event.stop_reason
        streamed, self._streamed = self._streamed, False
        plan = split_plan(event.content) if self.replaying else None  # live, core.acp.plan_stream takes it out
        content = "\n\n".join(part for part in (plan.before, plan.after) if part) if plan else event.content
        updates = [update_agent_message_text(content)] if content and not streamed else []
        if self.replaying and not event.tool_calls and self._query.lstrip().startswith("/plan"):
            steps = list(plan.steps) if plan else []  # live, the turn's result carries them (TurnCompleted)
            if steps:
                self.plan_steps = list(steps)
                updates.append(update_plan(plan_entry(step, status="pending") for step in steps))
        return updates

    def interrupted(self) -> list[Any]:
        """Updates closing the calls still open when the turn was cancelled."""
        closed = [update_tool_call(call_id, status="failed", content=text_content("Cancelled before it finished.")) for call_id in self.open_calls]
        self.open_calls.clear()
        return closed

    def _started(self, call: ToolCall) -> Any:
        self.open_calls[call.id] = call
        waits = self.needs_approval(call.name)
        if not waits:
            self.running.add(call.id)
        return start_tool_call(
            call.id,
            tool_title(call),
            kind=tool_kind(call.name),
            status="pending" if waits else "in_progress",
            locations=start_locations(call, self.project_root) or None,
            raw_input=dict(call.parameters),
        )

    def _output(self, event: ev.ToolOutputChunk) -> list[Any]:
        if event.call_id not in self.open_calls:
            return []
        self.running.add(event.call_id)
        text = self.output.get(event.call_id, "") + event.text
        self.output[event.call_id] = text[-MAX_SHOWN_CHARS:]
        # content replaces the call's whole content: send the tail gathered so far
        return [update_tool_call(event.call_id, status="in_progress", content=text_content(self.output[event.call_id]))]

    def _finished(self, event: ev.ToolCallFinished) -> Any:
        announced = self.open_calls.pop(event.call.id, None) is not None
        self.running.discard(event.call.id)
        self.output.pop(event.call.id, None)
        status = "completed" if event.status == ToolStatus.SUCCESS else "failed"
        content = text_content(event.result)
        diff = (event.metadata or {}).get("diff")
        if isinstance(diff, str) and diff:
            try:
                changes = file_changes(diff, self.project_root)
            except Exception:  # noqa: BLE001 - a diff we cannot read is still shown as text
                log.exception("could not turn aider's diff into ACP diff content")
                changes = []
            if changes:
                summary = ", ".join(_relative(path, self.project_root) for path, _, _ in changes)
                content = [tool_diff_content(str(path), new, old) for path, old, new in changes]
                content += text_content(f"aider edited {summary}")
        locations = finish_locations(event, self.project_root)
        raw_output = {"status": event.status, "duration": event.duration}
        if not announced:  # answered without running (the tool-call limit): a client knows no such call yet
            return start_tool_call(
                event.call.id,
                tool_title(event.call),
                kind=tool_kind(event.call.name),
                status=status,
                content=content,
                locations=locations or start_locations(event.call, self.project_root) or None,
                raw_input=dict(event.call.parameters),
                raw_output=raw_output,
            )
        return update_tool_call(event.call.id, status=status, content=content, locations=locations, raw_output=raw_output)


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def history_updates(
    messages: Iterable[dict[str, Any]], project_root: Path, incidents: Iterable[dict[str, Any]] = (), trace: Iterable[dict[str, Any]] = ()
) -> list[Any]:
    """A saved conversation as the updates that would have drawn it (``session/load``).

    The conversation is replayed (:func:`core.sessions.replay.replay`) through a :class:`TurnMapper`,
    the code that maps a live turn: errors, warnings, denials and interruptions read as they do live
    and in the chat (:mod:`core.narration`).
    """
    mapper = TurnMapper(project_root, replaying=True)
    return [update for event in replay(list(messages), incidents, trace) for update in mapper.updates(event)]
