"""Exporting a conversation as Markdown, tool calls in collapsible blocks."""

from __future__ import annotations

import datetime as _dt
import html
import json
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from core.sessions.errors import ExportError, describe_os_error
from core.sessions.fsutil import atomic_write
from core.sessions.load import Incident, LoadedSession
from core.turns import current_turn
from core.types import Message


def export_markdown(source: LoadedSession | Sequence[Message], path: Path | str, incidents: Sequence[Incident] = ()) -> Path:
    """Write the conversation to ``path`` as Markdown and return the resolved path.

    User and assistant messages become sections; each tool call becomes a
    ``<details><summary>tool NAME</summary>`` block holding its arguments and
    its result. The file is written to a temporary file and renamed into place,
    so an existing file is replaced whole or not at all.

    Args:
        source: A loaded session, or a list of ``core.types.Message``.
        path: The Markdown file to write (``~`` is expanded).
        incidents: Errors, warnings and interruptions to show at their places (a loaded
            session's own are used when none are given).

    Raises:
        ExportError: ``path`` is a directory, its directory does not exist, or it
            cannot be written; the message says which.
    """
    target = Path(path).expanduser()
    if target.is_dir():
        raise ExportError(f"Cannot export to {target}: it is a directory. Give a file name, e.g. {target / 'conversation.md'}.")
    if not target.parent.is_dir():
        raise ExportError(f"Cannot export to {target}: the directory {target.parent} does not exist.")
    text = render_markdown(source, incidents)
    try:
        atomic_write(target, text.encode("utf-8"))
    except OSError as exc:
        raise ExportError(describe_os_error(exc, target, "export the conversation to")) from exc
    return target.resolve()


def render_markdown(source: LoadedSession | Sequence[Message], incidents: Sequence[Incident] = ()) -> str:
    """The Markdown text ``export_markdown`` writes (``incidents`` each before the message at its ``at``)."""
    if isinstance(source, LoadedSession):
        incidents = incidents or source.incidents
        messages: Sequence[Message] = source.messages
        title = f"# Session {source.session_id}"
        created = source.meta.get("created")
        details = [f"- Project: `{source.meta['project_root']}`"] if source.meta.get("project_root") else []
        if isinstance(created, (int, float)):
            details.append(f"- Started: {_when(created)}")
        model = ":".join(str(source.meta[k]) for k in ("provider", "model") if source.meta.get(k))
        if model:
            details.append(f"- Model: {model}")
        header = "\n".join([title, "", *details]).rstrip()
    else:
        messages, header = source, "# Conversation"
    results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool"}
    called = _call_ids(messages)
    parts = [header]
    pending = sorted(incidents, key=lambda incident: int(incident.get("at") or 0))
    for index, message in enumerate(messages):
        while pending and int(pending[0].get("at") or 0) <= index:
            parts.append(_incident(pending.pop(0), messages))
        role = message.get("role")
        if role == "user":
            parts.append(f"{_user_heading(message.get('turn'))}\n\n{message.get('content', '')}")
        elif role == "assistant":
            parts.append(_assistant(message, results))
        elif role == "tool" and message.get("tool_call_id") not in called:
            parts.append(_tool_block(message.get("name") or "?", None, message))
    parts.extend(_incident(incident, messages) for incident in pending)
    return "\n\n".join(part.rstrip() for part in parts) + "\n"


RETRACTED_NOTE = "(not answered: the turn failed, and the message went back to the prompt)"
"""A question whose turn failed before any answer: it left the conversation (sending it again is that turn again)."""


def _user_heading(turn: Any) -> str:
    """``## User · turn 3`` (the user-turn number of :mod:`core.turns`); a note (``/run`` output) has none."""
    return f"## User · turn {turn}" if isinstance(turn, int) and turn > 0 else "## User"


def _incident(incident: Incident, messages: Sequence[Message] = ()) -> str:
    """An error, warning or interruption as a quoted line (a retracted question first, heading its turn's incidents)."""
    kind = incident.get("kind")
    if kind == "interruption":
        text = "> _Interrupted._"
    else:
        label = "Warning" if kind == "warning" else "Error"
        text = f"> **{label}**: " + str(incident.get("message") or incident.get("reason") or "").replace("\n", "\n> ")
    if incident.get("query"):
        turn = current_turn(messages[: int(incident.get("at") or 0)]) + 1  # the number its resend has
        text = f"{_user_heading(turn)} {RETRACTED_NOTE}\n\n{incident['query']}\n\n{text}"
    return text


_STOP_NOTES = {
    "incomplete": "cut off: the connection closed before the answer finished",
    "error": "cut off: the provider failed mid-answer",
    "max_tokens": "stopped at the output limit",
    "refusal": "the model refused",
    "content_filter": "stopped by the content filter",
}


def _assistant(message: Message, results: dict[Any, Message]) -> str:
    note = _STOP_NOTES.get(message.get("stop_reason") or "") or ("interrupted" if message.get("interrupted") else "")
    error = message.get("error")
    if note and isinstance(error, dict) and error.get("kind"):
        note += f" ({error['kind']}; its error follows)"
    heading = f"## Assistant ({note})" if note else "## Assistant"
    lines = [heading]
    thinking = _thinking(message.get("thinking") or [])
    if thinking:
        lines.append(thinking)
    if message.get("content"):
        lines.append(message["content"])
    for call in message.get("tool_calls") or []:
        lines.append(_tool_block(call.get("name", "?"), call.get("parameters", {}), results.get(call.get("id"))))
    return "\n\n".join(lines)


def _thinking(blocks: Iterable[dict[str, Any]]) -> str:
    """The message's reasoning in its own collapsible block, apart from the answer."""
    parts = []
    for block in blocks:
        if block.get("type") == "redacted_thinking":
            parts.append("(redacted by the provider)")
        elif isinstance(block.get("thinking") or block.get("text"), str):
            parts.append(str(block.get("thinking") or block.get("text")))
    if not parts:
        return ""
    return "<details><summary>thinking</summary>\n\n" + _fence("\n\n".join(parts), "") + "\n\n</details>"


def _tool_block(name: str, parameters: dict[str, Any] | None, result: Message | None) -> str:
    body = []
    if parameters is not None:
        body.append("Arguments:\n\n" + _fence(json.dumps(parameters, indent=2, ensure_ascii=False, default=str), "json"))
    if result is None:
        body.append("No result was recorded.")
    else:
        label = "Result (error):" if result.get("is_error") else "Result:"
        body.append(f"{label}\n\n" + _fence(str(result.get("content", "")), ""))
    summary = f"tool {html.escape(name)}"
    return f"<details><summary>{summary}</summary>\n\n" + "\n\n".join(body) + "\n\n</details>"


def _fence(text: str, language: str) -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _call_ids(messages: Iterable[Message]) -> set[str]:
    return {call.get("id") for m in messages for call in m.get("tool_calls") or []}


def _when(timestamp: float) -> str:
    return _dt.datetime.fromtimestamp(timestamp).astimezone().strftime("%Y-%m-%d %H:%M %Z").strip()
