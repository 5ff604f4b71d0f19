"""The user-turn number: one numbering for the status line, the trace, ``/cost``, the export and a resume.

Turn N is the Nth message the user sent to the model in this session: a typed question,
``/plan``, ``/aider`` and ``/continue`` each count one, as the user sees them in the chat.
What the user did not send to the model is not a turn: the output of ``/run`` and the
result of ``/task``, added to the conversation as notes. A turn that failed before any
answer gives its text back to the prompt and leaves the conversation (``retracted``):
sending it again is that same turn, so the number is not used twice for different
messages and no number is skipped.

The number is stored with the message: ``turn`` on the user message of the history and
on the transcript's ``user`` record (a note's record has ``note: true`` instead).
Transcripts written before it was stored get it derived once, on load, by the same
rule (:func:`derive_turns`).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, MutableMapping, Sequence

NOTE_PREFIXES = ("I ran `", "I ran a command, `")
"""How the notes of ``/task`` and ``/run`` begin (older transcripts do not mark them ``note``)."""


def current_turn(history: Sequence[Mapping[str, Any]]) -> int:
    """The number of the latest user turn in ``history`` (0 before the first).

    Messages without a number (notes, assistant and tool messages) are skipped; the
    scan stops at the newest numbered user message, a few messages from the end.
    """
    for message in reversed(history):
        if message.get("role") == "user":
            number = message.get("turn")
            if isinstance(number, int) and not isinstance(number, bool):
                return number
    return 0


def is_note_record(record: Mapping[str, Any]) -> bool:
    """True for a ``user`` record that is a note (``/run`` output, a ``/task`` result), not a turn."""
    if record.get("note"):
        return True
    if isinstance(record.get("turn"), int):
        return False
    # Older transcripts: a turn's record always has context_parts (at least the time); a note never does.
    content = record.get("content")
    return not record.get("context_parts") and isinstance(content, str) and content.startswith(NOTE_PREFIXES)


def derive_turns(records: Iterable[MutableMapping[str, Any]]) -> None:
    """Give every turn's ``user`` record its ``turn`` and every ``assistant`` record its owner's (in place).

    A stored number is kept; a record without one (an older transcript) gets the
    next number, and a retracted error record gives its turn's number back. The
    assistant records' usage is booked to the turn of the user record before them.
    """
    number = 0
    last_user: MutableMapping[str, Any] | None = None
    for record in records:
        kind = record.get("kind")
        if kind == "user":
            if is_note_record(record):
                record["note"] = True
                continue
            stored = record.get("turn")
            number = stored if isinstance(stored, int) and not isinstance(stored, bool) and stored > 0 else number + 1
            record["turn"] = number
            last_user = record
        elif kind in ("assistant", "usage"):
            record["turn"] = number
            last_user = None
        elif kind == "tool_result":
            last_user = None
        elif kind == "error" and record.get("retracted") and last_user is not None:
            number = max(0, int(last_user["turn"]) - 1)  # the resend is this turn again
            last_user = None
