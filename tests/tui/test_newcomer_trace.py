"""The trace pane at 80x24, read as a new user reads it (issue 23, "use it for an hour at 80x24").

The pane is 26 columns wide there. A call waiting for approval keeps its name ("○ touch  0.0s",
"awaiting approval" on the line below; before, "○ t… awaiting approval 0.0s"), and the approval
line wraps under its own indent ("allow once · waited 0.4s" / "for approval, ran 0.1s"; before,
the second line started at the pane's edge, as if it were a call of its own).
"""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.tui.conftest import TOUCH_SPEC, FixedClock, finish_turn, refreshed, send, settle, wait_for
from tui.app import AssistantApp, make_app
from tui.screens.approval import ApprovalScreen

SMALL = (80, 24)


def trace_rows(app: AssistantApp) -> list[str]:
    """The text inside the trace pane's border, row by row, as the terminal shows it."""
    region = app.trace.content_region
    rows = [strip.text for strip in app.screen_stack[0]._compositor.render_strips()]
    return [row[region.x : region.right] for row in rows[region.y : region.bottom]]


async def test_a_call_awaiting_approval_keeps_its_name_and_its_approval_line_wraps_under_its_indent(project: Path, fake_llm: FakeLLM) -> None:
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0)
    app = make_app(settings, clock=FixedClock())
    assert not app.engine_error, app.engine_error
    app.handler.register_tool(TOUCH_SPEC, lambda params: "created")
    fake_llm.script(Reply(tools=[Tool("touch", {"path": "notes.txt"})]), Reply(text="Done."))
    async with app.run_test(size=SMALL) as pilot:
        await send(pilot, "make notes.txt")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval dialog")
        await settle(pilot)
        await refreshed(pilot, app.trace)
        rows = trace_rows(app)
        assert any(row.strip().startswith("○ touch ") and row.strip().endswith("0.0s") for row in rows), rows
        assert any(row.strip() == "awaiting approval" for row in rows), rows
        await pilot.press("y")
        await finish_turn(pilot)
        await settle(pilot)
        await refreshed(pilot, app.trace)
        rows = trace_rows(app)
        first = next(i for i, row in enumerate(rows) if row.strip().startswith("allow once · waited "))
        indent = len(rows[first]) - len(rows[first].lstrip())
        following = rows[first + 1]
        assert following.strip() and len(following) - len(following.lstrip()) == indent, rows  # its continuation, under it
        assert "for approval, ran" in " ".join(row.strip() for row in rows[first : first + 2]), rows
