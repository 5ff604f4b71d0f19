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


def human_size(count: int) -> str:
    """A byte count for people: ``532 B``, ``12.4 KB``, ``300 KB``, ``45 MB`` (units of 1024)."""
    if count < 1024:
        return f"{count} B"
    value, unit = (count / 1024, "KB") if count < 1024 * 1024 else (count / (1024 * 1024), "MB")
    return f"{value:.1f}".removesuffix(".0") + f" {unit}"
