"""Esc must always work: a cancellation of the turn is never swallowed.

On Python 3.11, ``asyncio.wait_for`` returns the inner result and drops the
caller's cancellation when both happen in the same loop iteration. The idle
watchdog and the tool timeout must therefore not use it: every case here cancels
the turn at many points (including exactly as a stream item or a tool result
arrives) and requires the cancellation to end the turn each time.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import pytest

from core import events as ev
from core.handlers.passthrough import idle_guard
from tests.core.conftest import assert_history_valid, make_handler  # noqa: F401 - fixture
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.reliability.support import assert_no_leaks

CANCEL_POINTS = range(40)


async def _items(count: int) -> AsyncIterator[int]:
    for number in range(count):
        await asyncio.sleep(0)
        yield number


FINISHED_FIRST = "finished first"


async def _cancel_after(task: asyncio.Task[Any], loop_steps: int) -> bool | str:
    """Cancel ``task`` after ``loop_steps`` loop iterations.

    True when the cancellation took, False when it was swallowed, and
    ``FINISHED_FIRST`` when the task had already ended (nothing left to cancel).
    """
    for _ in range(loop_steps):
        await asyncio.sleep(0)
    if task.done():
        await task
        return FINISHED_FIRST
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        return True
    return False


async def test_the_idle_watchdog_never_swallows_a_cancellation() -> None:
    async def consume() -> None:
        async for _ in idle_guard(_items(500), 10.0):
            pass

    lost = [steps for steps in CANCEL_POINTS if await _cancel_after(asyncio.create_task(consume()), steps) is False]
    assert lost == [], f"cancellation lost at {len(lost)} of {len(CANCEL_POINTS)} points: {lost}"


async def test_the_idle_watchdog_still_fires() -> None:
    async def silent() -> AsyncIterator[int]:
        yield 1
        await asyncio.sleep(30)
        yield 2

    seen = []
    with pytest.raises(Exception) as caught:
        async for item in idle_guard(silent(), 0.1):
            seen.append(item)
    assert seen == [1] and getattr(caught.value, "kind", "") == "timeout"


async def _consume_until(handler: Any, query: str, kind: type) -> tuple[asyncio.Task[None], asyncio.Event]:
    reached = asyncio.Event()

    async def consume() -> None:
        async for event in handler.stream_query(query):
            if isinstance(event, kind):
                reached.set()

    return asyncio.create_task(consume()), reached


async def _lost_cancellations(handler: Any, kind: type, points: range) -> list[int]:
    """Cancel one turn per point, ``steps`` loop iterations after the first ``kind`` event; the points lost."""
    lost = []
    raced = 0
    for steps in points:
        task, reached = await _consume_until(handler, f"question {steps}", kind)
        await asyncio.wait_for(reached.wait(), 30)  # a hang detector
        outcome = await _cancel_after(task, steps)
        if outcome is False:
            lost.append(steps)
        raced += outcome is True
        assert_history_valid(handler.conversation_history)
    assert raced >= len(points) // 2, f"only {raced} of {len(points)} cancellations met a running turn"
    return lost


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_esc_during_a_fast_stream_always_ends_the_turn(make_handler, fake_llm: FakeLLM, kind: str) -> None:
    """The shape of the TUI's Esc: the worker is cancelled while deltas pour in."""
    handler = make_handler(kind)
    fake_llm.responder = lambda request: Reply(text="word " * 400, chunk=5, tokens_per_second=4000)
    lost = await _lost_cancellations(handler, ev.TextDelta, range(0, 24, 3))
    assert lost == [], f"Esc was ignored at {lost}"
    fake_llm.script(Reply(text="next works"))
    assert (await handler.handle_query("again"))["content"] == "next works"
    assert_no_leaks(fake_llm)


async def test_esc_as_a_tool_finishes_ends_the_turn(make_handler, fake_llm: FakeLLM) -> None:
    """A cancellation arriving with the tool's result must not let the loop call the model again."""
    # Keep the follow-up model call slow enough (delayed ACKs) that the cancel points land while it runs.
    fake_llm.nodelay = False
    handler = make_handler()

    async def quick(params: dict[str, Any]) -> str:
        for _ in range(3):
            await asyncio.sleep(0)
        return "done"

    handler.register_tool({"name": "quick", "input_schema": {"type": "object"}}, quick)
    # A tool call for a new question; a plain answer once the request ends with the tool's result.
    fake_llm.responder = lambda request: (
        Reply(text="answered") if request.messages[-1]["content"][-1]["type"] == "tool_result"
        else Reply(tools=[Tool("quick", {})])
    )
    lost = await _lost_cancellations(handler, ev.ToolCallStarted, CANCEL_POINTS)
    assert lost == [], f"Esc was ignored at {len(lost)} of {len(CANCEL_POINTS)} points: {lost}"
