"""Large pastes: one chip in the prompt and in the chat, the whole text sent.

A paste over :data:`PASTE_LINES` lines or :data:`PASTE_BYTES` bytes goes into the
prompt as a chip such as ``[pasted #1: 2,000 lines, 110 KB]``; the prompt keeps the
text in a :class:`PasteStore` and puts it back in place of the chip when the prompt
is sent, so the model and the transcript get every byte. The prompt's history keeps
the chips (recalling an entry recalls its pastes); a failed turn's text comes back
with its chips (:meth:`PasteStore.compress`).

The chip follows Claude Code's ``[Pasted text #1 +N lines]``: plain text that the
editor treats as one character, so arrows skip it and one Backspace deletes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PASTE_LINES = 30
"""A paste with more lines than this becomes a chip."""
PASTE_BYTES = 4096
"""A paste bigger than this (UTF-8) becomes a chip, whatever its lines."""

_CHIP = re.compile(r"\[pasted #(\d+)(?::[^\]\n]*)?\]")


def normalize(text: str) -> str:
    """``text`` with CRLF and CR line ends as LF (terminals send a pasted newline as CR)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def is_large(text: str) -> bool:
    """True when ``text`` should be a chip rather than typed-out text."""
    return _lines(text) > PASTE_LINES or _size(text) > PASTE_BYTES


def describe(text: str) -> str:
    """``"2,000 lines, 110 KB"``: what a chip says about its text."""
    lines, size = _lines(text), _size(text)
    if size < 1024:
        amount = f"{size:,} byte{'s' if size != 1 else ''}"
    elif size < 1024 * 1024:
        amount = f"{size / 1024:,.0f} KB" if size >= 10 * 1024 else f"{size / 1024:.1f} KB"
    else:
        amount = f"{size / 1024 / 1024:.1f} MB"
    return f"{lines:,} line{'s' if lines != 1 else ''}, {amount}"


@dataclass(frozen=True)
class Paste:
    """One large paste and the chip standing for it."""

    number: int
    text: str

    @property
    def chip(self) -> str:
        """The chip as it appears in the prompt."""
        return f"[pasted #{self.number}: {describe(self.text)}]"


class PasteStore:
    """The large pastes of one prompt, numbered from 1 for the whole run (history keeps their chips)."""

    def __init__(self) -> None:
        self._pastes: dict[int, Paste] = {}

    def __bool__(self) -> bool:
        return bool(self._pastes)

    def add(self, text: str) -> Paste:
        """Keep ``text`` (already normalized) and return its paste, with the chip to insert."""
        paste = Paste(len(self._pastes) + 1, text)
        self._pastes[paste.number] = paste
        return paste

    def chips(self, line: str) -> list[tuple[int, int]]:
        """``(start, end)`` columns of the known chips in one line of the prompt."""
        if not self._pastes:  # the prompt's every line render and cursor move ask: no regex while nothing was pasted
            return []
        return [match.span() for match in _CHIP.finditer(line) if int(match.group(1)) in self._pastes]

    def expand(self, text: str) -> str:
        """The prompt's text with each chip replaced by its paste.

        A chip whose label was edited still stands for its paste as long as
        ``[pasted #N`` and the closing bracket are left; an unknown number stays as typed.
        """

        def put_back(match: re.Match[str]) -> str:
            paste = self._pastes.get(int(match.group(1)))
            return match.group(0) if paste is None else paste.text

        return _CHIP.sub(put_back, text)

    def compress(self, text: str) -> str:
        """``text`` (as sent) with each kept paste it contains turned back into its chip."""
        for paste in sorted(self._pastes.values(), key=lambda p: len(p.text), reverse=True):
            if paste.text in text:
                text = text.replace(paste.text, paste.chip)
        return text

    def found_in(self, text: str) -> list[str]:
        """The kept pastes that ``text`` contains, in the order they appear (for the chat)."""
        spans = []
        for paste in self._pastes.values():
            at = text.find(paste.text)
            if at >= 0:
                spans.append((at, paste.text))
        return [paste for _, paste in sorted(spans)]


def segments(text: str, pastes: list[str]) -> list[tuple[str, bool]]:
    """``text`` cut into ``(part, is_paste)`` pieces: typed text and the pastes it holds.

    Without known pastes, a message that is large as a whole (a resumed session's
    pasted question) is one paste.
    """
    if not pastes:
        return [(text, is_large(text))] if text else []
    out: list[tuple[str, bool]] = []
    position = 0
    for paste in pastes:
        at = text.find(paste, position)
        if at < 0:
            continue
        if at > position:
            out.append((text[position:at], False))
        out.append((paste, True))
        position = at + len(paste)
    if position < len(text):
        out.append((text[position:], False))
    return out
