"""Hiding the raw ``<plan>`` tags while an answer streams (the plan itself is parsed by :mod:`core.plan`)."""

from __future__ import annotations

import re

_TAGS = ("<plan>", "</plan>")


class TagFilter:
    """Removes ``<plan>``/``</plan>`` from streamed fragments, even when a tag is split across them."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, fragment: str) -> str:
        """The displayable part of ``fragment``; a possible partial tag at the end is held back."""
        text = self._held + fragment
        self._held = ""
        for tag in _TAGS:
            text = re.sub(re.escape(tag), "\n" if tag == "<plan>" else "", text, flags=re.IGNORECASE)
        cut = text.rfind("<")
        if cut != -1:
            tail = text[cut:].lower()
            if any(tag.startswith(tail) and tail != tag for tag in _TAGS):
                self._held = text[cut:]
                text = text[:cut]
        return text

    def flush(self) -> str:
        """Whatever was held back (the stream ended)."""
        held, self._held = self._held, ""
        return held
