"""Issue 25 s1: an answer a server tool paused (Anthropic ``pause_turn``) reads as one answer in the chat.

The recorded ``pause_turn`` stream (web_search paused the turn) is replayed by the fake server, the
engine sends the conversation back and the model continues. Before, the chat showed the paused part
and the continuation as two assistant messages; now the continuation goes on in the same message,
live and when the session is redrawn by ``-c``.
"""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from tests.fake_llm import FakeLLM, Raw, Reply
from tests.tui.conftest import FixedClock, finish_turn, send, started, wait_for, widgets
from tests.wire.test_wire import load
from tui.app import make_app
from tui.widgets.chat import AssistantMessage, ThinkingBlock, UserMessage

PAUSED = "I'll search for the latest release notes."
CONTINUED = "\n\nPython 3.14 came out in October 2025."


def answers(app) -> list[str]:  # type: ignore[no-untyped-def]
    """Each assistant message after the user's question: what it holds, and that it ended unlabelled."""
    shown = [child for child in app.chat.children if isinstance(child, (UserMessage, AssistantMessage))]
    assert isinstance(shown[0], UserMessage) and shown[0].text == "what is new in python?", shown
    messages = [child for child in shown[1:] if isinstance(child, AssistantMessage)]
    assert all(m.finished and not m.stop_label for m in messages), [(m.finished, m.stop_label) for m in messages]
    return [m.text for m in messages]


async def test_a_paused_and_continued_answer_is_one_message_live_and_after_continue(project: Path, fake_llm: FakeLLM) -> None:
    _, body = load("anthropic_pause_turn_web_search")
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0)
    fake_llm.script(Raw(body), Reply(text=CONTINUED))
    first = make_app(settings, clock=FixedClock())
    assert not first.engine_error, first.engine_error
    async with first.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await send(pilot, "what is new in python?")
        await finish_turn(pilot)
        assert len(fake_llm.requests) == 2, "the paused turn was continued"
        assert answers(first) == [PAUSED + CONTINUED]
        message = widgets(first, AssistantMessage)[0]
        assert "came out in October" in message.shown and PAUSED in message.shown

    second = make_app(settings, clock=FixedClock(), continue_session=True)
    async with second.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: bool(widgets(second, AssistantMessage)))
        assert answers(second) == [PAUSED + CONTINUED]
    assert len(fake_llm.requests) == 2, "redrawing sends nothing"


async def test_the_continuations_thinking_stays_above_the_one_answer(project: Path, fake_llm: FakeLLM) -> None:
    """Reasoning streamed in the continuation is shown before the answer it belongs to, not under it."""
    _, body = load("anthropic_pause_turn_web_search")
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0)
    fake_llm.script(Raw(body), Reply(text=CONTINUED, thinking="The results say October."))
    app = make_app(settings, clock=FixedClock())
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await send(pilot, "what is new in python?")
        await finish_turn(pilot)
        assert answers(app) == [PAUSED + CONTINUED]
        kinds = [type(child).__name__ for child in app.chat.children if isinstance(child, (UserMessage, AssistantMessage, ThinkingBlock))]
        assert kinds == ["UserMessage", "ThinkingBlock", "AssistantMessage"], kinds
        assert widgets(app, ThinkingBlock)[0].text == "The results say October."
