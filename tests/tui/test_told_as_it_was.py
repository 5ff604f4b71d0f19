"""Issue 23 items 4, 5 and 8 as the user sees them at 80x24: the real app against the fake server.

- One turn number in the trace, the status line, ``/cost`` and after ``-c`` (a ``/task`` note between
  turns used to shift the live number by one).
- An overloaded error mid-answer is shown as the provider's error (not "interrupted"), the partial
  answer kept and marked, and the question is back in the prompt.
- What that cut response reported is counted: the status line and ``/cost`` say "at least" (≥)
  (before, ``/cost`` said nothing had been spent).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App

from core.config import Settings
from tests.fake_llm import FakeLLM, Reply, StreamError, Tool
from tests.tui.conftest import ECHO_SPEC, FixedClock, finish_turn, send, settle, stop_mid_answer, wait_for, widgets
from tui.app import AssistantApp, make_app
from tui.widgets.chat import AssistantMessage, NoteMessage
from tui.widgets.trace import TurnHeader

SMALL = (80, 24)


def screen_lines(app: App[Any]) -> list[str]:
    """The text of each screen row (what the terminal shows)."""
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


def priced_settings(project: Path, fake_llm: FakeLLM) -> Settings:
    """The fake server under a priced model name, so the status line shows money."""
    return Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0, model="claude-sonnet-4-5")


def app_with_echo(settings: Settings, **options: Any) -> AssistantApp:
    app = make_app(settings, clock=FixedClock(), **options)
    assert not app.engine_error, app.engine_error
    app.handler.register_tool(ECHO_SPEC, lambda params: params["text"].upper())
    return app


async def test_an_overloaded_error_mid_answer_is_shown_as_itself_and_the_question_comes_back(project: Path, fake_llm: FakeLLM) -> None:
    app = app_with_echo(priced_settings(project, fake_llm))
    fake_llm.script(StreamError(text="Half of an answer that the provider", after_chunks=2, input_tokens=40_000))
    async with app.run_test(size=SMALL) as pilot:
        await send(pilot, "explain the parser")
        await finish_turn(pilot)
        await settle(pilot)
        message = widgets(app, AssistantMessage)[-1]
        assert message.text.startswith("Half of an answer")
        assert message.stop_reason == "error" and "provider failed" in message.stop_label, message.stop_label
        errors = [n for n in widgets(app, NoteMessage) if n.kind == "error"]
        assert errors and "overloaded" in errors[-1].body.lower()
        assert app.prompt.text == "explain the parser", "the question is back in the prompt, as after a dropped stream"
        rows = screen_lines(app)
        assert not any("interrupted" in row for row in rows), rows
        status = [row for row in rows if "Σ" in row]
        assert status and "≥ $" in status[0], rows[-3:]  # 40,000 input tokens reported in message_start, the output unknown
        await send(pilot, "/cost")
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        assert "≥ $" in text and "at least" in text, text


async def test_one_turn_number_in_the_trace_the_status_and_cost_live_and_after_continue(project: Path, fake_llm: FakeLLM) -> None:
    settings = priced_settings(project, fake_llm)
    first = app_with_echo(settings)
    fake_llm.script(
        Reply(tools=[Tool("echo", {"text": "a"})]), Reply(text="A"),
        Reply(tools=[Tool("echo", {"text": "b"})]), Reply(text="B"),
    )
    async with first.run_test(size=SMALL) as pilot:
        await send(pilot, "first")
        await finish_turn(pilot)
        await send(pilot, "/task list")  # its result joins the conversation as a note: not a turn
        await settle(pilot, lambda: len(first.engine.session.history) == 5, what="the /task note in the history")
        await send(pilot, "/aider second")
        await finish_turn(pilot)
        live = [h.number for h in first.trace.query(TurnHeader)]
        assert live == [1, 2], live
        assert first.status.metrics["user_turns"] == 2
        assert first.engine.session.usage.turns() == [1, 2], "/cost's rows are numbered as the trace"

    second = app_with_echo(settings, continue_session=True)
    fake_llm.script(Reply(tools=[Tool("echo", {"text": "c"})]), Reply(text="C"))
    async with second.run_test(size=SMALL) as pilot:
        await wait_for(pilot, lambda: len(second.trace.records) == 2)
        assert [h.number for h in second.trace.query(TurnHeader)] == [1, 2]
        assert second.status.metrics["user_turns"] == 2
        assert second.engine.session.usage.turns() == [1, 2]
        await send(pilot, "third")
        await finish_turn(pilot)
        assert [h.number for h in second.trace.query(TurnHeader)] == [1, 2, 3]
        assert second.status.metrics["user_turns"] == 3


async def test_esc_mid_answer_still_counts_what_the_provider_reported(project: Path, fake_llm: FakeLLM) -> None:
    """Anthropic bills the input it reported in message_start even when the user stops the answer."""
    app = app_with_echo(priced_settings(project, fake_llm))
    fake_llm.script(Reply(text="word " * 2000, chunk=5, tokens_per_second=100, input_tokens=40_000))
    async with app.run_test(size=SMALL) as pilot:
        await stop_mid_answer(pilot, "write a lot")
        assert widgets(app, AssistantMessage)[-1].stop_label.endswith("interrupted")  # the user's Esc is told as that
        status = [row for row in screen_lines(app) if "Σ" in row]
        assert status and "≥ $" in status[0], screen_lines(app)[-3:]
