"""Performance probe for the picker engine (not a test; pytest does not collect it).

Run: ``.venv/bin/python -m tests.memory.perf_probe [--paths 80000] [--repeat 5]``

Prints, for a synthetic kernel-like tree: the matcher build time, the
per-keystroke latency (p50/p99) of queries typed one character at a time, the
time of ``fzf --filter`` on the same list when fzf is installed, and the
FileIndex time over a real git repository of the same size (``--git``).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.memory.fuzzy import FuzzyMatcher
from benchmarks.synthetic import synthetic_paths

QUERIES = ("e", "ee", "drvnet", "ixgbemain", "kconfig", "mm/page", "pgalloc", "Makefile", "xz")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def probe_matcher(paths: list[str], repeat: int) -> list[float]:
    """Time every keystroke of every query; returns all latencies in ms."""
    started = time.perf_counter()
    matcher = FuzzyMatcher(paths)
    print(f"matcher build (sort, texts, bitmaps): {(time.perf_counter() - started) * 1000:.1f} ms for {len(paths)} paths")
    everything: list[float] = []
    cpu_all: list[float] = []
    print("per keystroke, wall clock and (CPU of this thread, which load on the machine does not inflate)")
    print(f"{'query':12} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'cpu p50':>8} {'cpu p99':>8}  top match")
    for query in QUERIES:
        times: list[float] = []
        cpu: list[float] = []
        top = ""
        for _ in range(repeat):
            matcher._last = None  # each repetition types the query afresh
            for end in range(1, len(query) + 1):
                t0, c0 = time.perf_counter(), time.thread_time()
                result = matcher.search(query[:end], 50)
                cpu.append((time.thread_time() - c0) * 1000)
                times.append((time.perf_counter() - t0) * 1000)
                top = result[0].path if result else "-"
        everything += times
        cpu_all += cpu
        print(
            f"{query!r:12} {statistics.median(times):8.2f} {_pct(times, 0.99):8.2f} {max(times):8.2f}"
            f" {statistics.median(cpu):8.2f} {_pct(cpu, 0.99):8.2f}  {top}"
        )
    print(
        f"{'all':12} {statistics.median(everything):8.2f} {_pct(everything, 0.99):8.2f} {max(everything):8.2f}"
        f" {statistics.median(cpu_all):8.2f} {_pct(cpu_all, 0.99):8.2f}"
    )
    return everything


def probe_fzf(paths: list[str]) -> None:
    """Time ``fzf --filter`` (one process per full query, input on stdin)."""
    fzf = shutil.which("fzf")
    if fzf is None:
        print("fzf: not installed, skipped")
        return
    data = "\n".join(paths).encode()
    version = subprocess.run([fzf, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"fzf {version} --filter (whole list per query, process start included):")
    for query in QUERIES:
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            out = subprocess.run([fzf, "--filter", query], input=data, capture_output=True).stdout
            runs.append((time.perf_counter() - t0) * 1000)
        first = out.split(b"\n", 1)[0].decode() if out else "-"
        print(f"  {query!r:12} {min(runs):8.2f} ms  top: {first}")


def probe_index(n: int) -> None:
    """Build a real git repository of n files and time FileIndex on it."""
    from core.memory.index import FileIndex

    paths = synthetic_paths(n)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel in paths:
            file = root / rel
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(b"")
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        for label in ("git (tracked)", "git (tracked)"):
            t0 = time.perf_counter()
            subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root, capture_output=True, check=True)
            raw = (time.perf_counter() - t0) * 1000
            index = FileIndex(root)
            t0 = time.perf_counter()
            index.build()
            print(f"index {label}: {len(index.paths)} files in {(time.perf_counter() - t0) * 1000:.1f} ms (git ls-files alone {raw:.1f} ms)")
        shutil.rmtree(root / ".git")
        index = FileIndex(root)
        t0 = time.perf_counter()
        index.build()
        print(f"index (walk, no git): {len(index.paths)} files in {(time.perf_counter() - t0) * 1000:.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--paths", type=int, default=80_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--git", action="store_true", help="also time FileIndex on a real repository")
    args = parser.parse_args(argv)
    paths = synthetic_paths(args.paths)
    print(f"{len(paths)} paths, mean length {statistics.mean(map(len, paths)):.1f}")
    probe_matcher(paths, args.repeat)
    probe_fzf(paths)
    if args.git:
        probe_index(args.paths)
    return 0


if __name__ == "__main__":
    sys.exit(main())
