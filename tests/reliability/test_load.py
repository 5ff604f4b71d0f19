"""Load: a 500-turn session through the handler (the 429 storm is in tests/core/test_tool_loop.py).

The fake server answers at once (TCP_NODELAY, no pacing) so the client's own
per-turn work is what is measured. Every request resends the whole history, so
request size and serialisation grow linearly; what must stay small is the work
per history message and memory beyond the history itself. The work is counted,
not timed: Python function calls in one turn early and one late, per extra
message of history (the SDK's per-message transform, which cost 140 µs a
message, makes hundreds). Time figures (turn times, CPU, event-loop stalls) are
reported, not asserted (the machine is shared; the benchmarks measure them). Every fifth turn runs a tool; the session
is recorded to a transcript as the app does.
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.sessions import SessionRecorder, SessionStore
from tests.core.conftest import assert_history_valid
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.reliability.support import (
    LoopProbe,
    assert_no_leaks,
    make_engine,
    rss_bytes,
    transcript_text,
    without_pytest_log_capture,
)

TURNS = 500
MAX_CALLS_PER_MESSAGE = 12
"""Extra Python calls per turn for each message of history: measured 6.9 (Anthropic) and 1.7 (OpenAI);
the SDK's per-message transform (`chat.completions.create`) makes 710."""
COUNTED_TURNS = (49, TURNS - 1)


async def counting_calls(work: Any) -> tuple[Any, int]:
    """Await ``work`` while counting the Python function calls made on this thread."""
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(profile)
    try:
        return await work, calls
    finally:
        sys.setprofile(None)
MAX_BLOCKS_PER_TURN = 200
"""Python heap blocks kept per turn (the history's ~2.4 messages need ~20)."""


def respond(request: Any) -> Reply:
    """A tool call every fifth question, then its answer; otherwise a plain answer."""
    last = json.dumps(request.messages[-1])
    if '"tool_result"' in last or request.messages[-1].get("role") == "tool":
        return Reply(text="Recorded it. " * 5, chunk=1000)
    if "question" in last and int(last.split("question ")[1].split()[0]) % 5 == 0:
        return Reply(tools=[Tool("record", {"value": "v" * 50})])
    return Reply(text="answer " * 20, chunk=1000)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_500_turn_session(fake_llm: FakeLLM, tmp_path: Path, app_log: Path, kind: str,
                                record_property: Any) -> None:
    fake_llm.nodelay = True
    fake_llm.responder = respond
    engine = make_engine(kind, fake_llm, tmp_path, transcript=False)
    handler = engine.handler
    writer = SessionStore().writer(SessionStore().create(tmp_path), provider=kind, model="test")
    handler.add_observer(SessionRecorder(writer))
    wall: list[float] = []
    cpu: list[float] = []
    stalls: list[float] = []
    sent: list[int] = []
    sizes: list[int] = []
    counted: dict[int, tuple[int, int]] = {}
    with without_pytest_log_capture():
        async with LoopProbe() as probe:
            for number in range(TURNS):
                started, started_cpu = time.perf_counter(), time.thread_time()
                probe.take()
                query = handler.handle_query(f"question {number} " + "x" * 100)
                if number in COUNTED_TURNS:
                    result, calls = await counting_calls(query)
                    counted[number] = (calls, len(handler.conversation_history))
                else:
                    result = await query
                wall.append(time.perf_counter() - started)
                cpu.append(time.thread_time() - started_cpu)
                stalls.append(probe.take())
                assert result["status"] == "COMPLETE", result["content"]
                sent.append(len(fake_llm.requests[-1].messages))
                sizes.append(len(json.dumps(fake_llm.requests[-1].body)))
                if number < TURNS - 1:
                    fake_llm.requests.clear()  # the fake's own record would otherwise grow quadratically
                if number == 49:
                    gc.collect()
                    rss_after_warmup, blocks_after_warmup = rss_bytes(), sys.getallocatedblocks()
    writer.close()
    gc.collect()
    grown = rss_bytes() - rss_after_warmup
    blocks_per_turn = (sys.getallocatedblocks() - blocks_after_warmup) / (TURNS - 50)
    first_cpu, last_cpu = statistics.median(cpu[:50]), statistics.median(cpu[-50:])
    cpu_per_message = (last_cpu - first_cpu) / (statistics.median(sent[-50:]) - statistics.median(sent[:50]))
    (early_calls, early_history), (late_calls, late_history) = (counted[n] for n in COUNTED_TURNS)
    calls_per_message = (late_calls - early_calls) / (late_history - early_history)
    figures = {
        "total_s": round(sum(wall), 1),
        "wall_ms_first50": round(statistics.median(wall[:50]) * 1000, 1),
        "wall_ms_last50": round(statistics.median(wall[-50:]) * 1000, 1),
        "wall_ratio": round(statistics.median(wall[-50:]) / statistics.median(wall[:50]), 2),
        "cpu_ms_first50": round(first_cpu * 1000, 1), "cpu_ms_last50": round(last_cpu * 1000, 1),
        "cpu_us_per_history_message": round(cpu_per_message * 1e6, 1),
        "python_calls_per_turn": (early_calls, late_calls), "calls_per_history_message": round(calls_per_message, 2),
        "steady_stall_ms": round(statistics.median(stalls[-50:]) * 1000, 1), "worst_stall_ms": round(probe.worst * 1000),
        "rss_growth_mb": round(grown / 2**20, 1), "heap_blocks_per_turn": round(blocks_per_turn),
        "history_messages": len(handler.conversation_history), "last_request_kb": sizes[-1] // 1024,
    }
    record_property("figures", figures)
    print(kind, figures)

    assert len(engine.recorded) == TURNS // 5
    assert len(handler.conversation_history) == TURNS * 2 + (TURNS // 5) * 2
    assert_history_valid(handler.conversation_history)
    # Request size grows linearly with the history (nothing duplicated): the same increment early and late.
    early, late = (sizes[99] - sizes[49]) / 50, (sizes[499] - sizes[449]) / 50
    assert 0.8 < late / early < 1.25, (early, late)
    assert calls_per_message < MAX_CALLS_PER_MESSAGE, figures
    assert blocks_per_turn < MAX_BLOCKS_PER_TURN, figures
    assert grown < 64 * 2**20, figures  # RSS is noisy (allocator arenas): a loose bound only
    assert transcript_text().count('"kind":"user"') == TURNS
    assert_no_leaks(fake_llm)
