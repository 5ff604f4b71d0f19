"""The footer shows the keys of the screen in front (issue 23, "use it for an hour at 80x24").

Every dialog and full-screen view a new user opens (f2, ``/sessions``, ``/rewind``, ``/mcp``, the
over-budget question of ``/add``, the file picker, the trust question at start) ends in a footer with its own keys.
Before, the conversation's footer showed through underneath: "⏎ Send ^j Newline ^o Pick …" while
none of those keys did anything there. Read from the rows a terminal shows, at 80x24, through
the real app (the real engine against the fake server).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.config import Settings
from tests.fake_llm import FakeLLM, Reply
from tests.tui.conftest import FixedClock, finish_turn, refreshed, send, settle, started, wait_for
from tests.tui.test_trust_screen import cli_app, hostile_project, question_shown
from tui.app import AssistantApp, make_app
from tui.screens.confirm import ConfirmScreen
from tui.screens.mcp import McpScreen
from tui.screens.picker import FilePickerScreen
from tui.screens.rewind import RewindScreen
from tui.screens.sessions import SessionPickerScreen
from tui.screens.text_view import TextViewScreen
from tui.widgets.footer import KeyFooter

SMALL = (80, 24)
CONVERSATION_KEYS = ("Send", "Newline", "Pick", "History")


def footer_composed(app: AssistantApp) -> bool:
    """The screen in front has a footer of its own, with its keys in it (Textual composes them after the first refresh)."""
    return any(footer.children for footer in app.screen.query(KeyFooter))


def bottom_row(app: AssistantApp) -> str:
    """The terminal's last row with the screen in front (dialogs are drawn over the conversation)."""
    return app.screen._compositor.render_strips()[-1].text


async def open_and_read(pilot: Any, opener: str, screen: type) -> str:
    """Open a screen with a command (``/...``) or a key, wait until it is drawn, and return its bottom row."""
    app = pilot.app
    if opener.startswith("/"):
        await send(pilot, opener)
    else:
        await pilot.press(opener)
    await wait_for(pilot, lambda: isinstance(app.screen, screen), what=f"{screen.__name__} in front")
    await settle(pilot)
    await wait_for(pilot, lambda: footer_composed(app), what=f"a footer of {screen.__name__}'s own")
    await refreshed(pilot)
    return bottom_row(app)


@pytest.mark.parametrize(
    ("opener", "screen", "keys"),
    [
        ("f2", TextViewScreen, ["Close"]),
        ("/sessions", SessionPickerScreen, ["Close"]),
        ("/rewind", RewindScreen, ["Both", "Files", "Conversation", "Close"]),
        ("/mcp", McpScreen, ["Restart", "Close"]),
        ("/add big.py", ConfirmScreen, ["Yes", "No"]),
        ("ctrl+o", FilePickerScreen, ["Close", "Select", "Add"]),
    ],
)
async def test_a_screen_in_front_shows_its_own_keys_in_the_footer(project: Path, fake_llm: FakeLLM, opener: str, screen: type, keys: list[str]) -> None:
    (project / "big.py").write_text("value = 'a line of a big module'\n" * 2500)  # ~21k tokens: over a 16k window
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0, context_window=16_000)
    app = make_app(settings, clock=FixedClock())
    assert not app.engine_error, app.engine_error
    fake_llm.script(Reply(text="Hello."))
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await send(pilot, "hello")
        await finish_turn(pilot)
        await settle(pilot)
        assert "Send" in bottom_row(app)
        row = await open_and_read(pilot, opener, screen)
        assert all(key in row for key in keys), row
        assert not any(key in row for key in CONVERSATION_KEYS), row
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, screen))
        await refreshed(pilot)
        assert "Send" in bottom_row(app)


async def test_the_trust_question_shows_its_own_keys(tmp_path: Path) -> None:
    app = cli_app(hostile_project(tmp_path / "project", mcp=False))
    async with app.run_test(size=SMALL) as pilot:
        await wait_for(pilot, lambda: question_shown(app), what="the trust question")
        await wait_for(pilot, lambda: footer_composed(app), what="a footer of the trust question's own")  # not settle: start-up waits for the answer
        await refreshed(pilot)
        row = bottom_row(app)
        assert "Trust" in row and "Not now" in row, row
        assert not any(key in row for key in CONVERSATION_KEYS), row
