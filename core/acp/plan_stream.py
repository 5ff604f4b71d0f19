"""A ``/plan`` answer as it streams: its ``<plan>`` block becomes plan entries, not message text.

The model writes the plan inside ``<plan>`` and ``</plan>`` (``core.plan``). An ACP
client draws plans from ``plan`` updates, so the block is taken out of the streamed
message text and each step is sent as an entry the moment its line is complete
(a step that runs on to the next line is sent again, grown); every entry is
``pending``: a ``/plan`` turn changes nothing, so the steps wait for the user.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.plan import parse_plan_steps

_OPEN = "<plan>"
_CLOSE = "</plan>"


def _partial_tail(text: str, tag: str) -> int:
    """How many characters at the end of ``text`` could begin ``tag`` (held back until the next fragment)."""
    lowered = text.lower()
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(lowered[-size:]):
            return size
    return 0


@dataclass
class PlanStream:
    """Splits streamed answer text into message text and plan steps."""

    inside: bool = False
    body: str = ""
    steps: list[tuple[str, str]] = field(default_factory=list)
    """The entries last sent: ``(content, status)``."""
    _held: str = ""

    def feed(self, fragment: str) -> tuple[str, list[tuple[str, str]] | None]:
        """The displayable part of ``fragment`` and the plan's entries when they changed (else None)."""
        text = self._held + fragment
        self._held = ""
        shown: list[str] = []
        closed = False
        while text:
            tag = _CLOSE if self.inside else _OPEN
            at = text.lower().find(tag)
            if at == -1:
                keep = _partial_tail(text, tag)
                head, self._held = text[: len(text) - keep], text[len(text) - keep :]
                if self.inside:
                    self.body += head
                else:
                    shown.append(head)
                break
            if self.inside:
                self.body += text[:at]
                closed = True
                shown.append("\n\n")  # the text after the plan starts a paragraph of its own
            else:
                shown.append(text[:at])
                self.body = ""
            self.inside = not self.inside
            text = text[at + len(tag) :]
        return "".join(shown), self._entries(closed)

    def flush(self) -> str:
        """Text held back at the end of the answer (a ``<`` that began no tag)."""
        held, self._held = self._held, ""
        if self.inside:
            self.body += held
            return ""
        return held

    def _entries(self, closed: bool) -> list[tuple[str, str]] | None:
        if not (self.inside or closed):
            return None
        if self.inside:  # the last line may still be growing: only whole lines are steps yet
            complete = self.body.rpartition("\n")[0]
            entries = [(step, "pending") for step in parse_plan_steps(complete)]
        else:
            entries = [(step, "pending") for step in parse_plan_steps(self.body)]
        if entries == self.steps or not entries:
            return None
        self.steps = entries
        return entries
