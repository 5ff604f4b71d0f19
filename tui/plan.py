"""Turning ``<plan>...</plan>`` answers into steps, and hiding the raw tags while they stream."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PLAN_RE = re.compile(r"<plan>(.*?)(?:</plan>|\Z)", re.DOTALL | re.IGNORECASE)
_STEP_RE = re.compile(r"^\s*(?:(?:step\s*)?\d+[.):]|[-*+]|\[[ xX]?\])\s+(.*)$", re.IGNORECASE)
_TAGS = ("<plan>", "</plan>")


@dataclass(frozen=True)
class PlanAnswer:
    """An answer split around its plan: text before, the steps, text after."""

    before: str
    steps: tuple[str, ...]
    after: str


def parse_plan_steps(body: str) -> list[str]:
    """The steps of a plan body: numbered or bulleted items, continuation lines folded in.

    Without any list markers each non-empty line is a step.
    """
    steps: list[str] = []
    marked = False
    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            continue
        match = _STEP_RE.match(line)
        if match:
            marked = True
            text = match.group(1).strip()
            if text.startswith("[ ]") or text.lower().startswith("[x]"):
                text = text[3:].strip()
            steps.append(text)
        elif marked and steps:
            steps[-1] = f"{steps[-1]} {line}"
        else:
            steps.append(line)
    return steps


def split_plan(text: str) -> PlanAnswer | None:
    """Split an answer containing ``<plan>`` into its parts; None when it has no plan."""
    match = _PLAN_RE.search(text)
    if not match:
        return None
    steps = parse_plan_steps(match.group(1))
    return PlanAnswer(text[: match.start()].strip(), tuple(steps), text[match.end() :].strip())


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
