"""Reading a transcript back: tolerant of crashes, and repaired for the model API.

A crash can leave the last line cut short; a disk fault can garble any line.
Such lines are skipped with a warning naming the file and line, and the
conversation is rebuilt from every complete record. The history is then made
valid for a provider: a tool call left without a result gets a synthetic
"interrupted" error result, and a result whose call is missing is dropped.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.sessions.errors import SessionNotFound, SessionReadError, describe_os_error
from core.sessions.records import KINDS, drop_rewound
from core.sessions.session import StoredSession
from core.turn_context import attach
from core.turns import derive_turns
from core.types import Message

log = logging.getLogger(__name__)

INTERRUPTED_RESULT = "interrupted: the session ended before this tool finished"

Incident = dict[str, Any]
"""What happened beside the conversation, at its place in it: ``{"kind", "at", ...}``.

``kind`` is ``error`` (``message``, ``reason``), ``warning`` (``message``, ``code``) or
``interruption``; ``at`` is how many messages the history held when it happened (it is shown
before the message at that index). When a turn failed unanswered and its question left the
history, the turn's first incident carries that ``query`` and all of them stay at its place."""


@dataclass(kw_only=True)
class LoadedSession:
    """A transcript read back.

    Attributes:
        path: The transcript.
        meta: Its ``meta`` record (``{}`` if missing).
        messages: The provider-neutral history (``core.types.Message``), repaired.
        context: The latest ``context`` record (``{"files": [{"path", "read_only"}], "ts"}``) or None.
        trace: The ``entry`` of every ``trace`` record, in order, each with its ``ts``.
        records: Every valid record in order (to redraw the chat, with interruptions and errors);
            each ``user`` record that is a turn has its ``turn`` (stored, or derived for an
            older transcript) and each ``assistant`` and ``usage`` record its turn's.
        usage: The usage of every response, ``{"turn", "model", "usage"}``, to restore the totals
            (``usage["reported"]`` False for a response that ended before its final report).
        incidents: The errors and interruptions, each at its place in ``messages`` (:data:`Incident`).
        warnings: What was skipped or repaired, as sentences to show the user.
    """

    path: Path
    meta: dict[str, Any] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    context: dict[str, Any] | None = None
    trace: list[dict[str, Any]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    incidents: list[Incident] = field(default_factory=list)
    compactions: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    """Each ``compaction`` record with how many of ``messages`` came before it (the model's view is rebuilt from them)."""

    @property
    def session_id(self) -> str:
        """The session id, from the meta line or the file name."""
        return str(self.meta.get("id") or self.path.name.removesuffix(".jsonl"))


def load_session(source: Path | StoredSession) -> LoadedSession:
    """Read a session transcript.

    Args:
        source: The transcript's path, or a ``StoredSession``.

    Raises:
        SessionNotFound: The transcript does not exist.
        SessionReadError: It cannot be read.
    """
    path = source.path if isinstance(source, StoredSession) else Path(source)
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise SessionNotFound(f"The session transcript {path} does not exist.") from exc
    except OSError as exc:
        raise SessionReadError(describe_os_error(exc, path, "read the session transcript")) from exc
    loaded = LoadedSession(path=path)
    loaded.records = _parse(data, path, loaded.warnings)
    if loaded.records and loaded.records[0]["kind"] == "meta":
        loaded.meta = loaded.records[0]
    derive_turns(loaded.records)
    loaded.records = drop_rewound(loaded.records)  # issue 26: a conversation rewind takes its turns back
    for record in loaded.records:
        if record["kind"] == "context":
            loaded.context = record
        elif record["kind"] == "trace":
            entry = record["entry"]  # not copied: a long session has thousands (a copy each was ~2 MB at 1,000 turns)
            entry.setdefault("ts", record.get("ts"))
            loaded.trace.append(entry)
        elif record["kind"] in ("assistant", "usage") and isinstance(record.get("usage"), dict):
            usage = record["usage"]
            loaded.usage.append({"turn": record.get("turn") or usage.get("turn"), "model": usage.get("model"), "usage": usage})
    loaded.messages = _history(loaded.records, loaded.warnings, loaded.incidents, loaded.compactions)
    for warning in loaded.warnings:
        log.warning("%s", warning)
    return loaded


_REQUIRED: dict[str, tuple[tuple[str, type], ...]] = {
    "user": (("content", str),),
    "assistant": (("content", str),),
    "tool_result": (("tool_call_id", str), ("content", str)),
    "context": (("files", list),),
    "trace": (("entry", dict),),
}


def _parse(data: bytes, path: Path, warnings: list[str]) -> list[dict[str, Any]]:
    """Every valid record of the transcript, with a warning for each line skipped."""
    lines = data.split(b"\n")
    # A complete file ends with a newline, so the last piece is empty; anything else was cut short.
    tail = lines.pop()
    records: list[dict[str, Any]] = []
    unknown: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record, problem = _decode(line)
        if record is None:
            warnings.append(f"Line {number} of {path} {problem} and was skipped.")
            continue
        kind = record["kind"]
        if kind not in KINDS:
            unknown[kind] = unknown.get(kind, 0) + 1
            continue
        missing = [name for name, kind_type in _REQUIRED.get(kind, ()) if not isinstance(record.get(name), kind_type)]
        if missing:
            warnings.append(f"Line {number} of {path} (a {kind} record) lacks {', '.join(missing)} and was skipped.")
            continue
        records.append(record)
    if tail.strip():
        warnings.append(f"The last line of {path} was incomplete and was skipped (likely a crash while writing).")
    if unknown:
        kinds = ", ".join(sorted(unknown))
        warnings.append(f"{sum(unknown.values())} record(s) of unknown kind ({kinds}) in {path} were ignored; a newer assistant-tui may have written them.")
    return records


def _decode(line: bytes) -> tuple[dict[str, Any] | None, str]:
    """The record on ``line``, or None and what is wrong with it."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(exc.doc) - 1 or exc.msg.startswith("Unterminated string"):
            return None, "was incomplete (likely a crash while writing)"
        return None, "is corrupt (not valid JSON)"
    except ValueError:  # invalid UTF-8
        return None, "is corrupt (not valid UTF-8)"
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
        return None, "is not a session record"
    return record, ""


def _history(
    records: list[dict[str, Any]], warnings: list[str], incidents: list[Incident] | None = None, compactions: list[tuple[int, dict[str, Any]]] | None = None
) -> list[Message]:
    """The conversation for the model API, with unanswered tool calls closed (errors and interruptions into ``incidents``)."""
    incidents = incidents if incidents is not None else []
    messages: list[Message] = []
    open_calls: dict[str, str] = {}  # tool calls of the last assistant message still without a result
    answered: set[str] = set()
    last_ts = 0.0
    turn_incidents = len(incidents)  # where the incidents of the latest user message begin

    def close_open_calls() -> None:
        for call_id, name in open_calls.items():
            messages.append(
                Message(role="tool", content=INTERRUPTED_RESULT, tool_call_id=call_id, name=name, is_error=True, timestamp=last_ts)
            )
            answered.add(call_id)
            warnings.append(f"Tool call {name} ({call_id}) had no result; it was marked as interrupted.")
        open_calls.clear()

    for record in records:
        kind = record["kind"]
        ts = record.get("ts")
        last_ts = float(ts) if isinstance(ts, (int, float)) else last_ts
        if kind == "user":
            close_open_calls()
            turn_incidents = len(incidents)
            message = Message(role="user", content=record["content"], timestamp=last_ts)
            if isinstance(record.get("turn"), int) and not record.get("note"):
                message["turn"] = record["turn"]  # type: ignore[typeddict-unknown-key]
            parts = record.get("context_parts")
            if isinstance(parts, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in parts):
                attach(message, parts)
            messages.append(message)
        elif kind == "assistant":
            close_open_calls()
            calls = [
                {"id": c["id"], "name": c["name"], "parameters": c.get("parameters") if isinstance(c.get("parameters"), dict) else {}}
                for c in record.get("tool_calls") or []
                if isinstance(c, dict) and isinstance(c.get("id"), str) and isinstance(c.get("name"), str)
            ]
            message = Message(role="assistant", content=record["content"], timestamp=last_ts)
            if calls:
                message["tool_calls"] = calls
            if record.get("interrupted"):
                message["interrupted"] = True
            if isinstance(record.get("stop_reason"), str) and record["stop_reason"]:
                message["stop_reason"] = record["stop_reason"]
            if isinstance(record.get("error"), dict):
                message["error"] = {k: str(v) for k, v in record["error"].items()}  # type: ignore[typeddict-unknown-key]
            thinking = [b for b in record.get("thinking") or [] if isinstance(b, dict) and isinstance(b.get("type"), str)]
            if thinking:
                message["thinking"] = thinking
            messages.append(message)
            open_calls = {c["id"]: c["name"] for c in calls if c["id"] not in answered}
        elif kind == "error":
            incident: Incident = {"kind": "error", "message": str(record.get("message") or ""), "reason": str(record.get("reason") or "")}
            # Retracted: the failed turn answered nothing and its question went back to the prompt (as live):
            # the turn's warnings (retries) stay with it, the question heading them.
            if record.get("retracted") and messages and messages[-1].get("role") == "user":
                query = messages.pop().get("content", "")
                for earlier in incidents[turn_incidents:]:
                    earlier["at"] = len(messages)
                (incidents[turn_incidents] if len(incidents) > turn_incidents else incident)["query"] = query
                if compactions:  # a compaction in the retracted turn happened before its question left
                    compactions[:] = [(min(at, len(messages)), found) for at, found in compactions]
            incidents.append({**incident, "at": len(messages)})
        elif kind == "warning":
            incidents.append({"kind": "warning", "message": str(record.get("message") or ""), "code": str(record.get("code") or ""), "at": len(messages)})
        elif kind == "interruption":
            incidents.append({"kind": "interruption", "at": len(messages)})
        elif kind == "compaction" and compactions is not None:
            close_open_calls()
            compactions.append((len(messages), record))
        elif kind == "tool_result":
            call_id = record["tool_call_id"]
            if call_id not in open_calls:
                name = record.get("name") or "?"
                warnings.append(f"A result of tool {name} ({call_id}) had no matching tool call and was dropped.")
                continue
            name = open_calls.pop(call_id)
            answered.add(call_id)
            messages.append(
                Message(
                    role="tool",
                    content=record["content"],
                    tool_call_id=call_id,
                    name=str(record.get("name") or name),
                    is_error=bool(record.get("is_error")),
                    timestamp=last_ts,
                )
            )
    close_open_calls()
    return messages
