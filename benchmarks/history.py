"""4. History scaling: 0, 50, 200 and 1,000 earlier turns, then a reply streaming at 60 tokens/s."""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.apphost import SIZE, PaintRecorder, bench_settings, build_app
from benchmarks.child import run_child
from benchmarks.content import past_turn, text_for
from benchmarks.harness import BenchResult, CpuMeter, Figure, GcWatch, LoopLagProbe, at_most, percentile, peak_rss_mb, rss_mb, wait_until
from benchmarks.server import ReplySpec, ServerProcess
from benchmarks.stalls import diagnosis

TITLE = "History scaling"
METHOD = """\
Each size runs in a fresh process. The earlier turns (a question, an intro, an
`executeFilePathCommand` call and its result, a 250-700 character Markdown
answer with code and tables) are written as a session transcript by the app's
own `SessionRecorder` (the events a live turn streams), and the app is started
with `continue_session=True` (`assistant-tui --continue`): the Application
loads the transcript into the handler's history and the app redraws the chat,
trace and context. Then a new query streams a reply at 60 tokens/s
through the real provider; the window from submit to the end of the turn is
measured: p99 event-loop lag (a task sleeping 10 ms records how late it wakes),
CPU (% of a core; the event loop thread's own CPU too, which load barely moves),
and resident memory at the end. The CPU of the process until the resumed turns are
on screen is reported beside the wall-clock time. The context window is set to
10M tokens so the long histories are sent."""

SIZES_FULL = (0, 50, 200, 1000)
SIZES_QUICK = (0, 20)


def turn_events(index: int) -> list[Any]:
    """The handler events of one earlier turn (what a live turn would have streamed)."""
    from core import events as ev
    from core.types import ToolCall

    turn = past_turn(index)
    call = ToolCall(id=f"toolu_hist_{index:05d}", name=turn["tool"]["name"], parameters=turn["tool"]["parameters"])
    return [
        ev.TurnStarted(query=turn["query"], subtask_id="history"),
        ev.TextDelta(text=turn["intro"]),
        ev.AssistantMessage(content=turn["intro"], tool_calls=(call,)),
        ev.ToolCallStarted(call=call, started_at=time.time()),
        ev.ToolCallFinished(call=call, status="success", result=turn["result"], duration=0.05),
        ev.TextDelta(text=turn["answer"]),
        ev.AssistantMessage(content=turn["answer"], final=True),
        ev.TurnCompleted(result={"status": "COMPLETE", "content": turn["answer"], "metadata": {}}),
    ]


def write_session(project: str, url: str, turns: int) -> None:
    """A session transcript of ``turns`` earlier turns, written by the app's own recorder.

    Runs in a separate process (same HOME) so the measured process's memory starts clean.
    """
    from core.app import Application

    application = Application(bench_settings(Path(project), url, context_window=10_000_000))
    application.session_state.start()
    application.session_state.recorder.writer.durable = False  # setting up, not measured: skip the fsyncs
    for index in range(turns):
        for event in turn_events(index):
            application.session_state.recorder.record(event)
    application.session_state.close()


def measure(turns: int, seconds: float, diagnose: bool = False) -> dict[str, Any]:
    """One size, in this (fresh) process; with ``diagnose``, where the stalls came from instead of a measurement."""
    return asyncio.run(_measure(turns, seconds, diagnose))


async def _measure(turns: int, seconds: float, diagnose: bool) -> dict[str, Any]:
    with ServerProcess() as server, tempfile.TemporaryDirectory(prefix="atui-history-") as tmp:
        server.script(ReplySpec(text=text_for(60, seconds, seed=0), chunk=12, tokens_per_second=60))
        settings = bench_settings(Path(tmp), server.url, context_window=10_000_000)
        if turns:
            code = f"from benchmarks.history import write_session; write_session({tmp!r}, {server.url!r}, {turns})"
            subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ), timeout=600)
        began = time.perf_counter()
        app = build_app(settings, continue_session=True)
        app.handler.model_provider.client  # import the SDK now: its first-use cost is not what this measures
        PaintRecorder(app)
        async with app.run_test(size=SIZE) as pilot, diagnosis(diagnose) as sampler:
            await pilot.pause()
            if turns and not await wait_until(lambda: len(app.handler.conversation_history) >= 4 * turns and app.startup.started.is_set(), timeout=120):
                raise RuntimeError(f"the session with {turns} turns was not resumed ({len(app.handler.conversation_history)} messages)")
            await pilot.pause()
            loaded = time.perf_counter() - began
            loaded_cpu, loaded_loop_cpu = time.process_time(), time.thread_time()  # CPU from the process's start (the loop runs on this thread)
            await asyncio.sleep(0.5)  # let the restored chat settle
            gc.collect()
            rss_loaded = rss_mb()
            probe = LoopLagProbe().start()
            meter = CpuMeter().start()
            gcwatch = GcWatch().start()
            background = sorted({w.group for w in app.workers if not w.is_finished})  # start-up work still running when the turn starts
            loop_cpu, process_cpu = time.thread_time(), time.process_time()  # this coroutine runs on the loop's thread
            start = time.perf_counter()
            await app.submit("One more question.")
            if not await wait_until(lambda: not app.turn_running, timeout=seconds * 4 + 30):
                raise RuntimeError("the streamed turn did not finish")
            end = time.perf_counter()
            loop_cpu, process_cpu = time.thread_time() - loop_cpu, time.process_time() - process_cpu
            cpu = meter.percent()
            await wait_until(lambda: not any(t.name == "malloc-trim" for t in threading.enumerate()), timeout=30)  # the turn's heap trim (a thread) is done: RSS after it
            await probe.stop()
            gcwatch.stop()
            stalls = sampler.window(start, end).describe() if sampler else ""
            live = len(app.chat.children)
            failed = [incident for incident in app.engine.session.incidents if incident["kind"] == "error"]
        if failed:
            raise RuntimeError(f"the turn failed: {failed[-1]['message']}")
        lags = [lag * 1000 for lag in probe.lags(start, end)]
        return {
            "load_seconds": loaded,
            "p99_lag_ms": percentile(lags, 99),
            "max_lag_ms": max(lags) if lags else 0.0,
            "cpu": cpu,
            "rss_mb": rss_mb(),
            "rss_loaded_mb": rss_loaded,
            "peak_rss_mb": peak_rss_mb(),
            "live_widgets": float(live),
            "turn_seconds": end - start,
            "load_cpu_s": loaded_cpu,
            "load_loop_cpu_s": loaded_loop_cpu,
            "loop_cpu_ms": loop_cpu * 1000,
            "other_threads_cpu_ms": (process_cpu - loop_cpu) * 1000,
            "background_at_start": ", ".join(background) or "none",
            "stalls": stalls,
            "gc": gcwatch.describe(start, end),
        }


def run(quick: bool = False) -> BenchResult:
    sizes = SIZES_QUICK if quick else SIZES_FULL
    repeats = 1 if quick else 3
    seconds = 1.0 if quick else 6.0
    result = BenchResult("history", TITLE, parameters={"turns": ", ".join(map(str, sizes)), "stream": f"60 tokens/s for {seconds:g} s", "repeats": repeats})
    runs: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}
    for _ in range(repeats):
        for size in sizes:
            runs[size].append(run_child("history", "measure", {"turns": size, "seconds": seconds}))
    if not quick:
        diagnostic = run_child("history", "measure", {"turns": sizes[-1], "seconds": seconds, "diagnose": True})
        result.notes.append(f"Diagnostic run at {sizes[-1]} turns (stack sampling, not measured): {diagnostic['stalls']}.")
    base = [r["p99_lag_ms"] for r in runs[sizes[0]]]
    biggest = sizes[-1]
    for size in sizes:
        values = [r["p99_lag_ms"] for r in runs[size]]
        if size == biggest:
            result.add(Figure(f"p99 loop lag, {size} turns", "ms", values, base, "same app, 0 turns", at_most(1.2, of="ratio")))
        else:
            result.add(Figure(f"p99 loop lag, {size} turns", "ms", values))
    for size in sizes:
        result.add(Figure(f"CPU, {size} turns", "% of a core", [r["cpu"] for r in runs[size]]))
    for size in sizes:
        target = at_most(150) if size == biggest else None
        result.add(Figure(f"RSS, {size} turns", "MB", [r["rss_mb"] for r in runs[size]], target=target))
    for size in sizes:
        if size:
            result.add(Figure(f"start → {size} turns resumed on screen", "s", [r["load_seconds"] for r in runs[size]]))
            result.add(Figure(f"  CPU until {size} turns resumed (all threads)", "s", [r["load_cpu_s"] for r in runs[size]]))
    result.notes.append(
        "Max loop lag (ms) per size: " + ", ".join(f"{s}: {max(r['max_lag_ms'] for r in runs[s]):.0f}" for s in sizes)
        + "; garbage collection during the turn (first repeat): " + "; ".join(f"{s} turns: {runs[s][0]['gc']}" for s in sizes)
        + "; live chat widgets after the turn: " + ", ".join(f"{s}: {runs[s][0]['live_widgets']:.0f}" for s in sizes)
        + "; event-loop thread CPU during the turn (ms, median): " + ", ".join(f"{s}: {statistics.median(r['loop_cpu_ms'] for r in runs[s]):.0f}" for s in sizes)
        + "; start-up work still running when the turn started (first repeat): " + ", ".join(f"{s}: {runs[s][0]['background_at_start']}" for s in sizes) + "."
    )
    return result
