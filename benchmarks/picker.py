"""5. Picker: 80,000 paths, queries typed a character at a time, against ``fzf --filter``."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.child import run_child
from benchmarks.apphost import SIZE, PaintRecorder, bench_settings, build_app, send_key
from benchmarks.harness import BenchResult, Figure, GcWatch, at_most, percentile, wait_until

TITLE = "File picker"
METHOD = """\
80,000 kernel-like paths from `benchmarks.synthetic.synthetic_paths` (the
same list for everyone). Queries are typed one character at a time; each
keystroke is one sample. In the app: the app is opened on the cached git
repository of those paths (see the index benchmark) and, once it has listed
them, the file picker (Ctrl+O) is opened and each key is delivered like a
terminal key; latency = key to
the first frame painted after the picker computed the top 50 for the new text
(also reported: key to the top 50 computed, before that frame; Textual paints at
most 60 frames a second, so a frame can add up to ~17 ms; and the event loop's
CPU time from the key to that frame, which load on the machine barely moves).
The next key goes once that frame is painted (no queueing). Matcher alone:
`FuzzyMatcher(paths).search(query, 50)` per prefix, as the picker would call it.
Anchor: `fzf --filter PREFIX` on the same list (stdin) per prefix, one process
per keystroke (fzf's non-interactive mode: it reads the list every time)."""

QUERIES = ("ixgbemain", "page_alloc", "kernel/sched", "ext4inode", "Kconfig", "mlx5core", "drvnetintel", "i915gem")
QUICK_QUERIES = ("ixgbemain", "kernel/sched")


def _prefixes(queries: tuple[str, ...]) -> list[str]:
    return [query[: n + 1] for query in queries for n in range(len(query))]


def fzf_latencies(paths: list[str], queries: tuple[str, ...]) -> list[float] | None:
    """Milliseconds per keystroke for ``fzf --filter``; None when fzf is not installed."""
    fzf = shutil.which("fzf")
    if fzf is None:
        return None
    data = ("\n".join(paths) + "\n").encode()
    out: list[float] = []
    for prefix in _prefixes(queries):
        began = time.perf_counter()
        subprocess.run([fzf, "--filter", prefix], input=data, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
        out.append((time.perf_counter() - began) * 1000)
    return out


def matcher_latencies(paths: list[str], queries: tuple[str, ...]) -> tuple[list[float], float]:
    """Milliseconds per keystroke for FuzzyMatcher.search, and the matcher's build time (ms)."""
    from core.memory.fuzzy import FuzzyMatcher

    began = time.perf_counter()
    matcher = FuzzyMatcher(paths)
    build = (time.perf_counter() - began) * 1000
    out: list[float] = []
    for query in queries:
        matcher.search("", 50)
        for n in range(len(query)):
            began = time.perf_counter()
            matcher.search(query[: n + 1], 50)
            out.append((time.perf_counter() - began) * 1000)
    return out, build


async def app_latencies(root: Path, count: int, queries: tuple[str, ...], gcwatch: GcWatch | None = None) -> tuple[list[float], list[float], list[float]]:
    """Milliseconds per keystroke in the app's file picker: to the frame, to the results computed, and the loop's CPU time to the frame."""
    from tui.screens.picker import FilePickerScreen

    settings = bench_settings(root, "http://127.0.0.1:9")
    app = build_app(settings)
    paints = PaintRecorder(app)
    out: list[float] = []
    computed_ms: list[float] = []
    cpu_ms: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        if not await wait_until(lambda: _listed(app) >= count, timeout=120):
            raise RuntimeError(f"the app listed {_listed(app)} of {count} files")
        await asyncio.sleep(0.3)
        if gcwatch is not None:
            gcwatch.start()
        for query in queries:
            await app.action_pick_files()
            await wait_until(lambda: isinstance(app.screen, FilePickerScreen), timeout=5)
            screen: Any = app.screen
            await pilot.pause()
            shown: dict[str, Any] = {"query": "", "at": 0.0}
            original = screen.refresh_results

            def refresh_results(text: str, _original: Any = original, _shown: dict[str, Any] = shown) -> None:
                _original(text)
                _shown["query"], _shown["at"] = text, time.perf_counter()

            screen.refresh_results = refresh_results
            for n in range(len(query)):
                prefix = query[: n + 1]
                char = query[n]
                key = char if char.isalnum() else {"/": "slash", "_": "underscore", "-": "minus", ".": "full_stop"}[char]
                began, began_cpu = time.perf_counter(), time.thread_time()
                send_key(app, key, char)
                if not await wait_until(lambda p=prefix: shown["query"] == p, timeout=30, step=0.0005):
                    raise RuntimeError(f"the picker never showed results for {prefix!r}")
                computed = shown["at"]
                computed_ms.append((computed - began) * 1000)
                await wait_until(lambda c=computed: paints.first_after(c) is not None, timeout=5, step=0.0005)
                out.append(((paints.first_after(computed) or computed) - began) * 1000)
                cpu_ms.append((time.thread_time() - began_cpu) * 1000)
                await asyncio.sleep(0.02)
            screen.dismiss([])
            await pilot.pause()
        if gcwatch is not None:
            gcwatch.stop()
    return out, computed_ms, cpu_ms


def _listed(app: Any) -> int:
    """How many files the app can search now (its file source, or an older app's list)."""
    files = getattr(app, "files", None)
    if files is not None and hasattr(files, "count"):
        return int(files.count)
    return len(getattr(app, "project_files", ()))


def measure_app(count: int, quick: bool) -> dict[str, Any]:
    """The app's picker in this (fresh) process: per-keystroke latencies and the GC pauses meanwhile."""
    from benchmarks.index import ensure_repo

    gcwatch = GcWatch()
    to_frame, computed, cpu = asyncio.run(app_latencies(ensure_repo(count), count, QUICK_QUERIES if quick else QUERIES, gcwatch))
    return {"to_frame": to_frame, "computed": computed, "cpu": cpu, "gc": gcwatch.describe()}


def run(quick: bool = False) -> BenchResult:
    from benchmarks.synthetic import synthetic_paths

    from benchmarks.index import ensure_repo

    count = 5_000 if quick else 80_000
    queries = QUICK_QUERIES if quick else QUERIES
    repeats = 1 if quick else 3
    paths = synthetic_paths(count, seed=0)
    ensure_repo(count)
    result = BenchResult("picker", TITLE, parameters={"paths": count, "queries": ", ".join(queries), "keystrokes per repeat": len(_prefixes(queries)), "repeats": repeats})
    app_runs: list[list[float]] = []
    computed_runs: list[list[float]] = []
    cpu_runs: list[list[float]] = []
    matcher_runs: list[list[float]] = []
    fzf_runs: list[list[float]] = []
    builds: list[float] = []
    gc_notes: list[str] = []
    for _ in range(repeats):
        measured = run_child("picker", "measure_app", {"count": count, "quick": quick})
        app_runs.append(measured["to_frame"])
        computed_runs.append(measured["computed"])
        cpu_runs.append(measured["cpu"])
        gc_notes.append(measured["gc"])
        latencies, build = matcher_latencies(paths, queries)
        matcher_runs.append(latencies)
        builds.append(build)
        fzf = fzf_latencies(paths, queries)
        if fzf is not None:
            fzf_runs.append(fzf)
    result.notes.append("Garbage collection while typing in the picker, per repeat: " + "; ".join(gc_notes) + ".")
    anchor = "fzf --filter" if fzf_runs else ""
    if not fzf_runs:
        result.notes.append("fzf is not installed, so the anchor was skipped (install it, e.g. `apt-get install fzf`).")

    def per_repeat(runs: list[list[float]], pct: float) -> list[float] | None:
        return [percentile(r, pct) for r in runs] if runs else None

    never_slower = at_most(1.0, of="ratio")
    result.add(Figure("p50 keystroke → top 50 on screen (picker)", "ms", per_repeat(app_runs, 50) or [], per_repeat(fzf_runs, 50), anchor, never_slower if fzf_runs else None))
    result.add(Figure("p99 keystroke → top 50 on screen (picker)", "ms", per_repeat(app_runs, 99) or [], per_repeat(fzf_runs, 99), anchor, at_most(16) & never_slower if fzf_runs else at_most(16)))
    result.add(Figure("p50 keystroke → top 50 computed (picker, before the frame)", "ms", per_repeat(computed_runs, 50) or [], per_repeat(fzf_runs, 50), anchor))
    result.add(Figure("p99 keystroke → top 50 computed (picker, before the frame)", "ms", per_repeat(computed_runs, 99) or [], per_repeat(fzf_runs, 99), anchor))
    result.add(Figure("p50 event-loop CPU per keystroke, key → frame (picker)", "ms", per_repeat(cpu_runs, 50) or []))
    result.add(Figure("p99 event-loop CPU per keystroke, key → frame (picker)", "ms", per_repeat(cpu_runs, 99) or []))
    result.add(Figure("p50 FuzzyMatcher.search (matcher alone)", "ms", per_repeat(matcher_runs, 50) or [], per_repeat(fzf_runs, 50), anchor, never_slower if fzf_runs else None))
    result.add(Figure("p99 FuzzyMatcher.search (matcher alone)", "ms", per_repeat(matcher_runs, 99) or [], per_repeat(fzf_runs, 99), anchor, at_most(16) & never_slower if fzf_runs else at_most(16)))
    result.add(Figure(f"FuzzyMatcher build ({count:,} paths)", "ms", builds))
    return result
