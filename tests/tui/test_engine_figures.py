"""Issue 24 s3: the context figure is computed in core and handed to each widget that shows it, never passed from one widget to another.

Before, the status line posted ``StatusLine.ContextChanged`` with its merged metrics and the app
copied that into the context pane: the status-line widget was the source of the pane's figure.
Now the conversation hands the session's metrics (``core.usage.ContextMeter``'s keys) to both.
"""

from __future__ import annotations

from core.config import Settings
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.tui.conftest import SIZE, finish_turn, send, started
from tui.app import AssistantApp

CONTEXT = ("estimated_tokens", "context_estimated_tokens", "context_window")


def _figure(metrics: dict) -> dict:
    return {key: metrics.get(key) for key in CONTEXT}


async def test_the_pane_shows_cores_figure_and_no_widgets(real_app: AssistantApp, fake_llm: FakeLLM, real_settings: Settings) -> None:
    """After a turn with a tool call, the pane and the status line show the session's figure; a figure a widget
    announces (the status line's old message) does not reach the pane."""
    fake_llm.script(Reply(tools=[Tool("echo", {"text": "hi"})]), Reply(text="Done."))
    async with real_app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await send(pilot, "say hi through echo")
        await finish_turn(pilot)
        core = _figure(real_app.engine.session.metrics())
        assert core["estimated_tokens"] and core["context_window"] == real_settings.context_window
        assert _figure(real_app.context_pane.metrics) == core
        assert _figure(real_app.status.metrics) == core
        real_app.status.update_metrics({"estimated_tokens": 1, "context_estimated_tokens": 1, "context_window": 7})
        await pilot.pause()
        await real_app.screen.wait_for_refresh()
        assert _figure(real_app.context_pane.metrics) == core, "a widget's figure reached the pane"
