"""ctrl+c in the prompt, as a new user presses it (issue 23, "use it for an hour at 80x24").

With text in the prompt and nothing selected, ctrl+c clears the prompt and keeps the text in the
history (Up brings it back); on an empty prompt it still says how to quit. Before, it only said
"Press ctrl+q to quit the app" and the text stayed, so a long prompt could be cleared only with
Backspace held down.
"""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from tests.fake_llm import FakeLLM
from tests.tui.conftest import FixedClock, Notices, refreshed, started, wait_for
from tui.app import make_app

SMALL = (80, 24)


async def test_ctrl_c_clears_the_prompt_up_brings_it_back_and_an_empty_prompt_says_how_to_quit(project: Path, fake_llm: FakeLLM) -> None:
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0)
    app = make_app(settings, clock=FixedClock())
    notices = Notices()
    async with app.run_test(size=SMALL, message_hook=notices) as pilot:
        await started(pilot)
        await pilot.press(*"explain the login flow")
        await wait_for(pilot, lambda: app.prompt.text == "explain the login flow")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.prompt.text == "", what="the prompt cleared")
        assert any("Up brings it back" in message for message in notices.messages), notices.messages
        await pilot.press("up")
        await wait_for(pilot, lambda: app.prompt.text == "explain the login flow", what="Up brings the text back")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.prompt.text == "")
        await pilot.press("ctrl+c")  # empty: the app's own answer
        await wait_for(pilot, lambda: any("ctrl+q" in message and "Up" not in message for message in notices.messages), what="how to quit")
        await refreshed(pilot)
        assert app.is_running and not fake_llm.requests
