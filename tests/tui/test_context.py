"""File context from the keyboard: @ completion, the picker, the pane's keys, refusals, and what reaches the model."""

from __future__ import annotations

import json

from pathlib import Path

from tests.fake_llm import FakeLLM, Reply
from tests.tui.conftest import SIZE, finish_turn, refreshed, send, wait_for
from tui.app import AssistantApp
from tui.widgets.chat import NoteMessage


def picked(app: AssistantApp) -> list[str]:
    return [entry.display for entry in app.context_pane.entries if entry.source == "picked"]


async def test_at_completion_adds_the_file(real_app: AssistantApp) -> None:
    async with real_app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: real_app.files.count >= 3)
        await pilot.press(*"explain @auth")
        menu = real_app.prompt.menu
        assert menu.display and menu.candidates[0].label == "src/auth.py"
        assert menu.candidates[0].highlight  # matched characters are highlighted
        await pilot.press("tab")
        assert real_app.prompt.text == "explain @src/auth.py "
        await wait_for(pilot, lambda: picked(real_app) == ["src/auth.py"])


async def test_picker_multi_selects_and_adds(real_app: AssistantApp) -> None:
    async with real_app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: real_app.files.count >= 3)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: type(real_app.screen).__name__ == "FilePickerScreen")
        await pilot.press(*"py")
        await wait_for(pilot, lambda: real_app.screen.results[:2] == ["src/app.py", "src/auth.py"])
        await pilot.press("space", "down", "space", "enter")
        await wait_for(pilot, lambda: sorted(picked(real_app)) == ["src/app.py", "src/auth.py"])
        assert type(real_app.screen).__name__ != "FilePickerScreen"


async def test_picker_hint_counts_what_the_query_shows(real_app: AssistantApp) -> None:
    """Tried as a new user: typing a query that left 2 files on screen, the hint still said "3 files"."""
    async with real_app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: real_app.files.count >= 3)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: type(real_app.screen).__name__ == "FilePickerScreen")
        hint = lambda: str(real_app.screen.query_one("#picker-hint").render())  # noqa: E731
        await wait_for(pilot, lambda: "· 3 files ·" in hint(), what="the whole list counted")
        await pilot.press(*"py")
        await wait_for(pilot, lambda: real_app.screen.results[:2] == ["src/app.py", "src/auth.py"])
        shown = len(real_app.screen.results)
        await wait_for(pilot, lambda: f"· {shown} of 3 files ·" in hint(), what=f"'{shown} of 3 files' in the hint")


async def test_pane_drop_and_read_only(real_app: AssistantApp) -> None:
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "/add src/*.py")
        await wait_for(pilot, lambda: len(picked(real_app)) == 2)
        await pilot.press("ctrl+g", "r")
        assert [e.read_only for e in real_app.context_pane.entries] == [True, False]
        await pilot.press("down", "d")
        assert picked(real_app) == ["src/app.py"]
        await pilot.press("ctrl+g")
        assert real_app.focused is real_app.prompt


async def test_secrets_are_refused_with_the_reason(real_app: AssistantApp, project: Path) -> None:
    (project / ".env").write_text("ANTHROPIC_API_KEY=sk-secret\n")
    (project / "logo.bin").write_bytes(b"\x89PNG\0\0\0")
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "/add .env logo.bin")
        await wait_for(pilot, lambda: len([w for w in real_app.chat.children if isinstance(w, NoteMessage) and w.kind == "warning"]) == 2)
        notes = [w.body for w in real_app.chat.children if isinstance(w, NoteMessage) and w.kind == "warning"]
        assert ".env was not added" in notes[0] and "environment file" in notes[0]
        assert "logo.bin was not added" in notes[1] and "binary" in notes[1]
        assert picked(real_app) == []


async def test_the_request_contains_exactly_the_panes_files(real_app: AssistantApp, fake_llm: FakeLLM, project: Path) -> None:
    fake_llm.script(Reply(text="Seen."), Reply(text="Seen again."))
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "/add src/app.py")
        await wait_for(pilot, lambda: picked(real_app) == ["src/app.py"])
        await send(pilot, "what do you see?")
        await finish_turn(pilot)
        first = fake_llm.requests[-1]
        context = first.last_user_context()
        assert '<file path="src/app.py">' in context and "def main" in context
        assert "def login" not in json.dumps(first.body)
        assert "def main" not in first.system  # files go into the conversation, never the system prompt
        await send(pilot, "/drop src/app.py")
        await send(pilot, "and now?")
        await finish_turn(pilot)
        second = fake_llm.requests[-1]
        assert "def main" not in json.dumps(second.body)  # the old copy became a note
        assert "src/app.py was here; it was dropped" in json.dumps(second.body)
        assert second.system == first.system


async def test_adding_past_the_budget_asks_first(project: Path) -> None:
    from core.config import Settings
    from tests.tui.conftest import FixedClock
    from tui.app import make_app

    app = make_app(Settings(project_root=project, context_window=100), clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/add src/*.py")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen")
        assert "budget" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("n")
        await wait_for(pilot, lambda: type(app.screen).__name__ != "ConfirmScreen")
        await refreshed(pilot)  # what "no" leads to is done
        assert picked(app) == []
        await send(pilot, "/add src/*.py")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen")
        await pilot.press("y")
        await wait_for(pilot, lambda: picked(app) == ["src/app.py", "src/auth.py"])
        assert app.context_pane.over_warning


def shown_figures(app: AssistantApp) -> tuple[str, str]:
    """The context figure as the status line and the pane render it (their text on screen)."""
    status = str(app.status.render())
    pane = str(app.context_pane.query_one("#context-total").render())
    return status, pane


async def test_pane_and_status_line_show_one_context_figure(real_app: AssistantApp, fake_llm: FakeLLM, project: Path) -> None:
    from tui.format import context_figure

    def agreed_on_the_engines_figure() -> bool:
        figure = context_figure(real_app.handler.get_resource_metrics())[1]
        status, pane = shown_figures(real_app)
        return f" {figure} " in status and f"context {figure}" in pane

    fake_llm.script(Reply(text="Hello.", input_tokens=9_000))
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "hi")
        await finish_turn(pilot)
        await wait_for(pilot, agreed_on_the_engines_figure)
        assert "~9k/200k" in shown_figures(real_app)[1]  # the real input tokens, plus the estimated answer
        await send(pilot, "/add src/app.py")
        await wait_for(pilot, lambda: picked(real_app) == ["src/app.py"])
        await wait_for(pilot, agreed_on_the_engines_figure)
        assert real_app.handler.context_meter().tokens > 9_000 + (project / "src/app.py").stat().st_size // 4 - 1
