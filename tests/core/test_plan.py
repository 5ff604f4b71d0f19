"""The one ``/plan`` parser: what the handler reports as ``plan_steps`` is what the checklist shows."""

from __future__ import annotations

import pytest

from core.plan import PlanAnswer, parse_plan, split_plan


@pytest.mark.parametrize(
    ("body", "steps"),
    [
        pytest.param("1. Read auth.py\n2. Add a docstring", ["Read auth.py", "Add a docstring"], id="numbered"),
        pytest.param("Step 1: Read auth.py\nStep 2: Add a docstring", ["Read auth.py", "Add a docstring"], id="step-n-colon"),
        pytest.param("1) Read\n2: Write", ["Read", "Write"], id="paren-and-colon"),
        pytest.param("1. Write tests for login()\n   covering bad users\n2. Run them", ["Write tests for login() covering bad users", "Run them"], id="indented-continuation"),
        pytest.param("1. Write tests for login()\ncovering bad users\n2. Run them", ["Write tests for login() covering bad users", "Run them"], id="flush-continuation"),
        pytest.param("- [ ] Read\n- [x] Write\n[ ] Ship", ["Read", "Write", "Ship"], id="checkboxes"),
        pytest.param("Read the code\nWrite tests", ["Read the code", "Write tests"], id="no-markers"),
        pytest.param("\n\n", [], id="empty"),
    ],
)
def test_steps(body: str, steps: list[str]) -> None:
    assert parse_plan(f"Plan:\n<plan>\n{body}\n</plan>\nGo?") == steps


def test_split_keeps_the_text_around_the_plan_and_an_unclosed_plan_runs_to_the_end() -> None:
    assert split_plan("Here.\n<PLAN>\n1. A\n</plan>\nSay go.") == PlanAnswer("Here.", ("A",), "Say go.")
    assert split_plan("Streaming <plan>\n1. A\n2. B") == PlanAnswer("Streaming", ("A", "B"), "")
    assert split_plan("no plan here") is None and parse_plan("no plan here") == []
