"""9. Sandbox: start-up overhead of a sandboxed command, and the event loop while one prints 100k lines."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.apphost import bench_settings
from benchmarks.harness import BenchResult, Figure, at_most, percentile
from benchmarks.server import ReplySpec, ServerProcess

TITLE = "Sandbox"
METHOD = """\
Start-up: wall time of `core.sandbox.run_command(["true"])` (bubblewrap with every
namespace, the mounts, the secret scan of a small project, a pids cgroup when the
machine has one, output pipes and the kill bookkeeping), per run, against the
anchor: the same `true` started bare with `asyncio.create_subprocess_exec` and
awaited. The overhead figure is the difference of the medians (target ≤ 50 ms).
Loop lag: one user turn of the real handler (`core.app.Application` against the
fake server) in which the model calls `runCommand` with `seq 1 100000` in the
sandbox (command_approval=sandbox-auto); the turn's events are consumed (every
`ToolOutputChunk` included) while a ticker measures how late a 5 ms timer fires,
counted from the call's start to its end (the model calls around it are measured elsewhere).
Anchor: the same ticker while the bare command's output is read by
`asyncio.subprocess` (`communicate`)."""

LINES = 100_000


def _percentile(values: list[float], q: float) -> float:
    return percentile(values, q) if values else 0.0


async def _lags(work: Any, window: list[float] | None = None) -> list[float]:
    """Lags of a 5 ms timer while ``work`` runs (only those inside ``window`` [start, end], when given)."""
    lags: list[tuple[float, float]] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            began = time.perf_counter()
            await asyncio.sleep(0.005)
            lags.append((began, (time.perf_counter() - began - 0.005) * 1000))

    tick = asyncio.create_task(ticker())
    try:
        await work
    finally:
        done.set()
        await tick
    if window:
        return [lag for at, lag in lags if window[0] <= at <= window[-1]]
    return [lag for _, lag in lags]


async def _startup(project: Path, runs: int) -> tuple[list[float], list[float]]:
    from core.sandbox import check_sandbox, run_command

    status = check_sandbox(project)
    if not status.available:
        raise RuntimeError(status.problem)
    sandboxed, bare = [], []
    for _ in range(runs):
        began = time.perf_counter()
        result = await run_command(["true"], project_root=project, bwrap=status.bwrap, rlimit_nproc=status.process_limit == "rlimit")
        sandboxed.append((time.perf_counter() - began) * 1000)
        assert result.ok, result
        began = time.perf_counter()
        proc = await asyncio.create_subprocess_exec("true")
        await proc.wait()
        bare.append((time.perf_counter() - began) * 1000)
    return sandboxed, bare


async def _turn(server: ServerProcess, project: Path, lines: int) -> tuple[list[float], int]:
    from core.app import Application

    application = Application(bench_settings(project, server.url, command_approval="sandbox-auto"))
    server.script(ReplySpec(tools=[{"name": "runCommand", "input": {"command": ["seq", "1", str(lines)]}}]), ReplySpec(text="Done."))
    chunks = 0
    window: list[float] = []

    async def consume() -> None:
        nonlocal chunks
        async for event in application.handler.stream_query("Count."):
            if event.kind in ("tool_call_started", "tool_call_finished"):
                window.append(time.perf_counter())
            if event.kind == "tool_output":
                chunks += 1
            elif event.kind == "turn_failed":
                raise RuntimeError(event.message)

    return await _lags(consume(), window), chunks


async def _bare(lines: int) -> list[float]:
    async def work() -> None:
        proc = await asyncio.create_subprocess_exec("seq", "1", str(lines), stdout=asyncio.subprocess.PIPE)
        await proc.communicate()

    return await _lags(work())


async def _run(quick: bool) -> BenchResult:
    runs = 5 if quick else 30
    repeats = 1 if quick else 5
    lines = 10_000 if quick else LINES
    result = BenchResult("sandbox", TITLE, parameters={"start-up runs": runs, "lines": lines, "repeats": repeats})
    with tempfile.TemporaryDirectory(prefix="atui-sandbox-") as tmp, ServerProcess() as server:
        project = Path(tmp)
        (project / "app.py").write_text("print('hi')\n")
        (project / ".env").write_text("TOKEN=x\n")
        sandboxed, bare = await _startup(project, runs)
        result.add(Figure("sandboxed `true`, start to exit", "ms", sandboxed, bare, "bare `true`"))
        overhead = [s - b for s, b in zip(sorted(sandboxed), sorted(bare))]
        result.add(Figure("overhead over bare", "ms", overhead, target=at_most(50.0)))
        from core.sandbox import check_sandbox, run_command

        status = check_sandbox(project)
        alone, alone_anchor = [], []
        for _ in range(repeats):
            work = run_command(["seq", "1", str(lines)], project_root=project, bwrap=status.bwrap, on_output=lambda text, stream: None,
                               rlimit_nproc=status.process_limit == "rlimit")
            alone.append(_percentile(await _lags(work), 99))
            alone_anchor.append(_percentile(await _bare(lines), 99))
        result.add(Figure(f"loop lag p99 during a sandboxed {lines:,}-line command (runner alone)", "ms", alone, alone_anchor,
                          "bare command read by asyncio", target=at_most(33.0)))
        p99s, anchors, counts = [], [], []
        await _turn(server, project, 100)  # warm-up: SDK import, first connection, file index
        for _ in range(repeats):
            lags, chunks = await _turn(server, project, lines)
            p99s.append(_percentile(lags, 99))
            counts.append(chunks)
            anchors.append(_percentile(await _bare(lines), 99))
        result.add(Figure(f"loop lag p99 during a sandboxed {lines:,}-line command (handler turn)", "ms", p99s, anchors,
                          "bare command read by asyncio", target=at_most(33.0)))
        result.add(Figure("live-output events per run", "events", [float(c) for c in counts]))
    return result


def run(quick: bool = False) -> BenchResult:
    return asyncio.run(_run(quick))
