"""3. Keys under load: a key every 50 ms into the prompt while a reply streams at 60, 250 and 1,000 tokens/s."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.child import run_child
from benchmarks.apphost import SIZE, PaintRecorder, bench_settings, build_app, send_key
from benchmarks.content import text_for
from benchmarks.harness import BenchResult, CpuMeter, Figure, GcWatch, at_most, percentile, wait_until
from benchmarks.server import ReplySpec, ServerProcess
from benchmarks.stalls import diagnosis

TITLE = "Keys under load"
METHOD = """\
A reply streams through the real provider and handler into the chat at a paced
rate (the fake server sleeps between 12-character deltas). Once text is on
screen, a key (`x`) is delivered to the focused prompt every 50 ms the way the
terminal driver delivers keys (no waiting for the app to settle). Keypress to
frame = from delivery to the first frame painted with the character in the
prompt. CPU = process CPU time (all threads) ÷ wall time over the typing
window, in % of one core; the fake server runs in another process."""

RATES = (60, 250, 1000)


class KeyLatency:
    """Matches painted frames to pending keypresses by the prompt's length."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.pending: list[tuple[float, int]] = []
        self.latencies: list[float] = []
        self.base = 0
        self.sent = 0

    def press(self) -> None:
        self.sent += 1
        self.pending.append((time.perf_counter(), self.base + self.sent))
        send_key(self.app, "x", "x")

    def on_frame(self, when: float) -> None:
        if not self.pending:
            return
        shown = len(self.app.prompt.text)
        while self.pending and self.pending[0][1] <= shown:
            pressed, _ = self.pending.pop(0)
            self.latencies.append(when - pressed)


async def once(server: ServerProcess, rate: int, seconds: float, project: Path, diagnose: bool = False) -> dict[str, Any]:
    """Stream at ``rate`` tokens/s and type for ``seconds``; p99 keypress-to-frame (ms) and CPU (%).

    With ``diagnose``, also where the stalls of the typing window came from (slower: not a measurement).
    """
    server.script(ReplySpec(text=text_for(rate, seconds + 2.0, seed=0), chunk=12, tokens_per_second=rate))
    settings = bench_settings(project, server.url)
    app = build_app(settings)
    paints = PaintRecorder(app)
    keys = KeyLatency(app)
    paints.listeners.append(keys.on_frame)
    with GcWatch() as gcwatch:
        measured = await _typing(app, paints, keys, seconds, diagnose, gcwatch)
    return measured | {"rate": rate}


async def _typing(app: Any, paints: PaintRecorder, keys: KeyLatency, seconds: float, diagnose: bool, gcwatch: GcWatch) -> dict[str, Any]:
    """Start the reply, type while it streams, and measure."""
    async with app.run_test(size=SIZE) as pilot, diagnosis(diagnose) as sampler:
        await pilot.pause()
        await app.submit("Stream something long.")
        if not await wait_until(lambda: app.conversation.renderer is not None and app.conversation.renderer.current is not None and bool(app.conversation.renderer.current.text), timeout=30):
            raise RuntimeError("the reply never started streaming")
        await asyncio.sleep(0.2)
        keys.base = len(app.prompt.text)
        meter = CpuMeter().start()
        start = time.perf_counter()
        presses = int(seconds / 0.05)
        for n in range(presses):
            keys.press()
            await asyncio.sleep(max(0.0, start + (n + 1) * 0.05 - time.perf_counter()))
        cpu = meter.percent()
        stalls = sampler.window(start, time.perf_counter()).describe() if sampler else ""
        collections = gcwatch.describe(start, time.perf_counter())
        streaming = app.turn_running
        await wait_until(lambda: not keys.pending, timeout=5)
        app.action_cancel_turn()
        await wait_until(lambda: not app.turn_running, timeout=10)
        await pilot.pause()
    if not streaming:
        raise RuntimeError("the reply finished before the typing window ended")
    if len(keys.latencies) < presses:
        raise RuntimeError(f"only {len(keys.latencies)} of {presses} keys reached the screen")
    lat_ms = [x * 1000 for x in keys.latencies]
    return {"p99_ms": percentile(lat_ms, 99), "p50_ms": percentile(lat_ms, 50), "cpu": cpu, "stalls": stalls, "gc": collections}


def measure(rate: int, seconds: float, diagnose: bool = False) -> dict[str, Any]:
    """One rate in this (fresh) process: each app instance gets a process of its own."""

    async def go() -> dict[str, Any]:
        with ServerProcess() as server, tempfile.TemporaryDirectory(prefix="atui-keys-") as tmp:
            return await once(server, rate, seconds, Path(tmp), diagnose)

    return asyncio.run(go())


def run(quick: bool = False) -> BenchResult:
    seconds = 1.0 if quick else 6.0
    repeats = 1 if quick else 3
    result = BenchResult("keys", TITLE, parameters={"rates": "60, 250, 1000 tokens/s", "typing": f"{seconds:g} s per repeat, a key every 50 ms", "repeats": repeats})
    runs: dict[int, list[dict[str, Any]]] = {rate: [] for rate in RATES}
    for _ in range(repeats):
        for rate in RATES:
            runs[rate].append(run_child("keys", "measure", {"rate": rate, "seconds": seconds}))
    if not quick:
        diagnostic = run_child("keys", "measure", {"rate": 250, "seconds": seconds, "diagnose": True})
        result.notes.append(f"Diagnostic repeat at 250 tokens/s (stack sampling, not measured): {diagnostic['stalls']}.")
    for rate in RATES:
        target = at_most(33) if rate == 250 else None
        result.add(Figure(f"p99 keypress → frame @ {rate} tok/s", "ms", [r["p99_ms"] for r in runs[rate]], target=target))
    for rate in RATES:
        target = at_most(20) if rate == 60 else None
        result.add(Figure(f"CPU while typing @ {rate} tok/s", "% of a core", [r["cpu"] for r in runs[rate]], target=target))
    result.notes.append("Garbage collection while typing (first repeat): " + "; ".join(f"{rate} tokens/s: {runs[rate][0]['gc']}" for rate in RATES) + ".")
    result.notes.append("Median keypress → frame (ms) per rate: " + ", ".join(f"{rate}: {sorted(r['p50_ms'] for r in runs[rate])[len(runs[rate]) // 2]:.1f}" for rate in RATES) + ".")
    return result
