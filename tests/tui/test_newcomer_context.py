"""The context pane below 80 columns (issue 23, "use it for an hour at 80x24", then resize to 60x20).

The pane's total line says how many files are picked and the context figure. At 60x20 the pane
is 26 columns wide: "0 files · context ~1.8k/200k" wrapped, and its second line (the figure) fell
below the pane's last row, so the pane showed no figure at all. Now the line drops the word
"context" where it does not fit and keeps the figure; it comes back when the terminal grows.
"""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from tests.fake_llm import FakeLLM
from tests.tui.conftest import FixedClock, refreshed, started
from tui.app import AssistantApp, make_app
from tui.format import context_figure


def pane_rows(app: AssistantApp) -> list[str]:
    """The text inside the context pane, row by row, as the terminal shows it."""
    region = app.context_pane.content_region
    rows = [strip.text for strip in app.screen._compositor.render_strips()]
    return [row[region.x : region.right] for row in rows[region.y : region.bottom]]


async def test_the_context_figure_stays_in_the_pane_at_60x20_and_the_word_comes_back_at_80x24(project: Path, fake_llm: FakeLLM) -> None:
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0)
    app = make_app(settings, clock=FixedClock())
    async with app.run_test(size=(60, 20)) as pilot:
        await started(pilot)
        await refreshed(pilot)
        figure = context_figure(app.context_pane.metrics)[1]
        assert figure.endswith("/200k"), figure
        rows = pane_rows(app)
        assert any(row.strip() == f"0 files · {figure}" for row in rows), rows
        await pilot.resize_terminal(80, 24)
        await refreshed(pilot)
        await refreshed(pilot)
        rows = pane_rows(app)
        assert any(row.strip() == f"0 files · context {figure}" for row in rows), rows
