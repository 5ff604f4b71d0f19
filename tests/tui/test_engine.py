"""Issue 24 s3: the engine is in one of three explicit states, and the UI does the right thing in each.

The app is built as the console script builds it (``make_app(None, load_settings=...)``): the
settings load and the real ``core.app.Application`` is built after the first frame, its provider
pointed at the loopback fake LLM server. A failure is a real fault inside the Application's
construction (the project cannot be read), never a stand-in engine.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.app import Application
from core.config import Settings
from tests.fake_llm import FakeLLM, Reply
from tests.tui.conftest import SIZE, FixedClock, finish_turn, wait_for, widgets
from tui.app import AssistantApp, make_app
from tui.engine import Failed, Loading, Ready
from tui.widgets.chat import AssistantMessage, NoteMessage, UserMessage


def _held_app(settings: Settings) -> tuple[AssistantApp, threading.Event]:
    """The CLI's app, its settings loader held until the test releases it."""
    release = threading.Event()

    def load_settings() -> Settings:
        assert release.wait(30), "the test never released the settings"
        return settings

    return make_app(None, load_settings=load_settings, project_root=Path(settings.project_root), clock=FixedClock()), release


def _toasts(app: AssistantApp) -> list[str]:
    return [str(notification.message) for notification in app._notifications]


def _chat_text(app: AssistantApp) -> str:
    return "\n".join(str(getattr(child, "body", "")) + str(getattr(child, "text", "")) for child in app.chat.children)


async def test_loading_then_ready_keeps_a_query_typed_meanwhile_and_sends_it(real_settings: Settings, fake_llm: FakeLLM) -> None:
    """Loading: no Application, no metrics, the prompt works; a query sent then is kept, said so, and sent once Ready."""
    fake_llm.script(Reply(text="Ready now."))
    app, release = _held_app(real_settings)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.focused is app.prompt)
        engine = app.engine
        assert isinstance(engine.state, Loading) and engine.loading
        assert engine.application is None and engine.handler is None and engine.metrics() is None and engine.mcp is None
        assert engine.provider_label == "starting…"
        await pilot.press(*"hello there", "enter")
        await wait_for(pilot, lambda: any("kept and sent once the engine is ready" in toast for toast in _toasts(app)))
        assert app.startup.kept == ["hello there"] and not fake_llm.requests and app.prompt.text == ""
        release.set()
        await wait_for(pilot, lambda: bool(fake_llm.requests), timeout=120, what="the kept query sent once the engine is ready")  # a hang guard: the Application and the SDK load under the suite's load (20-25 s seen at load 14)
        await finish_turn(pilot)
        state = engine.state
        assert isinstance(state, Ready)
        assert isinstance(state.application, Application) and state.session is state.application.session_state
        assert engine.handler is state.application.handler and engine.metrics() is not None
        assert fake_llm.requests[0].last_user_text() == "hello there" and len(fake_llm.requests) == 1
        assert [type(w).__name__ for w in app.chat.children if isinstance(w, (UserMessage, AssistantMessage))][-2:] == ["UserMessage", "AssistantMessage"]
        assert widgets(app, AssistantMessage)[-1].text == "Ready now."
        assert app.status.provider == engine.provider_label == "anthropic:claude-sonnet-4-5"


@pytest.fixture
def unreadable_project(monkeypatch: pytest.MonkeyPatch, project: Path) -> str:
    """A real fault in the Application's construction: its file index cannot open the project."""
    from core.memory import system

    message = f"[Errno 13] Permission denied: '{project}'"

    def refuse(self: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(project))

    monkeypatch.setattr(system.MemorySystem, "__init__", refuse)
    return message


async def test_loading_then_failed_says_why_and_sends_nothing(real_settings: Settings, fake_llm: FakeLLM, unreadable_project: str) -> None:
    """Failed: the reason in the chat in words (no traceback); a query kept meanwhile is not sent, said so, and given back."""
    app, release = _held_app(real_settings)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.focused is app.prompt)
        await pilot.press(*"are you there?", "enter")
        await wait_for(pilot, lambda: app.startup.kept == ["are you there?"])
        release.set()
        await wait_for(pilot, lambda: app.startup.started.is_set() and app.prompt.text == "are you there?", what="the kept query given back")
        state = app.engine.state
        assert isinstance(state, Failed) and unreadable_project in state.reason and "fix the configuration and restart" in state.reason
        assert app.engine.application is None and app.engine.metrics() is None and app.engine_error == state.reason
        notes = {str(note.border_title): note.body for note in widgets(app, NoteMessage)}
        assert unreadable_project in notes["The engine could not start"]
        assert notes["Not sent"].startswith("The engine could not start, so nothing was sent: ") and unreadable_project in notes["Not sent"]
        assert "No provider" not in notes  # the provider is configured: it is the engine that failed
        assert "Traceback" not in _chat_text(app)
        assert fake_llm.requests == []
        await pilot.press("ctrl+a", "ctrl+k")
        app.prompt.load_text("/help")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(str(getattr(w, "border_title", "")) == "Keys and commands" for w in app.chat.children), what="/help still works")


async def test_built_at_once_is_ready_or_failed_before_the_first_frame(real_settings: Settings, unreadable_project: str) -> None:
    """``make_app(settings)`` builds the Application at once: the engine starts Failed with its reason, never Loading."""
    app = make_app(real_settings, clock=FixedClock())
    assert isinstance(app.engine.state, Failed) and not app.engine.loading
    assert unreadable_project in app.engine_error
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.startup.started.is_set())
        notes = {str(note.border_title): note.body for note in widgets(app, NoteMessage)}
        assert unreadable_project in notes["The engine could not start"]
        assert "Traceback" not in _chat_text(app)
