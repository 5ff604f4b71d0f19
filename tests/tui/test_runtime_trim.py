"""The C heap's trim after a turn (glibc malloc_trim) runs off the event loop's thread (issue 24: 0-turn history lag)."""

from __future__ import annotations

import threading
from typing import Any, Callable

import pytest

from tests.fake_llm import FakeLLM, Reply
from tests.tui.conftest import SIZE, finish_turn, send, started, wait_for
from tui import runtime
from tui.app import AssistantApp


async def test_the_trim_after_a_turn_runs_in_another_thread(real_app: AssistantApp, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "_applied", True)  # as tui.runtime.apply() leaves it in the console script
    real_trim: Callable[[int], int] | None = runtime._load_trim()
    trims: list[tuple[int, int]] = []
    done = threading.Event()

    def trim(pad: int) -> int:  # the real libc call, noting the thread it ran on
        trims.append((threading.get_ident(), pad))
        result = real_trim(pad) if real_trim is not None else 0
        done.set()
        return result

    monkeypatch.setattr(runtime, "_trim_loaded", True)
    monkeypatch.setattr(runtime, "_malloc_trim", trim)
    monkeypatch.setattr(runtime, "collect_start_up", lambda: None)  # start-up's own trim (already in a thread) is not what is checked
    fake_llm.script(Reply(text="A short answer."))
    loop_thread = threading.get_ident()
    async with real_app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await send(pilot, "A question.")
        await finish_turn(pilot)
        await wait_for(pilot, done.is_set, what="the trim after the turn")
    assert trims, "no trim after the turn"
    assert all(thread != loop_thread for thread, _ in trims), "malloc_trim ran on the event loop's thread"


def test_a_trim_asked_for_while_one_runs_runs_once_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two turns ending close together: the second request is not lost, and trims never overlap."""
    monkeypatch.setattr(runtime, "_applied", True)
    entered, release, second = threading.Event(), threading.Event(), threading.Event()
    calls: list[Any] = []
    running = [0]

    def trim(pad: int) -> int:
        running[0] += 1
        calls.append(running[0])
        if len(calls) == 1:
            entered.set()
            release.wait(30)
        else:
            second.set()
        running[0] -= 1
        return 0

    monkeypatch.setattr(runtime, "_trim_loaded", True)
    monkeypatch.setattr(runtime, "_malloc_trim", trim)
    runtime.release_free_memory()
    assert entered.wait(30)
    runtime.release_free_memory()
    runtime.release_free_memory()
    release.set()
    assert second.wait(30)
    assert calls == [1, 1]  # one more trim for the two requests, never two at once
