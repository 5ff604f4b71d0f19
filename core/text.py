"""Showing untrusted text (model output, tool output, file contents) in a terminal.

Control characters would be obeyed by the terminal: OSC 52 writes the
clipboard, OSC 8 makes hidden links, CSI moves the cursor or clears the screen.
:func:`visible_controls` turns every control character except newline and tab
into a visible stand-in, so the text is shown, never executed.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _stand_in(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode control pictures: ESC -> ␛, CR -> ␍
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}"  # C1 controls have no pictures


_TABLE = {code: _stand_in(code) for code in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}


def has_controls(text: str) -> bool:
    """True when ``text`` holds a control character other than newline and tab."""
    return _CONTROL.search(text) is not None


def visible_controls(text: str) -> str:
    """``text`` with control characters (except newline and tab) shown as visible symbols.

    ``\\r\\n`` becomes ``\\n`` first, so Windows line endings are not decorated.
    """
    if not has_controls(text):
        return text
    return text.replace("\r\n", "\n").translate(_TABLE)


_HIDING = (
    "\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u206a-\u206f\ufeff\ufff9-\ufffb"
    "\U000e0000-\U000e0fff"
)
"""Characters that reorder the text around them or hide text, and have no use in source or prose shown
here: bidirectional marks, embeddings, overrides and isolates (Trojan Source, CVE-2021-42574), zero-width
spaces, invisible operators and the tag characters (ASCII smuggling, U+E0000-U+E0FFF)."""
_INVISIBLE = re.compile(f"[{_HIDING}]")
_ANY_INVISIBLE = re.compile(
    f"[{_HIDING}\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u200c\u200d\u3164"
    "\ufe00-\ufe0f\uffa0\U0001d173-\U0001d17a]"
)
"""Also the characters drawn as nothing that emoji and some scripts use (joiners, variation selectors):
shown in what a person approves, left alone in chat text."""


def visible_text(text: str, *, strict: bool = True) -> str:
    """``text`` as a reader must see it: controls as symbols, hiding characters as ``<U+202E>``.

    Args:
        text: Untrusted text (a command line, a file name, model output).
        strict: Show every invisible character (for what a person approves: a command line,
            a file name, an instruction); otherwise only those that hide or reorder text, so
            emoji joiners and variation selectors in chat text still draw as emoji.
    """
    text = visible_controls(text)
    pattern = _ANY_INVISIBLE if strict else _INVISIBLE
    if not pattern.search(text):
        return text
    return pattern.sub(lambda match: f"<U+{ord(match.group()):04X}>", text)


def without_hiding(text: str) -> str:
    """``text`` without the characters that hide or reorder text; drawn in the same cells as before.

    For text laid out before it is checked (a terminal line): each removed character was zero
    cells wide, so the line keeps its width and the text is shown in its logical order.
    """
    return _INVISIBLE.sub("", text) if _INVISIBLE.search(text) else text


_FOR_TERMINAL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_HIDING}]")


def changed_for_terminal(text: str) -> bool:
    """True when :func:`for_terminal` would change ``text`` (one search: it runs on every rendered line)."""
    return _FOR_TERMINAL.search(text) is not None


def for_terminal(text: str) -> str:
    """Untrusted text as a terminal may print it: controls as symbols, hiding characters removed.

    The one rule for content that reaches a terminal (the TUI's every line, ``-p``'s output
    and notices); what a person approves uses the stricter :func:`visible_text`.
    """
    return visible_controls(without_hiding(text))


def human_size(count: int) -> str:
    """A byte count for people: ``532 B``, ``12.4 KB``, ``300 KB``, ``45 MB`` (units of 1024)."""
    if count < 1024:
        return f"{count} B"
    value, unit = (count / 1024, "KB") if count < 1024 * 1024 else (count / (1024 * 1024), "MB")
    return f"{value:.1f}".removesuffix(".0") + f" {unit}"
