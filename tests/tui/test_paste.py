"""A large paste is one chip in the prompt and in the chat; the whole text is sent, recorded and never lost.

Pastes arrive as Textual ``events.Paste`` posted to the app, the way the driver delivers
a terminal's bracketed paste (tried by hand in tmux with ``paste-buffer -p``).
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual import events

from core.sessions import load_session
from tests.fake_llm import FakeLLM, HTTPError, Reply
from tests.tui.conftest import SIZE, ScriptedHandler, finish_turn, text_reply, wait_for, widgets
from tui.app import AssistantApp, make_app
from tui.paste import PasteStore, describe, is_large, segments
from tui.widgets.chat import UserMessage
from tui.widgets.pasted import PastedMessage
from tests.tui.app_help import app_help

LOG = "".join(f"2026-11-23 12:00:{i % 60:02d} INFO worker-{i % 7} handled request {i} in {i % 97} ms\n" for i in range(2000))
CHIP = f"[pasted #1: {describe(LOG)}]"
SHORT_LOG = LOG[: LOG.index("handled request 40 ")].rpartition("\n")[0] + "\n"
SHORT_CHIP = f"[pasted #1: {describe(SHORT_LOG)}]"


def test_help_lists_the_paste_keys(settings, project) -> None:
    """/help has the prompt's f4 and the keys of a pasted message in the chat, with where they work."""
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(app_help())
    rows = [line.split() for line in console.export_text().splitlines()]
    for key, where in [("f4", ["prompt"]), ("Enter", ["paste"]), ("v", ["paste"])]:
        assert any(row[:1] == [key] and row[-len(where):] == where and "past" in " ".join(row) for row in rows), (key, where)


async def paste(pilot, text: str) -> None:
    before = pilot.app.prompt.text
    pilot.app.post_message(events.Paste(text))
    await wait_for(pilot, lambda: pilot.app.prompt.text != before, what="the paste in the prompt")


def test_what_becomes_a_chip_and_what_it_says() -> None:
    assert describe(LOG) == "2,000 lines, 124 KB"
    assert describe("a\nb\n") == "2 lines, 4 bytes" and describe("x") == "1 line, 1 byte"
    assert not is_large("line\n" * 30) and is_large("line\n" * 31) and is_large("x" * 4097)
    store = PasteStore()
    chip = store.add(LOG).chip
    assert store.expand(f"see {chip} and [pasted #1: edited label] but not [pasted #2]") == f"see {LOG} and {LOG} but not [pasted #2]"
    assert store.compress(f"see {LOG}!") == f"see {chip}!"
    assert segments(f"see {LOG}!", store.found_in(f"see {LOG}!")) == [("see ", False), (LOG, True), ("!", False)]
    assert segments(LOG, []) == [(LOG, True)], "a large message without known pastes (a resumed session) is collapsed whole"


async def test_a_large_paste_is_one_chip_and_the_whole_text_is_sent(project: Path, settings) -> None:
    handler = ScriptedHandler(lambda query: text_reply("Read it."), project_root=project, settings=settings)
    app = make_app(settings, handler=handler)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.insert("why so slow? ")
        await paste(pilot, LOG.replace("\n", "\r"))  # terminals send a pasted newline as CR
        await paste(pilot, "small\npaste")  # small pastes are typed out
        assert app.prompt.text == f"why so slow? {CHIP}small\npaste"
        assert app.prompt.document.line_count == 2
        await pilot.press("enter")
        await finish_turn(pilot)
        assert handler.queries == [f"why so slow? {LOG}small\npaste"]
        (message,) = widgets(app, PastedMessage)
        assert message.text == handler.queries[0] and message.parts[1] == (LOG, True)
        shown = str(message.render())
        assert "pasted 2,000 lines, 124 KB" in shown and "worker-3" not in shown and len(shown.splitlines()) == 4
        await pilot.click(PastedMessage)
        preview = str(message.render())
        assert "handled request 11 " in preview and "handled request 12 " not in preview and "… 1,988 more lines (v shows it all)" in preview
        assert app.focused is message
        await pilot.press("enter")  # the keyboard way
        assert "worker-3" not in str(message.render())
        await pilot.press("v")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TextViewScreen")
        assert app.screen.text == LOG
        await pilot.press("escape")
        # history recalls the chip, which still stands for the whole text
        app.prompt.focus()
        await pilot.press("up")
        assert app.prompt.text == f"why so slow? {CHIP}small\npaste"
        await pilot.press("enter")
        await finish_turn(pilot)
        assert handler.queries[-1] == handler.queries[0]


async def test_the_cursor_steps_over_a_chip_and_backspace_deletes_it_whole(project: Path, settings) -> None:
    app = make_app(settings, handler=ScriptedHandler([], project_root=project, settings=settings))
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.insert("ab")
        await paste(pilot, LOG)
        await pilot.press("c", "d")
        prompt = app.prompt
        assert prompt.text == f"ab{CHIP}cd"
        await pilot.press("left", "left", "left")
        assert prompt.cursor_location == (0, 2), "one step over the chip"
        await pilot.press("right")
        assert prompt.cursor_location == (0, 2 + len(CHIP))
        await pilot.click(prompt, offset=(8, 0))  # a click inside the chip puts the cursor after it
        assert prompt.cursor_location == (0, 2 + len(CHIP))
        await pilot.press("backspace")
        assert prompt.text == "abcd"
        await pilot.press("ctrl+z")
        assert prompt.text == f"ab{CHIP}cd"
        prompt.move_cursor((0, 2))
        await pilot.press("delete")
        assert prompt.text == "abcd"
        await pilot.press("ctrl+z")
        prompt.move_cursor((0, 2 + len(CHIP)))
        await pilot.press("f4")  # expand the chip back into editable text
        assert prompt.text == f"ab{LOG}cd"


async def test_a_failed_turn_gives_the_paste_back_as_its_chip_and_records_it_whole(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    fake_llm.script(HTTPError(500, "overloaded", "api_error"), Reply(text="Seen all 40 lines."))
    async with real_app.run_test(size=SIZE) as pilot:
        real_app.prompt.insert("summarise: ")
        await paste(pilot, SHORT_LOG)
        await pilot.press("enter")
        await finish_turn(pilot)
        assert real_app.prompt.text == f"summarise: {SHORT_CHIP}", "the text is back in the prompt, pasted part as its chip"
        await pilot.press("enter")
        await finish_turn(pilot)
        assert fake_llm.requests[-1].last_user_text() == f"summarise: {SHORT_LOG}"
        assert [m.text for m in widgets(real_app, UserMessage)][-1] == f"summarise: {SHORT_LOG}"
        session = real_app.application.session
    users = [r["content"] for r in load_session(session).records if r["kind"] == "user"]
    assert users[-1] == f"summarise: {SHORT_LOG}"


async def test_a_resumed_pasted_question_is_collapsed(project: Path, settings) -> None:
    from tui.widgets.pasted import user_message

    assert isinstance(user_message(LOG), PastedMessage) and type(user_message("short")) is UserMessage
    app = make_app(settings, handler=ScriptedHandler([], project_root=project, settings=settings))
    async with app.run_test(size=SIZE) as pilot:
        await app.chat.add(user_message(LOG))
        await wait_for(pilot, lambda: bool(widgets(app, PastedMessage)))
        assert "2,000 lines" in str(widgets(app, PastedMessage)[0].render())
