"""Exporting a conversation as Markdown, tool calls in collapsible blocks."""

from __future__ import annotations

import datetime as _dt
import html
import json
import re
from pathlib import Path
from typing import Any, Sequence

from core import events as ev
from core import narration
from core.sessions.errors import ExportError, describe_os_error
from core.sessions.fsutil import atomic_write
from core.sessions.load import Incident, LoadedSession
from core.sessions.replay import Interrupted, Note, Replayed, replay, thinking_text
from core.types import Message, ToolStatus


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
    """The Markdown text ``export_markdown`` writes (``incidents`` each before the message at its ``at``).

    The conversation is replayed (:func:`core.sessions.replay.replay`) and each event written as
    :mod:`core.narration` words it, as the chat and an editor's ``session/load`` show it.
    """
    trace: Sequence[dict[str, Any]] = ()
    if isinstance(source, LoadedSession):
        incidents = incidents or source.incidents
        messages: Sequence[Message] = source.messages
        trace = source.trace
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
    writer = _MarkdownWriter(header)
    for event in replay(messages, incidents, trace):
        writer.handle(event)
    return "\n\n".join(part.rstrip() for part in writer.parts) + "\n"


RETRACTED_NOTE = "(not answered: the turn failed, and the message went back to the prompt)"
"""A question whose turn failed before any answer: it left the conversation (sending it again is that turn again)."""


class _MarkdownWriter:
    """Replayed events as Markdown sections, in order (one part per section, joined by blank lines)."""

    def __init__(self, header: str) -> None:
        self.parts = [header]
        self._question = -1
        """The part holding the current turn's question (its heading says so when the turn is retracted)."""

    def handle(self, event: Replayed) -> None:
        match event:
            case ev.TurnStarted(query=query, turn=turn):
                self._question = len(self.parts)
                self.parts.append(f"{_user_heading(turn)}\n\n{query}")
            case Note(text=text):
                self.parts.append(f"## User\n\n{text}")
            case ev.AssistantMessage():
                self.parts.append(_assistant(event))
            case ev.ToolCallFinished():
                self.parts.append(_tool_block(event))
            case ev.Warning(code=code, message=message):
                self.parts.append(_quoted("Warning", narration.warning_title(code), message))
            case ev.TurnFailed(reason=reason, message=message, result=result):
                if ((result or {}).get("metadata") or {}).get("retracted") and self._question >= 0:
                    heading, _, rest = self.parts[self._question].partition("\n\n")
                    if not heading.endswith(RETRACTED_NOTE):
                        self.parts[self._question] = f"{heading} {RETRACTED_NOTE}\n\n{rest}"
                self.parts.append(_quoted("Error", narration.error_title(reason), message or reason))
            case Interrupted(reason=reason):
                self.parts.append(f"> _{narration.interruption_text(reason)}_")
            case _:
                pass


def _user_heading(turn: Any) -> str:
    """``## User · turn 3`` (the user-turn number of :mod:`core.turns`); a note (``/run`` output) has none."""
    label = narration.turn_label(turn)
    return f"## User · {label}" if label else "## User"


def _quoted(label: str, title: str, message: str) -> str:
    """``> **Error** · The model call failed: overloaded`` (a warning or an error, quoted at its place)."""
    return f"> **{label}** · {title}: " + message.replace("\n", "\n> ")


def _assistant(message: ev.AssistantMessage) -> str:
    note = narration.stop_note(message.stop_reason, message.interrupted)
    if note and message.error.get("kind"):
        note += f" ({message.error['kind']}; its error follows)"
    lines = [f"## Assistant ({note})" if note else "## Assistant"]
    thinking = thinking_text(message.thinking, redacted=True)
    if thinking:
        lines.append("<details><summary>thinking</summary>\n\n" + _fence(thinking, "") + "\n\n</details>")
    if message.content:
        lines.append(message.content)
    return "\n\n".join(lines)


def _tool_block(event: ev.ToolCallFinished) -> str:
    body = []
    if event.call.parameters:
        body.append("Arguments:\n\n" + _fence(json.dumps(event.call.parameters, indent=2, ensure_ascii=False, default=str), "json"))
    if event.status == ToolStatus.INTERRUPTED and not event.result:
        body.append("No result was recorded.")
    else:
        body.append(f"Result ({narration.status_label(event.status)}):\n\n" + _fence(event.result, ""))
    summary = f"tool {html.escape(narration.tool_line(event.call))}"
    return f"<details><summary>{summary}</summary>\n\n" + "\n\n".join(body) + "\n\n</details>"


def _fence(text: str, language: str) -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _when(timestamp: float) -> str:
    return _dt.datetime.fromtimestamp(timestamp).astimezone().strftime("%Y-%m-%d %H:%M %Z").strip()
