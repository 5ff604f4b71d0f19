"""editFile's review in the real app at 80x24 (Pilot, fake LLM server, real SDK): issue 26, part 3.

The model edits calc.py twice, then other.py. The user answers in the dialog with its keys:
``a`` (always, this file) leaves other.py to be asked; ``p`` (always, the project) leaves
nothing. The trace shows each edit's diff under its call, the chat one line (``calc.py +1 −1``). What was asked is what the screen showed; what landed is read from the disk.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from core.config import Settings
from tests.core.test_edit_file_approvals import CALC, edit  # the same project file and editFile call as the engine's tests
from tests.fake_llm import Reply, Tool
from tests.tui.conftest import FixedClock, finish_turn, refreshed, send, started, wait_for
from tui.app import make_app
from tui.screens.approval import ApprovalScreen
from tui.widgets.chat import NoteMessage
from tui.widgets.trace import ToolCallView

SMALL = (80, 24)
HANG = 120.0
"""Seconds to wait for the model's next step (a hang guard: the first request imports the SDK, slow on a loaded machine)."""
EDITED = CALC.replace("a + b", "b + a").replace("a - b", "-(b - a)")
BIG = "".join(f"x{i} = {i}\n" for i in range(120))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    (root / "other.py").write_text("Y = 1\n")
    (root / "big.py").write_text(BIG)
    return root


def script(fake_llm: Any) -> None:
    fake_llm.script(
        Reply(tools=[edit("calc.py", "a + b", "b + a")]),
        Reply(tools=[edit("calc.py", "a - b", "-(b - a)")]),
        Reply(tools=[edit("other.py", "Y = 1", "Y = 2")]),
        Reply(text="Done."),
    )


def app_for(fake_llm: Any, project: Path) -> Any:
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test",
                        max_retries=0, approval_mode="ask")
    return make_app(settings, clock=FixedClock())


async def next_approval(pilot: Any) -> ApprovalScreen:
    """The approval dialog, once it is up and drawn."""
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen), timeout=HANG, what="the approval dialog")
    await refreshed(pilot)
    return pilot.app.screen


def shown(view: ToolCallView) -> str:
    """What a trace entry shows, as plain text (wide enough that nothing is cut)."""
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(view.render())
    return console.export_text()


def asked_path(screen: ApprovalScreen) -> str:
    return str(screen.request.tool_call.parameters["path"])


async def test_always_for_this_file_asks_again_for_another_file(fake_llm, project: Path) -> None:
    script(fake_llm)
    app = app_for(fake_llm, project)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await send(pilot, "tidy the operands")
        first = await next_approval(pilot)
        assert asked_path(first) == "calc.py"
        assert first.query_one("#allow_session").label.plain == "This file (a)"
        await pilot.press("a")
        second = await next_approval(pilot)  # not calc.py's second edit: that one ran unasked
        assert second is not first and asked_path(second) == "other.py"
        assert (project / "calc.py").read_text() == EDITED
        assert (project / "other.py").read_text() == "Y = 1\n"
        await pilot.press("y")
        await finish_turn(pilot)
        calls = [view for view in app.trace.query(ToolCallView)]
        assert [view.record.call.parameters["path"] for view in calls] == ["calc.py", "calc.py", "other.py"]
        second = shown(calls[1])  # the diff under the call, and why nobody was asked
        assert "-    return a - b" in second and "+    return -(b - a)" in second and "you said always" in second, second
        notes = [str(note.render()) for note in app.chat.query(NoteMessage)]
        assert ["calc.py +1 −1", "calc.py +1 −1", "other.py +1 −1"] == [n for n in notes if "+1 −1" in n], notes
    assert (project / "other.py").read_text() == "Y = 2\n"


async def test_always_for_the_project_asks_no_more(fake_llm, project: Path) -> None:
    script(fake_llm)
    app = app_for(fake_llm, project)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await send(pilot, "tidy the operands")
        first = await next_approval(pilot)
        await pilot.press("p")
        await wait_for(pilot, lambda: not app.turn_running or isinstance(app.screen, ApprovalScreen) and app.screen is not first,
                       timeout=HANG, what="the turn's end (or another question)")
        assert not isinstance(app.screen, ApprovalScreen), f"asked again about {asked_path(app.screen)}"
        await finish_turn(pilot)
        assert (project / "calc.py").read_text() == EDITED and (project / "other.py").read_text() == "Y = 2\n"

        app.engine.session.set_approval_mode("deny")  # read-only from here: the grant does not outlast it
        fake_llm.script(Reply(tools=[edit("other.py", "Y = 2", "Y = 3")]), Reply(text="Could not."))
        await send(pilot, "once more")
        await finish_turn(pilot)
        assert not isinstance(app.screen, ApprovalScreen)
    assert (project / "other.py").read_text() == "Y = 2\n"


async def test_a_long_diff_scrolls_with_keys_and_the_buttons_stay_on_screen(fake_llm, project: Path) -> None:
    doubled = BIG.replace(" = ", " = 2 * ")
    fake_llm.script(Reply(tools=[edit("big.py", BIG, doubled)]), Reply(text="Doubled."))
    app = app_for(fake_llm, project)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await send(pilot, "double them")
        screen = await next_approval(pilot)
        dialog = screen.query_one("#approval-dialog")
        buttons = list(screen.query("Button"))

        def on_screen() -> None:
            for button in buttons:
                assert dialog.content_region.contains_region(button.region), f"{button.id} at {button.region} is cut off ({dialog.content_region})"

        def last_line_shown() -> bool:  # the diff's end drawn above the answers (the "always" lines and the buttons)
            return dialog.scroll_y == dialog.max_scroll_y and screen.query_one("#approval-detail").region.bottom <= screen.query_one("#approval-answers").region.y

        on_screen()
        assert dialog.max_scroll_y > 200, "the 240-line diff is scrolled inside the dialog"
        assert [button.id for button in buttons] == ["allow_once", "allow_session", "allow_project", "deny"]
        assert app.focused is screen.query_one("#deny")
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: dialog.scroll_y > 0, what="PgDn scrolled the diff")
        await pilot.press("end")
        await wait_for(pilot, last_line_shown, what="End showed the diff's last line above the answers")
        on_screen()
        assert app.focused is screen.query_one("#deny"), "scrolling leaves the focus on Deny"
        await pilot.press("y")
        await finish_turn(pilot)
    assert (project / "big.py").read_text() == doubled


async def test_a_tool_without_a_project_answer_offers_no_p(fake_llm, project: Path) -> None:
    """aiderAutomatic asks with "always this session" only: no Project button, and ``p`` answers nothing."""
    fake_llm.script(Reply(tools=[Tool("aiderAutomatic", {"prompt": "Add type hints", "file_context": ["calc.py"]})]),
                    Reply(text="Not run."))
    app = app_for(fake_llm, project)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await send(pilot, "type it")
        screen = await next_approval(pilot)
        assert not screen.query("#allow_project") and screen.query_one("#allow_session").label.plain == "Always this session (a)"
        await pilot.press("p")
        await refreshed(pilot)
        assert app.screen is screen, "p answered a question that did not offer it"
        await pilot.press("n")
        await finish_turn(pilot)
    assert (project / "calc.py").read_text() == CALC
