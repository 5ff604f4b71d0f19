"""Commands a new user types from habit (issue 23, "use it for an hour at 80x24").

README calls ``/rewind`` "Undo", so ``/undo`` is the first thing typed; ``/exit`` and ``/clear``
come from other tools, ``/exprot`` from fast fingers. The chat names the command meant and what it
does (from the registry's synonyms, then close spellings); before, it said only "Unknown command
/undo. Type /help for the list". The typed text stays in the prompt to be corrected.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import Settings
from tests.fake_llm import FakeLLM
from tests.tui.conftest import FixedClock, send, settle, started, wait_for, widgets
from tui.app import make_app
from tui.widgets.chat import NoteMessage

SMALL = (80, 24)


@pytest.mark.parametrize(("typed", "meant"), [("/undo", "/rewind"), ("/exit", "/quit"), ("/clear", "/reset"), ("/exprot", "/export")])
async def test_an_unknown_command_names_the_one_meant(project: Path, fake_llm: FakeLLM, typed: str, meant: str) -> None:
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0)
    app = make_app(settings, clock=FixedClock())
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await send(pilot, typed)
        await wait_for(pilot, lambda: any(note.kind == "warning" for note in widgets(app, NoteMessage)))
        await settle(pilot)
        note = [note for note in widgets(app, NoteMessage) if note.kind == "warning"][-1]
        assert f"Unknown command {typed}. Did you mean {meant}" in note.body, note.body
        rows = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert meant in rows, rows  # on screen, the note wrapped to the chat column
        assert app.prompt.text == typed
        assert not fake_llm.requests, "nothing went to the model"
