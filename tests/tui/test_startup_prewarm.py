"""The SDK's prewarm starts only once the engine is built and the resumed chat is painted (issue 23/24).

Its import and type building run in a thread that competes with the event loop for the
GIL on a 2-core machine: started while the resumed turns were still being drawn, it
slowed the resume ("start -> turns resumed on screen") and a fresh app's first frames.
Seen from outside: the frames the app painted, and when the provider's prewarm was called.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from core.config import Settings
from tests.tui.conftest import SIZE, FixedClock, started, wait_for
from tests.tui.test_resume_window import write_session
from tui.app import make_app
from tui.engine import Ready
from tui.sessions import Sessions


async def test_the_prewarm_starts_after_the_engine_and_the_resumed_chat_are_painted(real_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    write_session(real_settings, 3)
    app = make_app(real_settings, clock=FixedClock(), continue_session=True)
    frames: list[int] = []  # chat items on screen at each frame painted
    original_display = app._display

    def display(screen: Any, renderable: Any) -> None:
        original_display(screen, renderable)
        if renderable is not None:
            frames.append(len(app.chat.children))

    monkeypatch.setattr(app, "_display", display)
    resumed_at: list[int] = []  # frames painted when the session had been opened (the chat replayed)
    original_start = Sessions.start

    async def start(self: Sessions, **kwargs: Any) -> Any:
        result = await original_start(self, **kwargs)
        resumed_at.append(len(frames))
        return result

    monkeypatch.setattr(Sessions, "start", start)
    provider: Any = app.handler.model_provider
    seen: dict[str, Any] = {}
    called = threading.Event()

    def prewarm() -> None:  # noted, not run: the SDK's import is not what is checked
        seen.update(frames=len(frames), state=app.engine.state, chat=len(app.chat.children))
        called.set()

    monkeypatch.setattr(provider, "prewarm", prewarm)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, called.is_set, what="the prewarm")
    assert isinstance(seen["state"], Ready)
    assert resumed_at and seen["chat"] >= 6, seen  # three questions and three answers replayed
    assert seen["frames"] > resumed_at[0], f"the prewarm started before a frame showed the resumed chat ({seen}, resumed at frame {resumed_at[0]})"
