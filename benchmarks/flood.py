"""8. Trace flood: a tool printing 100,000 lines while a reply streams."""

from __future__ import annotations

import asyncio
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.child import run_child
from benchmarks.apphost import SIZE, PaintRecorder, bench_settings, build_app
from benchmarks.content import text_for
from benchmarks.harness import BenchResult, CpuMeter, Figure, GcWatch, LoopLagProbe, at_most, percentile, rss_mb, wait_until
from benchmarks.server import ReplySpec, ServerProcess
from benchmarks.stalls import diagnosis

TITLE = "Trace flood"
METHOD = """\
The app (built by `make_app` from the settings, as the CLI does) gets one more
tool, `build`, whose executor runs a real subprocess that prints the lines
(about 60 characters each) and returns its whole output. The model streams a
reply at 250 tokens/s that ends with a call to `build`, then, with the tool's
result in hand, streams a second reply at 250 tokens/s. The engine has no live
tool-output channel: the lines reach the app as one result when the tool ends,
and go to the trace, the chat's tool line, the transcript and the history (and
back to the model). Flood time = tool call shown as started → first frame
painted after the trace shows it finished (includes running the subprocess).
p99 loop lag (10 ms probe) over the whole turn; RSS growth = resident memory
after the turn (after `gc.collect()`) − before it. Anchor: the same subprocess
read by a bare asyncio program (the tool's own floor). The context window is
set to 10M tokens so the result can be sent back. Each repeat has a fresh process.
`build` is not declared read-only, so it runs between two whole-tree checkpoints
(issue 26); their part of the flood time (the snapshots before and after it, in
a project whose shadow repository is created by the first, as on the first
command ever run in a project) is shown apart."""

LINE = "{:06d} | CC drivers/net/ethernet/intel/ixgbe/ixgbe_main.o ... ok\n"
PRINTER = "import sys\nfor i in range({n}):\n    sys.stdout.write({line!r}.format(i))\n"


async def run_printer(lines: int) -> str:
    """Run the line-printing subprocess and return its output."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", PRINTER.format(n=lines, line=LINE), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    return out.decode()


def _flood_tool(lines: int) -> tuple[dict[str, Any], Any]:
    spec = {
        "name": "build",
        "description": "Run the build and return its output.",
        "input_schema": {"type": "object", "properties": {"target": {"type": "string"}}, "required": ["target"]},
    }

    async def executor(params: dict[str, Any]) -> str:
        return await run_printer(lines)

    return spec, executor


async def app_once(server: ServerProcess, lines: int, project: Path, diagnose: bool = False) -> dict[str, Any]:
    server.script(
        ReplySpec(text=text_for(250, 1.0, seed=1), chunk=12, tokens_per_second=250, tools=[{"name": "build", "input": {"target": "all"}}]),
        ReplySpec(text=text_for(250, 1.0, seed=2), chunk=12, tokens_per_second=250),
    )
    settings = bench_settings(project, server.url, context_window=10_000_000)
    app = build_app(settings)
    app.handler.model_provider.client  # the SDK's first import is not what this measures
    app.handler.register_tool(*_flood_tool(lines))
    paints = PaintRecorder(app)
    marks: dict[str, float] = {}
    async with app.run_test(size=SIZE) as pilot, diagnosis(diagnose) as sampler:
        await pilot.pause()
        trace = app.trace
        started, finished = trace.started, trace.finished

        async def on_started(call: Any) -> None:
            marks.setdefault("started", time.perf_counter())
            await started(call)

        async def on_finished(*args: Any, **kwargs: Any) -> None:
            await finished(*args, **kwargs)
            marks.setdefault("finished", time.perf_counter())

        trace.started, trace.finished = on_started, on_finished
        checkpoint_s = _time_checkpoints(app.handler.checkpoints)
        await asyncio.sleep(0.3)
        gc.collect()
        rss_before = rss_mb()
        probe = LoopLagProbe().start()
        meter = CpuMeter().start()
        gcwatch = GcWatch().start()
        began = time.perf_counter()
        await app.submit("Build it and tell me how it went.")
        if not await wait_until(lambda: not app.turn_running, timeout=120):
            raise RuntimeError("the turn did not finish")
        end = time.perf_counter()
        cpu = meter.percent()
        await probe.stop()
        gcwatch.stop()
        stalls = sampler.window(began, end).describe() if sampler else ""
        await wait_until(lambda: "finished" in marks and paints.first_after(marks["finished"]) is not None, timeout=5)
        gc.collect()
        rss_after = rss_mb()
        errors = [incident["message"] for incident in app.engine.session.incidents if incident["kind"] == "error"]
        statuses = [record.status for record in trace.records.values()]
    if errors:
        raise RuntimeError(f"the turn failed: {errors[-1]}")
    if "started" not in marks or "finished" not in marks or statuses != ["success"]:
        raise RuntimeError(f"the tool call did not run as expected (trace: {statuses})")
    painted = paints.first_after(marks["finished"]) or marks["finished"]
    lags = [lag * 1000 for lag in probe.lags(began, end)]
    return {
        "flood_s": painted - marks["started"],
        "turn_s": end - began,
        "p99_ms": percentile(lags, 99),
        "max_ms": max(lags) if lags else 0.0,
        "rss_growth": rss_after - rss_before,
        "cpu": cpu,
        "stalls": stalls,
        "gc": gcwatch.describe(began, end),
        "checkpoint_s": sum(checkpoint_s),
    }


def _time_checkpoints(checkpoints: Any) -> list[float]:
    """Seconds each snapshot of ``checkpoints`` takes (before and after a call), appended as they end."""
    spent: list[float] = []
    snapshot = checkpoints.snapshot

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return snapshot(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - began)

    checkpoints.snapshot = timed
    return spent


async def anchor_once(lines: int) -> float:
    began = time.perf_counter()
    output = await run_printer(lines)
    if output.count("\n") != lines:
        raise RuntimeError("the printer printed the wrong number of lines")
    return time.perf_counter() - began


def measure(lines: int, diagnose: bool = False) -> dict[str, Any]:
    """One flood in this (fresh) process."""

    async def go() -> dict[str, Any]:
        with ServerProcess() as server, tempfile.TemporaryDirectory(prefix="atui-flood-") as tmp:
            return await app_once(server, lines, Path(tmp), diagnose)

    return asyncio.run(go())


def run(quick: bool = False) -> BenchResult:
    lines = 10_000 if quick else 100_000
    repeats = 1 if quick else 3
    result = BenchResult("flood", TITLE, parameters={"lines": lines, "bytes": len(LINE.format(0)) * lines, "stream": "250 tokens/s before and after", "repeats": repeats})
    runs: list[dict[str, Any]] = []
    anchors: list[float] = []
    for _ in range(repeats):
        runs.append(run_child("flood", "measure", {"lines": lines}))
        anchors.append(asyncio.run(anchor_once(lines)))
    if not quick:
        diagnostic = run_child("flood", "measure", {"lines": lines, "diagnose": True})
        result.notes.append(f"Diagnostic repeat (stack sampling, not measured): {diagnostic['stalls']}.")
    result.add(Figure("tool start → finished on screen", "s", [r["flood_s"] for r in runs], anchors, "the subprocess alone", at_most(2.0)))
    result.add(Figure("  of which the checkpoints before and after the call", "ms", [r["checkpoint_s"] * 1000 for r in runs]))
    result.add(Figure("p99 loop lag over the turn", "ms", [r["p99_ms"] for r in runs], target=at_most(33)))
    result.add(Figure("RSS growth over the turn", "MB", [r["rss_growth"] for r in runs], target=at_most(20)))
    result.add(Figure("whole turn (two replies of ~1 s each + the tool)", "s", [r["turn_s"] for r in runs]))
    result.notes.append("Garbage collection during the turn: " + "; ".join(r["gc"] for r in runs) + ".")
    result.notes.append("Max loop lag over the turn (ms): " + ", ".join(f"{r['max_ms']:.0f}" for r in runs) + "; CPU over the turn: " + ", ".join(f"{r['cpu']:.0f}%" for r in runs) + ".")
    return result
