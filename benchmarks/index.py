"""6. Index: time to first results and to the full index of 80,000 files, against ``git ls-files``."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

from benchmarks import paths
from benchmarks.harness import BenchResult, Figure, at_most

TITLE = "File index"
METHOD = """\
A git repository of empty files at the 80,000 synthetic kernel-like paths,
every file tracked (built once and cached under the benchmark cache directory).
App: `MemorySystem(root).start_indexing()`, what the app does at start-up: a
background thread runs `FileIndex.build` (tracked files from `git ls-files
--cached`, checked for deletion with one listing per directory while git walks
for untracked-not-ignored files), publishes batches to the picker's
`FuzzyMatcher`, then reads top-level symbols for relevance. First
results = the picker's matcher holds paths; full index = the first complete listing
is over (the complete list and matcher); background done = the thread has also
finished the relevance lexicon. Meanwhile the event loop sleeps 1 ms at a time
and the largest overshoot is the worst loop stall. `FileIndex.build` alone (in a
thread) is reported too. Anchors: `git ls-files -z` (tracked files, the first
results' source) and `git ls-files -z --cached --others --exclude-standard` (the
same set as the full index), each a subprocess timed to exit."""

VERSION = 1


def ensure_repo(count: int) -> Path:
    """A cached git repository with ``count`` tracked empty files at synthetic paths."""
    from benchmarks.synthetic import synthetic_paths

    root = paths.CACHE / f"repo-{count}-v{VERSION}"
    done = root.with_name(root.name + ".done")
    if done.exists() and root.is_dir():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    made: set[str] = set()
    for rel in synthetic_paths(count, seed=0):
        parent = os.path.dirname(rel)
        if parent and parent not in made:
            os.makedirs(root / parent, exist_ok=True)
            made.add(parent)
        (root / rel).touch()
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid", GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "synthetic tree"], cwd=root, check=True, env=env)
    done.touch()
    return root


async def _watch(until: Callable[[], bool], marks: dict[str, Callable[[], bool]], timeout: float = 120.0) -> tuple[dict[str, float], float]:
    """Sleep 1 ms at a time until ``until()``; when each mark first holds; and the worst overshoot (ms)."""
    began = time.perf_counter()
    seen: dict[str, float] = {}
    worst = 0.0
    while True:
        before = time.perf_counter()
        await asyncio.sleep(0.001)
        after = time.perf_counter()
        worst = max(worst, after - before - 0.001)
        for name, check in marks.items():
            if name not in seen and check():
                seen[name] = (after - began) * 1000
        if until() or after - began > timeout:
            return seen, worst * 1000


async def memory_system_once(root: Path) -> dict[str, float]:
    """Index as the app does; times in ms and the worst loop stall."""
    from core.memory.system import MemorySystem
    from tui import runtime

    began = time.perf_counter()
    memory = MemorySystem(root)
    runtime.tune_memory(memory)  # as the app's FileSource does
    memory.start_indexing()
    thread = memory._thread
    seen, stall = await _watch(
        lambda: thread is None or not thread.is_alive(),
        {"first": lambda: len(memory.matcher) > 0, "full": memory._ready.is_set},
    )
    done = (time.perf_counter() - began) * 1000
    if not memory.index.paths:
        raise RuntimeError("the index found no files")
    return {"first": seen.get("first", float("nan")), "full": seen.get("full", float("nan")), "done": done, "stall": stall, "files": float(len(memory.index.paths))}


async def file_index_once(root: Path) -> dict[str, float]:
    """FileIndex.build alone in a thread: first batch, full list, worst loop stall."""
    from core.memory.index import FileIndex

    index = FileIndex(root)
    state: dict[str, bool] = {"batch": False, "done": False}

    def build() -> None:
        index.build(on_batch=lambda batch: state.__setitem__("batch", True))
        state["done"] = True

    thread = threading.Thread(target=build, daemon=True)
    thread.start()
    seen, stall = await _watch(lambda: state["done"], {"first": lambda: state["batch"], "full": lambda: state["done"]})
    thread.join()
    return {"first": seen.get("first", float("nan")), "full": seen.get("full", float("nan")), "stall": stall}


def git_once(root: Path, *extra: str) -> float:
    began = time.perf_counter()
    subprocess.run(["git", "ls-files", "-z", *extra], cwd=root, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - began) * 1000


def run(quick: bool = False) -> BenchResult:
    count = 5_000 if quick else 80_000
    repeats = 2 if quick else 5
    began = time.perf_counter()
    root = ensure_repo(count)
    setup = time.perf_counter() - began
    result = BenchResult("index", TITLE, parameters={"files": count, "repeats": repeats})
    app_runs: list[dict[str, float]] = []
    alone_runs: list[dict[str, float]] = []
    tracked: list[float] = []
    everything: list[float] = []
    git_once(root)  # warm the page cache for everyone
    for _ in range(repeats):
        app_runs.append(asyncio.run(memory_system_once(root)))
        alone_runs.append(asyncio.run(file_index_once(root)))
        tracked.append(git_once(root))
        everything.append(git_once(root, "--cached", "--others", "--exclude-standard"))
    result.add(Figure("first results (MemorySystem)", "ms", [r["first"] for r in app_runs], tracked, "git ls-files", at_most(100)))
    result.add(Figure("full index (MemorySystem)", "ms", [r["full"] for r in app_runs], everything, "git ls-files --cached --others --exclude-standard", at_most(300)))
    result.add(Figure("worst loop stall while indexing (MemorySystem)", "ms", [r["stall"] for r in app_runs], target=at_most(16)))
    result.add(Figure("background work done (MemorySystem, incl. relevance lexicon)", "ms", [r["done"] for r in app_runs]))
    result.add(Figure("first batch (FileIndex.build alone)", "ms", [r["first"] for r in alone_runs], tracked, "git ls-files"))
    result.add(Figure("full list (FileIndex.build alone)", "ms", [r["full"] for r in alone_runs], everything, "git ls-files --cached --others --exclude-standard"))
    result.add(Figure("worst loop stall (FileIndex.build alone)", "ms", [r["stall"] for r in alone_runs], target=at_most(16)))
    result.notes.append(f"Files indexed: {app_runs[-1]['files']:,.0f}. Repository {'built' if setup > 2 else 'reused from the cache'} in {setup:.1f} s ({root}).")
    return result
