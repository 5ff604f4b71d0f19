"""Pilot tests of the main flows, driven by the real engine against the loopback fake LLM server.

The app is built by ``make_app`` exactly as the CLI builds it; its provider talks to
``fake_llm`` through the real Anthropic SDK and wire format.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Iterator


import pytest

from core.config import Settings
from core.types import Decision
from tests.fake_llm import FakeLLM, HTTPError, Reply, Tool
from tests.tui.conftest import SIZE, FixedClock, ScriptedHandler, finish_turn, send, wait_for, widgets
from tui.app import AssistantApp, make_app
from tui.widgets.chat import AssistantMessage, NoteMessage, PlanView, ToolCallLine
from tui.widgets.prompt import CompletionMenu

async def test_tool_loop_streams_into_chat_and_trace(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    fake_llm.script(Reply(text="Checking the text.", tools=[Tool("echo", {"text": "abc"})]), Reply(text="It is **ABC**."))
    async with real_app.run_test(size=SIZE) as pilot:
        await pilot.press(*"shout abc", "enter")
        await finish_turn(pilot)
        kinds = [type(child).__name__ for child in real_app.chat.children if child.display]
        assert kinds[-4:] == ["UserMessage", "AssistantMessage", "ToolCallLine", "AssistantMessage"]
        first, second = widgets(real_app, AssistantMessage)[-2:]
        assert (first.text, second.text) == ("Checking the text.", "It is **ABC**.")
        line = widgets(real_app, ToolCallLine)[-1]
        assert (line.call.name, line.status) == ("echo", "success")
        (record,) = real_app.trace.records.values()
        assert (record.call.name, record.status, record.result) == ("echo", "success", "ABC")
        assert real_app.status.metrics["turns"] == 2
        assert real_app.status.metrics["tool_calls_this_turn"] == 1
        assert fake_llm.requests[0].last_user_text() == "shout abc"
        # the second request carried the tool result back to the model
        assert "ABC" in str(fake_llm.requests[1].messages[-1])


async def test_escape_cancels_and_next_query_works(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    fake_llm.script(Reply(text="word " * 400, chunk=5, tokens_per_second=40), Reply(text="Fresh answer."))
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "tell me a long story")
        await wait_for(pilot, lambda: any(m.text for m in widgets(real_app, AssistantMessage)))
        await pilot.press("escape")
        await finish_turn(pilot)  # the whole story would take 10 s; the partial one below proves Esc ended it
        partial = widgets(real_app, AssistantMessage)[-1]
        assert partial.interrupted and partial.text and len(partial.text) < 2000
        assert any("Interrupted" in note.body for note in widgets(real_app, NoteMessage))
        assert real_app.handler.conversation_history[-1].get("interrupted") is True
        await send(pilot, "again")
        await finish_turn(pilot)
        assert widgets(real_app, AssistantMessage)[-1].text == "Fresh answer."
        assert not widgets(real_app, AssistantMessage)[-1].interrupted


async def test_history_recall(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda request: Reply(text="ok")
    async with real_app.run_test(size=SIZE) as pilot:
        for text in ("first question", "second\nquestion"):
            await send(pilot, text)
            await finish_turn(pilot)
        await pilot.press(*"draft")
        prompt = real_app.prompt
        await pilot.press("up")
        # multi-line entry: the cursor lands on its last line; Up moves within it first
        assert prompt.text == "second\nquestion"
        await pilot.press("up", "up")
        assert prompt.text == "first question"
        await pilot.press("down")
        assert prompt.text == "second\nquestion"
        await pilot.press("down", "down")
        assert prompt.text == "draft"


async def test_slash_completion(real_app: AssistantApp) -> None:
    async with real_app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", "p")
        menu = real_app.prompt.menu
        assert menu.display and [c.value for c in menu.candidates] == ["/plan"]
        assert "checklist" in menu.candidates[0].help
        await pilot.press("tab")
        assert real_app.prompt.text == "/plan " and not menu.display
        real_app.prompt.clear()
        await pilot.press("slash", "h", "e")
        await pilot.press("enter")  # Enter accepts the completion first…
        assert real_app.prompt.text == "/help "
        await pilot.press("enter")  # …and sends it the second time
        await wait_for(pilot, lambda: any("Keys and commands" in str(child.border_title) for child in real_app.chat.children))
        await pilot.press("slash", "x")
        assert not menu.display
        await pilot.press("escape")


async def test_escape_closes_the_menu_without_cancelling(real_app: AssistantApp) -> None:
    async with real_app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        assert real_app.prompt.menu.display
        await pilot.press("escape")
        assert not real_app.prompt.menu.display and real_app.prompt.text == "/"


async def test_the_menu_shows_what_the_prompt_offers(settings: Settings, project: Path) -> None:
    """The prompt decides what is offered; the menu draws it: Up/Down (wrapping), a click, Enter."""
    app = make_app(settings, handler=ScriptedHandler([], project_root=project, settings=settings), clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        menu, offered = app.query_one(CompletionMenu), app.prompt.menu
        assert menu.display and menu.candidates == tuple(offered.candidates) and menu.highlighted == 0
        await pilot.press("up")  # from the first to the last
        assert menu.highlighted == offered.highlighted == len(offered.candidates) - 1
        await pilot.press("down", "down")
        assert menu.highlighted == offered.highlighted == 1
        third = offered.candidates[2].value
        await pilot.click(CompletionMenu, offset=(4, 1 + 2 - menu.scroll_offset.y))  # the third row, under the border
        assert offered.highlighted == menu.highlighted == 2
        await pilot.press("enter")
        assert app.prompt.text == f"{third} " and not menu.display and not offered.display


@pytest.mark.parametrize(("key", "decision", "created"), [("y", Decision.ALLOW_ONCE, True), ("n", Decision.DENY, False)])
async def test_approval(real_app: AssistantApp, fake_llm: FakeLLM, project: Path, key: str, decision: Decision, created: bool) -> None:
    fake_llm.script(Reply(text="Creating it.", tools=[Tool("touch", {"path": "new.txt"})]), Reply(text="Done."))
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "create new.txt")
        # the screen's widgets, not only the screen: under load it is pushed a frame before it is composed
        await wait_for(pilot, lambda: type(real_app.screen).__name__ == "ApprovalScreen" and bool(real_app.screen.query("#approval-detail")))
        screen = real_app.screen
        assert "new.txt" in str(screen.query_one("#approval-detail").render())
        (record,) = real_app.trace.records.values()
        assert record.status == "pending"
        await pilot.press(key)
        await finish_turn(pilot)
        assert (project / "new.txt").exists() is created
        (record,) = real_app.trace.records.values()
        assert record.decision.startswith(decision.value.replace("_", " "))
        assert record.status == ("success" if created else "denied")
        tool_result = str(fake_llm.requests[1].messages[-1])
        assert ("created new.txt" in tool_result) is created
        assert ("Denied" in tool_result) is not created


async def test_provider_error_restores_the_prompt(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    fake_llm.script(HTTPError(429, "rate limited", "rate_limit_error"))
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "explain the auth flow")
        await finish_turn(pilot)
        (error,) = [note for note in widgets(real_app, NoteMessage) if note.kind == "error"]
        assert "rate" in error.body.lower() and "Traceback" not in error.body
        assert real_app.prompt.text == "explain the auth flow"


async def test_plan_checklist(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    fake_llm.script(Reply(text="Plan:\n<plan>\n1. Read the code\n2. Write tests\n3. Refactor\n</plan>"))
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "/plan refactor auth")
        await finish_turn(pilot)
        (plan,) = real_app.query(PlanView)
        assert plan.steps == ("Read the code", "Write tests", "Refactor")
        assert "asked for a plan" in fake_llm.requests[0].last_user_context()
        assert "<plan>" not in str(widgets(real_app, AssistantMessage)[-1].query_one("Markdown")._markdown)


async def test_no_provider_still_works(project: Path) -> None:
    settings = Settings(project_root=project)
    app = make_app(settings, clock=FixedClock())
    assert not app.engine_error
    async with app.run_test(size=SIZE) as pilot:
        assert app.query_one(".onboarding")
        await send(pilot, "hello?")
        await wait_for(pilot, lambda: any(note.kind == "error" and "No model provider" in note.body for note in widgets(app, NoteMessage)))
        assert app.prompt.text == "hello?"
        app.prompt.clear()
        await send(pilot, "/add src/*.py")
        await wait_for(pilot, lambda: len(app.pinned) == 2)
        assert [entry.display for entry in app.context_pane.entries] == ["src/app.py", "src/auth.py"]
        await send(pilot, "/task list")  # tasks need no model
        await wait_for(pilot, lambda: any("aider:automatic" in note.body for note in widgets(app, NoteMessage)))
        await send(pilot, "/task aider:automatic")
        await wait_for(pilot, lambda: any(note.kind == "error" and "prompt" in note.body for note in widgets(app, NoteMessage)))


async def test_long_session_keeps_the_widget_tree_bounded(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda request: Reply(text=f"answer to {request.last_user_text()}")
    async with real_app.run_test(size=SIZE) as pilot:
        real_app.chat.max_live = 20
        for index in range(15):
            await send(pilot, f"q{index}")
            await finish_turn(pilot)
        assert len(real_app.chat.items) <= 20  # the bound (the "earlier items" notice and the new-output marker are not items)
        assert real_app.chat.pruned == 1 + 2 * 15 - 20  # welcome note + (question, answer) per turn - the bound
        assert widgets(real_app, AssistantMessage)[-1].text == "answer to q14"
        await pilot.press("f2")  # the whole conversation, pruned messages included: read from the session
        await wait_for(pilot, lambda: type(real_app.screen).__name__ == "TextViewScreen")
        shown = real_app.screen.text
        assert all(f"q{i}\n" in shown and f"answer to q{i}\n" in shown for i in range(15)), shown


REPLY = """Here is what I found in `src/auth.py`:

1. `login(user)` returns the user unchanged.
2. There is no password check at all.

```python
def login(user):
    return user
```

I suggest adding a check before anything else. **Shall I?**

"""


async def test_a_fast_stream_arrives_whole(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    """An unpaced reply (about 1,600 tokens in small deltas) is rendered in full and in order.

    How smoothly it streams is measured by the benchmark suite (keys under load, history scaling),
    not asserted here.
    """
    text = REPLY * 20
    fake_llm.script(Reply(text=text, chunk=16))
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "stream a lot")
        await finish_turn(pilot)
        assert widgets(real_app, AssistantMessage)[-1].text == text


async def test_palette_offers_the_actions_and_commands(real_app: AssistantApp) -> None:
    from tui.commands import SLASH_COMMANDS

    async with real_app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: type(real_app.screen).__name__ == "CommandPalette")
        await pilot.press(*"transcript")  # a synonym: the entry is "Show the whole conversation"
        await wait_for(pilot, lambda: "conversation" in str(real_app.screen.query_one("CommandList").get_option_at_index(0).prompt))
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(real_app.screen).__name__ == "TextViewScreen")
        from tui.palette import palette_entries

        names = [name for name, *_ in palette_entries()]
        assert all(command.usage in names for command in SLASH_COMMANDS)


async def test_the_cli_app_loads_its_settings_and_builds_its_engine_after_the_first_frame(real_settings: Settings, fake_llm: FakeLLM) -> None:
    """``assistant-tui`` paints the focused prompt first; a query sent at once waits for the settings and the engine and is answered."""
    fake_llm.script(Reply(text="Ready."))
    release = threading.Event()

    def load_settings() -> Settings:  # the CLI's loader, held until the test has looked at the first frame
        release.wait(30)
        return real_settings

    app = make_app(None, load_settings=load_settings, project_root=real_settings.project_root, clock=FixedClock())
    assert app.handler is None and app.application is None
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.focused is app.prompt)  # the loader is held: the engine cannot be configured yet
        assert not app.engine.configured
        assert app.status.provider == "starting…" and "tools 0 " in str(app.status.render())  # no made-up limit yet
        await pilot.press(*"are you there?", "enter")  # kept by the start-up (the app stays responsive) and sent once it is over
        release.set()
        await wait_for(pilot, lambda: bool(fake_llm.requests), what="the kept query sent once the engine is ready")
        await finish_turn(pilot)
        assert app.status.provider == "anthropic:claude-sonnet-4-5" and app.context_pane.budget == real_settings.context_window
        assert app.application is not None and app.handler is app.application.handler
        assert app.handler.approve == app.conversation.approve
        assert widgets(app, AssistantMessage)[-1].text == "Ready."
        assert app.application.session is not None  # the session was opened before the query ran
        assert fake_llm.requests[0].last_user_text() == "are you there?"


async def test_a_rendering_fault_mid_stream_does_not_leave_the_engine_busy(
    real_app: AssistantApp, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn's consumer raises on a streamed delta: the stream is closed at once, so the next query runs."""
    from core import events as ev
    from tui.turn import TurnRenderer

    handle = TurnRenderer.handle

    async def faulty(self: TurnRenderer, event: ev.Event) -> None:
        if isinstance(event, ev.TextDelta) and self.query == "first":
            raise RuntimeError("a widget broke")
        await handle(self, event)

    monkeypatch.setattr(TurnRenderer, "handle", faulty)
    fake_llm.script(Reply(text="word " * 200, chunk=5, tokens_per_second=400), Reply(text="Second answer."))
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await finish_turn(pilot)
        assert any("a widget broke" in note.body for note in widgets(real_app, NoteMessage))
        await send(pilot, "second")
        await finish_turn(pilot)
        assert widgets(real_app, AssistantMessage)[-1].text == "Second answer."
        assert not any("already running" in note.body for note in widgets(real_app, NoteMessage))


async def test_interactive_aider_takes_the_terminal_through_the_app(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    """``/task aider:interactive`` reaches aider through the Application's one runner: the app suspends around it."""
    import contextlib

    suspended: list[bool] = []

    @contextlib.contextmanager
    def suspend() -> Iterator[None]:
        suspended.append(True)  # the real one hands the terminal to aider (a headless test has none to hand over)
        yield

    real_app.suspend = suspend  # type: ignore[method-assign]
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "/task aider:interactive query='Refactor it' file_context=['src/app.py']")
        await wait_for(pilot, lambda: any("needs a terminal" in note.body for note in widgets(real_app, NoteMessage)))
        assert suspended == [True]
        assert fake_llm.requests == []  # no model decided anything
