"""Changing the model's view of the conversation: pruning old tool results and replacing the older part by a summary.

One function, :func:`apply_compaction`, makes the change from a compaction record, both
live (:mod:`core.compaction.compactor`) and when a transcript is loaded
(:func:`replay`), so a resumed session holds exactly the view the model had.

What stays valid after it:

- no tool result without its call: the summary replaces messages up to a user or
  assistant message, never between a call and its result;
- no pointer into removed content: a ``readFile`` result that said "not sent again,
  see readFile call X" (:mod:`core.handlers.rereads`) whose call X was removed or
  pruned is replaced by a note saying to read again, and picked files whose copy
  pointed at such a result are re-sent with the summary;
- the picked files as they are now travel with the summary (``summary_parts``), and
  older copies in the kept messages become notes.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from core.turn_context import attach, render

Message = dict[str, Any]

SUMMARY_HEADER = (
    "[Summary of the earlier part of this conversation, written by you when it was compacted "
    "({replaced} messages). The newest messages follow it verbatim; files picked into the context "
    "are attached as they are now.]"
)
STALE_POINTER = (
    "[This result pointed to an earlier readFile result that was removed from the conversation when it "
    "was compacted. Call readFile again (same path and lines) to see these lines.]"
)
_CALL_REFERENCE = re.compile(r"readFile call (\S+?) earlier in this conversation")


def prune_pointer(name: str, parameters: dict[str, Any], chars: int) -> str:
    """What a pruned tool result says instead: what was there and how to get it again."""
    args = ", ".join(f"{key}={value!r}" for key, value in parameters.items())
    return (
        f"[Pruned when the conversation was compacted: this was the result of {name}({args}), "
        f"{chars:,} characters. Call {name} again with the same arguments if you need it.]"
    )


def summary_message(record: dict[str, Any]) -> Message:
    """The user message that carries a compaction's summary (and the picked files as they were then)."""
    text = SUMMARY_HEADER.format(replaced=record.get("replaced", 0)) + "\n\n" + str(record.get("summary") or "")
    message: Message = {"role": "user", "content": text, "timestamp": record.get("ts", 0.0), "compaction": True}
    if isinstance(record.get("summary_turn"), int) and record["summary_turn"] > 0:
        message["turn"] = record["summary_turn"]
    parts = [dict(p) for p in record.get("summary_parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    attach(message, parts)
    return message


def apply_compaction(view: Sequence[Message], record: dict[str, Any], originals: dict[str, str]) -> tuple[list[Message], list[Message]]:
    """The view after ``record``, and the messages it removed (pruned results keep their text in ``originals``).

    Args:
        view: The model's view before the compaction (its messages are edited in place).
        record: ``pruned`` (call id to pointer text), ``replaced`` (how many leading
            messages the summary replaces; 0 or absent: pruning only), ``summary``,
            ``summary_parts``, ``summary_turn``.
        originals: Filled with each pruned result's text, by call id.
    """
    pruned: dict[str, str] = dict(record.get("pruned") or {})
    for message in view:
        call_id = message.get("tool_call_id")
        if message.get("role") == "tool" and call_id in pruned:
            originals.setdefault(str(call_id), str(message.get("content") or ""))
            message["content"] = pruned[call_id]
            message["pruned"] = True
    replaced = int(record.get("replaced") or 0) if record.get("summary") is not None else 0
    removed = list(view[:replaced])
    kept = list(view[replaced:])
    if replaced:
        kept.insert(0, summary_message(record))
    gone = {str(m.get("tool_call_id")) for m in removed if m.get("role") == "tool"} | set(pruned)
    _forget_pointers(kept, gone)
    if replaced:
        fresh = {p.get("path") for p in kept[0].get("context_parts") or [] if p.get("kind") in ("file", "note")}
        _retire_copies(kept[1:], fresh)
    return kept, removed


def _forget_pointers(view: Sequence[Message], gone: set[str]) -> None:
    """Pointers to results that are gone become notes saying to read again."""
    if not gone:
        return
    for message in view:
        if message.get("role") == "tool" and not message.get("pruned"):
            match = _CALL_REFERENCE.search(str(message.get("content") or ""))
            if match and match.group(1) in gone and str(message.get("content") or "").startswith("[Not sent again"):
                message["content"] = STALE_POINTER
        parts = message.get("context_parts")
        if message.get("role") == "user" and parts and not message.get("compaction"):
            changed = False
            for index, part in enumerate(parts):
                match = _CALL_REFERENCE.search(str(part.get("text") or ""))
                if part.get("kind") == "file" and match and match.group(1) in gone:
                    parts[index] = {"kind": "note", "path": part.get("path"), "text": f"[{part.get('path')} was here; its copy was removed when the conversation was compacted]"}
                    changed = True
            if changed:
                message["context"] = render(parts)


def _retire_copies(view: Sequence[Message], fresh: set[Any]) -> None:
    """Older copies of files the summary carries become notes (the summary's copy is the current one)."""
    if not fresh:
        return
    for message in view:
        parts = message.get("context_parts")
        if message.get("role") != "user" or not parts:
            continue
        changed = False
        for index, part in enumerate(parts):
            if part.get("kind") == "file" and part.get("path") in fresh:
                parts[index] = {"kind": "note", "path": part["path"], "text": f"[an older copy of {part['path']} was here; the current one is attached to the summary at the start]"}
                changed = True
        if changed:
            message["context"] = render(parts)


def replay(messages: Sequence[Message], compactions: Sequence[tuple[int, dict[str, Any]]]) -> tuple[list[Message], list[Message], dict[str, str]]:
    """The model's view of a loaded transcript: ``(view, archive, originals)``.

    Args:
        messages: Every message of the transcript, in order (``core.sessions.load``).
        compactions: ``(position, record)``: each compaction record and how many
            messages came before it.
    """
    view: list[Message] = []
    archive: list[Message] = []
    originals: dict[str, str] = {}
    taken = 0
    for position, record in compactions:
        view.extend(messages[taken:position])
        taken = max(taken, position)
        view, removed = apply_compaction(view, record, originals)
        archive.extend(m for m in removed if not m.get("compaction"))
    view.extend(messages[taken:])
    return view, archive, originals
