"""Where the keys go at 80x24: Esc back to the prompt from any pane, typing a pane has no use for goes to the prompt,
a single-key drop is undone with u, and ctrl+l goes to the chat."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console
from textual import events

from core import events as ev
from core.types import ToolCall
from tests.tui.conftest import FixedClock, Gate, Notices, ScriptedHandler, finish_turn, send, text_reply, wait_for
from tests.tui.test_key_burst import burst, typed
from tui.app import AssistantApp, make_app
from tests.tui.app_help import app_help

SIZE = (80, 24)
ECHO = ToolCall(id="c1", name="echo", parameters={"text": "hi"})


def picked(app: AssistantApp) -> list[str]:
    return [app.engine.session.context.display(path) for path in app.pinned]


def read_only(app: AssistantApp) -> list[str]:
    return [entry.display for entry in app.context_pane.entries if entry.read_only]


def in_pane(app: AssistantApp, pane: Any) -> bool:
    return app.focused is not None and pane in app.focused.ancestors_with_self


def tool_app(settings, project: Path, *extra: Any) -> tuple[AssistantApp, ScriptedHandler]:
    script = [ev.TurnStarted(query="", subtask_id="s"), ev.ToolCallStarted(call=ECHO, started_at=0),
              ev.ToolCallFinished(call=ECHO, status="success", result="HI", duration=0.1), *extra, *text_reply("Done.")[1:]]
    handler = ScriptedHandler(script, project_root=project, settings=settings)
    return make_app(settings, handler=handler, clock=FixedClock()), handler


async def add_two_files(pilot: Any, app: AssistantApp) -> None:
    await send(pilot, "/add src/*.py")
    await wait_for(pilot, lambda: picked(app) == ["src/app.py", "src/auth.py"])


async def test_esc_returns_to_the_prompt_from_every_pane(settings, project: Path) -> None:
    """ctrl+g, ctrl+t or ctrl+l, then Esc: the prompt has the focus again (Esc did nothing in a pane)."""
    app, _ = tool_app(settings, project)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await finish_turn(pilot)
        for key, pane in (("ctrl+g", app.context_pane), ("ctrl+t", app.trace), ("ctrl+l", app.chat)):
            await pilot.press(key)
            await wait_for(pilot, lambda: in_pane(app, pane), what=f"{key} goes to its pane")
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.focused is app.prompt, what=f"Esc after {key} goes back to the prompt")


async def test_esc_in_a_pane_during_a_reply_goes_back_without_cancelling(settings, project: Path) -> None:
    """While a reply runs, Esc in the trace returns to the prompt; Esc in the prompt then cancels the reply."""
    gate = Gate()
    app, handler = tool_app(settings, project, gate)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await wait_for(pilot, lambda: len(app.trace.records) == 1)
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: in_pane(app, app.trace))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.focused is app.prompt)
        assert app.turn_running and handler.cancelled == 0
        await pilot.press("escape")
        await finish_turn(pilot)
        assert handler.cancelled == 1


async def test_typing_in_the_context_pane_goes_to_the_prompt_and_drops_nothing(real_app: AssistantApp) -> None:
    """"add a reader" typed after ctrl+g is text in the prompt: no file dropped (d), none made read-only (r)."""
    async with real_app.run_test(size=SIZE) as pilot:
        await add_two_files(pilot, real_app)
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: in_pane(real_app, real_app.context_pane))
        await pilot.press(*typed("add a reader"))
        await wait_for(pilot, lambda: real_app.prompt.text == "add a reader")
        assert real_app.focused is real_app.prompt
        assert picked(real_app) == ["src/app.py", "src/auth.py"] and read_only(real_app) == []


async def test_typing_in_the_context_pane_in_one_burst_goes_to_the_prompt(real_app: AssistantApp) -> None:
    """The same keys in one burst (queued before the first is handled) all reach the prompt, in order."""
    async with real_app.run_test(size=SIZE) as pilot:
        await add_two_files(pilot, real_app)
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: in_pane(real_app, real_app.context_pane))
        burst(real_app, typed("add a reader"))
        await wait_for(pilot, lambda: real_app.prompt.text.endswith("r"), what="the last key handled")
        assert real_app.prompt.text == "add a reader"
        assert picked(real_app) == ["src/app.py", "src/auth.py"] and read_only(real_app) == []


async def test_typing_in_the_trace_and_the_chat_goes_to_the_prompt(settings, project: Path) -> None:
    """Text typed in the trace (it was thrown away) or the chat lands in the prompt, which takes the focus; j stays the trace's key."""
    app, _ = tool_app(settings, project)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await finish_turn(pilot)
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: in_pane(app, app.trace))
        await pilot.press("j")  # the trace's own key: next call
        assert in_pane(app, app.trace) and app.prompt.text == ""
        await pilot.press(*typed("hello"))
        await wait_for(pilot, lambda: app.prompt.text == "hello")
        assert app.focused is app.prompt
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: in_pane(app, app.chat))
        await pilot.press(*typed(" there"))
        await wait_for(pilot, lambda: app.prompt.text == "hello there")
        assert app.focused is app.prompt


async def test_a_paste_in_a_pane_goes_to_the_prompt(settings, project: Path) -> None:
    """A paste while the context pane, the trace or the chat has the focus lands in the prompt, which takes the
    focus (Textual handed it to the pane, which dropped it); a large one becomes the prompt's chip."""
    app, _ = tool_app(settings, project)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await finish_turn(pilot)
        expected = ""
        for key, pane, text in (("ctrl+g", app.context_pane, "one"), ("ctrl+t", app.trace, " two"), ("ctrl+l", app.chat, " three")):
            await pilot.press(key)
            await wait_for(pilot, lambda: in_pane(app, pane), what=f"{key} goes to its pane")
            app.post_message(events.Paste(text))
            expected += text
            await wait_for(pilot, lambda: app.prompt.text == expected, what=f"the paste after {key} in the prompt")
            assert app.focused is app.prompt
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: in_pane(app, app.trace))
        app.post_message(events.Paste("".join(f"log line {i}\n" for i in range(40))))
        await wait_for(pilot, lambda: app.prompt.text.startswith(expected + "[pasted #1: 40 lines"), what="the large paste as a chip")
        assert app.focused is app.prompt


async def test_ctrl_l_goes_to_the_chat_and_back(settings, project: Path) -> None:
    """ctrl+l: the chat has the focus (arrows scroll it); again: the prompt. /help lists it."""
    app, _ = tool_app(settings, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: app.focused is app.chat)
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: app.focused is app.prompt)
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(app_help())
    rows = [line.split() for line in console.export_text().splitlines()]
    assert any(row[:1] == ["ctrl+l"] and "chat" in " ".join(row) for row in rows)
    assert any(row[:1] == ["u"] and row[-1] == "context" for row in rows)


async def test_a_drop_says_so_and_u_puts_the_file_back(real_app: AssistantApp) -> None:
    """d drops with a notice that says u undoes; u puts the file back, read-only flag and all; ctrl+z does too.

    Each step waits for the last thing its handler does (the notice, the read-only flag), never for an
    earlier one: the context changes before the handler ends, and u works only once it has ended.
    """
    notices = Notices()
    dropped = "Dropped src/app.py · u undoes"
    async with real_app.run_test(size=SIZE, message_hook=notices) as pilot:
        await add_two_files(pilot, real_app)
        await pilot.press("ctrl+g", "r")
        await wait_for(pilot, lambda: read_only(real_app) == ["src/app.py"])
        await pilot.press("d")
        await wait_for(pilot, lambda: notices.messages.count(dropped) == 1, what="the drop's notice")
        assert picked(real_app) == ["src/auth.py"]
        await pilot.press("u")
        await wait_for(pilot, lambda: sorted(picked(real_app)) == ["src/app.py", "src/auth.py"] and read_only(real_app) == ["src/app.py"],
                       what="the file back, read-only")
        assert in_pane(real_app, real_app.context_pane)
        await pilot.press("d")
        await wait_for(pilot, lambda: sum(text.startswith("Dropped ") for text in notices.messages) == 2, what="the second drop's notice")
        assert len(picked(real_app)) == 1
        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: len(picked(real_app)) == 2 and not real_app.context_pane.check_action("undo", ()), what="the undo done")
        await pilot.press("u")  # nothing left to undo: u is typing, and goes to the prompt
        await wait_for(pilot, lambda: real_app.prompt.text == "u")
        assert len(picked(real_app)) == 2
