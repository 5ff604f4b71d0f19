"""13. Compaction: a 60-turn session in a 16,000-token window against the same session on an unlimited window."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.apphost import bench_settings
from benchmarks.cost import billed_equivalent
from benchmarks.harness import BenchResult, Figure, at_most

TITLE = "Compaction: a long session within a small window"
METHOD = """\
The scripted 60-turn session of the compaction test (`tests/scripted_session.py`: facts
planted at turn 1 and asked for at turns 30, 45 and 60, whole-file reads of 220-line
files every third turn, long answers otherwise), through the handler the app builds
(`core.app.Application`, the real `readFile`) with the real anthropic SDK against the fake
server with its prompt-cache accounting (`tests/fake_cache.py`). Run twice: with a
16,000-token window (`context_window = 16000`, compaction at the default 85%), and with
an unlimited window (10,000,000 tokens: never compacted). Figures: requests made
(summary requests included), billed-equivalent input tokens (uncached input + 1.25 x
cache writes + 0.1 x cache reads), output tokens, the estimated cost at
claude-sonnet-4-5 prices, the largest request against the window, and the wall time of
each compaction (pruning, the summary request to the local fake server, rebuilding the
view and writing the transcript record). Both runs must answer the late questions."""


async def session(window: int, turns: int) -> dict[str, Any]:
    """Run the scripted session; what it cost and what it answered."""
    from core.app import Application
    from core.handlers.pacing import Pacing
    from tests.fake_cache import PromptCaching
    from tests.fake_llm import FakeLLM
    from tests.scripted_session import ScriptedModel, project, request_tokens, session_script

    with tempfile.TemporaryDirectory(prefix="atui-compaction-") as tmp, FakeLLM() as fake:
        root = project(Path(tmp))
        fake.caching = PromptCaching()
        model = ScriptedModel()
        fake.responder = model
        settings = bench_settings(root, fake.anthropic_url, context_window=window, model="claude-sonnet-4-5")
        application = Application(settings, pacing=Pacing(wall_clock=lambda: "2026-11-26 22:00 UTC"))
        handler = application.handler
        answers: list[str] = []
        started = time.perf_counter()
        for turn in range(1, turns + 1):
            async for event in handler.stream_query(session_script(turn)):
                if event.kind == "turn_failed":
                    raise RuntimeError(f"turn {turn} failed: {event.message}")
                if event.kind == "turn_completed" and session_script(turn).startswith("what is"):
                    answers.append(event.result["content"])
        seconds = time.perf_counter() - started
        usages = [{k: e.usage.as_dict()[k] for k in ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens")} for e in handler.usage.entries]
        largest = max(request_tokens(r) for r in fake.requests)
        result = {
            "requests": len(fake.requests),
            "usages": usages,
            "cost": handler.usage.summary()["cost"] or 0.0,
            "largest": largest,
            "compactions": list(handler.compactor.seconds),
            "answers": answers,
            "seconds": seconds,
            "problems": model.problems,
        }
        application.session_state.close()
    if result["problems"]:
        raise RuntimeError(f"a request the provider would refuse: {result['problems'][0]}")
    return result


async def _run(quick: bool) -> BenchResult:
    turns = 30 if quick else 60
    result = BenchResult("compaction", TITLE, parameters={"turns": turns, "window": 16_000})
    await session(16_000, 3)  # warm-up: imports and the SDK's first client, paid by neither measured run
    small = await session(16_000, turns)
    unlimited = await session(10_000_000, turns)
    result.add(Figure("requests (summary requests included)", "requests", [small["requests"]], [unlimited["requests"]], "the same session, unlimited window"))
    result.add(
        Figure(
            "billed-equivalent input tokens",
            "tokens",
            [billed_equivalent(small["usages"])],
            [billed_equivalent(unlimited["usages"])],
            "the same session, unlimited window",
            target=at_most(1.0, of="ratio"),
        )
    )
    result.add(Figure("output tokens", "tokens", [sum(u["output_tokens"] for u in small["usages"])], [sum(u["output_tokens"] for u in unlimited["usages"])], "the same session, unlimited window"))
    result.add(Figure("estimated session cost, claude-sonnet-4-5 prices", "$", [small["cost"]], [unlimited["cost"]], "the same session, unlimited window"))
    result.add(Figure("largest request", "tokens", [small["largest"]], target=at_most(16_000)))
    result.add(Figure("compactions", "count", [len(small["compactions"])]))
    if small["compactions"]:
        result.add(Figure("time of one compaction", "ms", [1000 * seconds for seconds in small["compactions"]]))
    result.notes.append(
        f"Late answers with compaction: {small['answers']}; unlimited: {unlimited['answers']}. "
        f"Largest request on the unlimited window: {unlimited['largest']:,} tokens. "
        f"Session wall time {small['seconds']:.1f} s with compaction, {unlimited['seconds']:.1f} s without "
        "(the fake server runs in this process, so its CPU is counted: not a figure to compare closely)."
    )
    return result


def run(quick: bool = False) -> BenchResult:
    return asyncio.run(_run(quick))
