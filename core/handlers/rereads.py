"""A file the conversation already holds is not sent to the model again.

Models re-read files they were shown a few steps or turns before; opencode's
users counted 46.5% of 12,112 reads as repeats of the same file in the same
session (anthony-chaudhary/fak#12155). Each repeat is appended to the
conversation, written to the prompt cache and resent on every later request.
Two cases are answered with a one-line pointer instead:

- a ``readFile`` result whose lines, with the same line numbers, are all inside
  an earlier ``readFile`` result of the same file (:func:`earlier_read`);
- a whole-file read of a file the user picked into the context, when the copy
  the conversation holds is the file as it is now (the handler checks the digest).

And the other way round, a file picked into the context whose whole text an
earlier ``readFile`` result already shows is sent as a pointer to that result
(:func:`read_in_full`).

Every check is made against the conversation the model is sent, not against a
record of past reads that could outlive it, and against what the file holds
now, never a modification time (the pitfall of anthropics/claude-code#60684 and
#45748): an edited file reads differently and is sent again; ``/reset`` empties
the conversation and with it every earlier copy; tool results are never
removed from a conversation, and a picked copy that was replaced by a note is
no longer counted as a copy.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from core.tools.files import numbered_line

MIN_POINTED_CHARS = 400
"""Shorter reads are sent as they are: a pointer would save next to nothing."""

READ_TOOL = "readFile"


def holds_lines(content: str, lines: str) -> bool:
    """True when ``lines`` appears in ``content`` as whole lines (not inside a longer line)."""
    start = content.find(lines)
    while start >= 0:
        end = start + len(lines)
        if (start == 0 or content[start - 1] == "\n") and (end == len(content) or content[end] == "\n"):
            return True
        start = content.find(lines, start + 1)
    return False


def _find(history: Sequence[dict[str, Any]], same_file: Callable[[str], bool], shows: Callable[[str], bool]) -> str | None:
    """The id of the newest successful readFile call of the file whose result ``shows`` what is wanted."""
    paths: dict[Any, Any] | None = None
    for message in reversed(history):
        if message.get("role") != "tool" or message.get("name") != READ_TOOL or message.get("is_error") or not shows(str(message.get("content") or "")):
            continue
        if paths is None:  # which path each call read, from the calls the model made (only once a result matches)
            paths = {
                call.get("id"): (call.get("parameters") or {}).get("path")
                for m in history
                if m.get("role") == "assistant"
                for call in m.get("tool_calls") or []
                if call.get("name") == READ_TOOL
            }
        call_id = message.get("tool_call_id")
        raw = paths.get(call_id)
        if call_id and isinstance(raw, str) and same_file(raw):
            return str(call_id)
    return None


def earlier_read(history: Sequence[dict[str, Any]], lines: str, same_file: Callable[[str], bool]) -> str | None:
    """The id of the newest readFile call of the file whose result in ``history`` holds ``lines``.

    Args:
        history: The conversation, whose newest result is not yet ``lines``' own.
        lines: A new read's numbered lines (``readFile``'s output).
        same_file: True for a ``path`` argument that names the file just read.
    """
    return _find(history, same_file, lambda content: holds_lines(content, lines))


def numbered(text: str) -> str:
    """``text`` as a whole ``readFile`` shows it: each line with its number, six wide, and a tab."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "\n".join(numbered_line(number, line) for number, line in enumerate(lines, start=1))


def read_in_full(history: Sequence[dict[str, Any]], text: str, same_file: Callable[[str], bool]) -> str | None:
    """The id of the newest readFile call whose result in ``history`` is the whole of ``text``, numbered."""
    if len(text) < MIN_POINTED_CHARS:
        return None
    shown = numbered(text)
    return _find(history, same_file, lambda content: content == shown)


def read_pointer(shown: str, first: int, last: int, call_id: str) -> str:
    """What the model is told instead of lines it has: where they are."""
    return (
        f"[Not sent again: {shown} lines {first}-{last} are unchanged since the result of readFile call {call_id} "
        "earlier in this conversation, which shows them with these line numbers. Use that result.]"
    )


def picked_pointer(shown: str) -> str:
    return (
        f"[Not sent again: {shown} is unchanged; the whole file is in this conversation as the copy the user "
        "picked into the context. Use that copy; read a line range if you need line numbers.]"
    )

