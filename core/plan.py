"""``/plan``: the instruction sent with a plan request and the parsing of its answer."""

from __future__ import annotations

import re

PLAN_INSTRUCTIONS = """\
The user asked for a plan (/plan). Answer with a step-by-step plan enclosed in <plan> and </plan>:
one step per line, numbered "1.", "2.", ... Each step is one concrete action (cite files where relevant).
Do not make changes while planning; you may read files to make the plan precise."""

_PLAN_BLOCK = re.compile(r"<plan>(.*?)(?:</plan>|\Z)", re.DOTALL | re.IGNORECASE)
_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*+]|\[[ xX]?\])\s+(.*\S)\s*$")


def parse_plan(text: str) -> list[str]:
    """The steps of the first ``<plan>`` block (numbered or bulleted lines), or [] without one.

    Lines that continue a step (indented, not numbered) are joined to it.
    """
    match = _PLAN_BLOCK.search(text or "")
    if not match:
        return []
    steps: list[str] = []
    for line in match.group(1).splitlines():
        if not line.strip():
            continue
        step = _STEP.match(line)
        if step:
            steps.append(step.group(1).strip())
        elif steps and line[:1].isspace():
            steps[-1] += " " + line.strip()
        else:
            steps.append(line.strip())
    return steps


def split_plan(text: str) -> tuple[str, list[str], str]:
    """Text before the plan, the steps, and text after it (for rendering a checklist)."""
    match = _PLAN_BLOCK.search(text or "")
    if not match:
        return text, [], ""
    return text[: match.start()].strip(), parse_plan(text), text[match.end() :].strip()
