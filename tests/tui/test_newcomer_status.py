"""The 80-column status line as a new user watches it (issue 23, "use it for an hour at 80x24").

At 80 columns the line always shows the model, ``turn N``, ``tools n/10``, the context figures,
what is happening and the session's cost: the parts get their short forms (``Σ ≥ $0.12``,
``waiting…``, ``approve touch…``) before any of them is left out. Before, the session's total
went first, so it vanished whenever the state or the context figure grew by a few characters
(after an interruption: ``≥ $…`` shown, then lost), and during an approval the turn and the
tool counter went too.
"""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.tui.conftest import TOUCH_SPEC, FixedClock, finish_turn, refreshed, send, settle, stop_mid_answer, wait_for, widgets
from tui.app import make_app
from tui.screens.approval import ApprovalScreen

SMALL = (80, 24)


def base_rows(app) -> list[str]:
    """The rows of the conversation's screen (under any dialog), as a terminal shows them."""
    return [strip.text for strip in app.screen_stack[0]._compositor.render_strips()]


async def test_after_an_interruption_the_80_column_status_keeps_turn_tools_and_the_session_cost(project: Path, fake_llm: FakeLLM) -> None:
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0, model="claude-sonnet-4-5")
    app = make_app(settings, clock=FixedClock())
    assert not app.engine_error, app.engine_error
    app.handler.register_tool(TOUCH_SPEC, lambda params: "created")
    fake_llm.script(
        Reply(text="word " * 2000, chunk=5, tokens_per_second=100, input_tokens=40_000),  # interrupted: "≥" from now on
        Reply(text="Creating it.", tools=[Tool("touch", {"path": "notes.txt"})], input_tokens=41_000, output_tokens=30),
        Reply(text="Done.", input_tokens=41_100, output_tokens=5),
    )
    async with app.run_test(size=SMALL) as pilot:
        await stop_mid_answer(pilot, "write a lot")
        await refreshed(pilot)
        status = base_rows(app)[-2]
        assert "turn 1 · tools 0/10" in status and "Σ" in status and "≥ $" in status, status

        await send(pilot, "make notes.txt")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval dialog")
        await wait_for(pilot, lambda: "touch" in str(app.status.render()))
        await refreshed(pilot, app.status)
        status = str(app.status.render())
        assert app.status.size.width == 80
        assert "turn 2 · tools 1/10" in status, status  # before: "claude-sonnet-4-5 · ~41k/200k · waiting for your approval of touch…"
        assert "Σ" in status and "≥ $" in status and "touch" in status, status
        await pilot.press("y")
        await finish_turn(pilot)
        await settle(pilot)
        await refreshed(pilot)
        status = base_rows(app)[-2]
        assert "turn 2 · tools 1/10" in status and "Σ" in status and "≥ $" in status and "ready" in status, status
