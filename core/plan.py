"""``/plan``: the instruction sent with a plan request and the one parser of its answer.

The handler's ``metadata["plan_steps"]`` and the checklist the TUI shows both come
from :func:`split_plan`, so they cannot disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PLAN_INSTRUCTIONS = """\
The user asked for a plan (/plan). Answer with a step-by-step plan enclosed in <plan> and </plan>:
one step per line, numbered "1.", "2.", ... Each step is one concrete action (cite files where relevant).
Do not make changes while planning; you may read files to make the plan precise."""

PLAN_BLOCK = re.compile(r"<plan>(.*?)(?:</plan>|\Z)", re.DOTALL | re.IGNORECASE)
"""The first ``<plan>`` block (an unclosed one runs to the end, as while it streams)."""
_STEP = re.compile(r"^(?:(?:step\s*)?\d+[.):]|[-*+]|\[[ xX]?\])\s+(.*)$", re.IGNORECASE)
_CHECKBOX = re.compile(r"^\[[ xX]?\]\s+")


@dataclass(frozen=True)
class PlanAnswer:
    """An answer split around its plan: text before, the steps, text after."""

    before: str
    steps: tuple[str, ...]
    after: str


def parse_plan_steps(body: str) -> list[str]:
    """The steps of a plan body.

    A step starts with a number (``1.``, ``1)``, ``1:``, ``Step 1:``), a bullet
    (``-``, ``*``, ``+``) or a checkbox (``[ ]``, also after a bullet). Once a step
    has started, an unmarked line continues it (indented or not); before any
    marker, each non-empty line is a step of its own.
    """
    steps: list[str] = []
    marked = False
    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            continue
        match = _STEP.match(line)
        if match:
            marked = True
            steps.append(_CHECKBOX.sub("", match.group(1).strip()))
        elif marked:
            steps[-1] = f"{steps[-1]} {line}"
        else:
            steps.append(line)
    return [step for step in steps if step]


def split_plan(text: str) -> PlanAnswer | None:
    """Split an answer around its first ``<plan>`` block; None when it has none."""
    match = PLAN_BLOCK.search(text or "")
    if not match:
        return None
    return PlanAnswer(text[: match.start()].strip(), tuple(parse_plan_steps(match.group(1))), text[match.end() :].strip())


def parse_plan(text: str) -> list[str]:
    """The steps of the answer's first ``<plan>`` block, or [] without one."""
    plan = split_plan(text)
    return list(plan.steps) if plan else []
