"""The pieces every benchmark shares: figures and targets, statistics, probes.

A benchmark returns a :class:`BenchResult`: a list of :class:`Figure` (one
measured quantity, its per-repeat values, the anchor's values measured in the
same run, and the target) plus notes. Probes measure what users feel: event
loop lag (:class:`LoopLagProbe`), CPU share (:class:`CpuMeter`) and resident
memory (:func:`rss_mb`).
"""

from __future__ import annotations

import asyncio
import math
import os
import platform
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence


# -- statistics ---------------------------------------------------------------
def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (``pct`` in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def median(values: Sequence[float]) -> float:
    """Median, NaN for no values."""
    return statistics.median(values) if values else math.nan


# -- targets and figures -------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """A target on a figure's median (``of="value"``) or on its ratio to the anchor (``of="ratio"``).

    Combine two with ``&`` (both must hold).
    """

    op: Literal["<=", ">="]
    limit: float
    of: Literal["value", "ratio"] = "value"
    also: "Target | None" = None

    def __and__(self, other: "Target") -> "Target":
        return Target(self.op, self.limit, self.of, other if self.also is None else self.also & other)

    def describe(self, unit: str) -> str:
        sign = "≤" if self.op == "<=" else "≥"
        text = f"{sign} {self.limit:g}× anchor" if self.of == "ratio" else f"{sign} {_number(self.limit)} {unit}".rstrip()
        return text + (f" and {self.also.describe(unit)}" if self.also else "")

    def check(self, value: float, ratio: float | None) -> bool | None:
        subject = ratio if self.of == "ratio" else value
        if subject is None or math.isnan(subject):
            return None
        met = subject <= self.limit if self.op == "<=" else subject >= self.limit
        if self.also is None:
            return met
        other = self.also.check(value, ratio)
        return None if other is None else met and other


def at_most(limit: float, of: Literal["value", "ratio"] = "value") -> Target:
    return Target("<=", limit, of)


def at_least(limit: float, of: Literal["value", "ratio"] = "value") -> Target:
    return Target(">=", limit, of)


@dataclass
class Figure:
    """One measured quantity: a value per repeat, optionally an anchor and a target.

    ``values`` hold one number per repeat (e.g. each repeat's p99); the figure's
    value is their median and its spread their min..max.
    """

    metric: str
    unit: str
    values: list[float]
    anchor_values: list[float] | None = None
    anchor: str = ""
    target: Target | None = None
    note: str = ""

    @property
    def median(self) -> float:
        return median(self.values)

    @property
    def anchor_median(self) -> float | None:
        return median(self.anchor_values) if self.anchor_values else None

    @property
    def ratio(self) -> float | None:
        anchor = self.anchor_median
        if anchor is None or not anchor or math.isnan(anchor) or math.isnan(self.median):
            return None
        return self.median / anchor

    @property
    def met(self) -> bool | None:
        return self.target.check(self.median, self.ratio) if self.target else None

    def to_json(self) -> dict[str, Any]:
        def summary(values: list[float] | None) -> dict[str, Any] | None:
            if not values:
                return None
            return {"median": _round(median(values)), "min": _round(min(values)), "max": _round(max(values)), "n": len(values), "values": [_round(v) for v in values]}

        return {
            "metric": self.metric,
            "unit": self.unit,
            **(summary(self.values) or {"median": None, "n": 0}),
            "anchor": {"name": self.anchor, **(summary(self.anchor_values) or {})} if self.anchor_values else None,
            "ratio": _round(self.ratio) if self.ratio is not None else None,
            "target": self.target.describe(self.unit) if self.target else "",
            "met": self.met,
            "note": self.note,
        }


@dataclass
class BenchResult:
    """What one benchmark produced."""

    name: str
    title: str
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0
    parameters: dict[str, Any] = field(default_factory=dict)

    def add(self, figure: Figure) -> Figure:
        self.figures.append(figure)
        return figure

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "figures": [f.to_json() for f in self.figures],
            "notes": self.notes,
            "error": self.error,
            "seconds": round(self.seconds, 2),
            "parameters": self.parameters,
        }


def _round(value: float | None) -> float | None:
    if value is None or math.isnan(value):
        return None
    return float(f"{value:.4g}")


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"


# -- probes ---------------------------------------------------------------------
async def cancel(task: "asyncio.Task[None] | None") -> None:
    """Cancel a background task and wait until it is gone."""
    if task is None:
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


class LoopLagProbe:
    """Measures event-loop lag: a task sleeping ``interval`` records how late it wakes.

    Samples are ``(wake time, lag seconds)`` so a benchmark can look at a window.
    """

    def __init__(self, interval: float = 0.010) -> None:
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> "LoopLagProbe":
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    async def _run(self) -> None:
        interval = self.interval
        clock = time.perf_counter
        while True:
            before = clock()
            await asyncio.sleep(interval)
            after = clock()
            self.samples.append((after, max(0.0, after - before - interval)))

    async def stop(self) -> None:
        await cancel(self._task)
        self._task = None

    def lags(self, start: float | None = None, end: float | None = None) -> list[float]:
        """Lags (seconds) of wake-ups between ``start`` and ``end`` (perf_counter times)."""
        return [lag for at, lag in self.samples if (start is None or at >= start) and (end is None or at <= end)]


class CpuMeter:
    """Process CPU time (all threads) over wall time, as a percentage of one core."""

    def __init__(self) -> None:
        self._cpu = 0.0
        self._wall = 0.0

    def start(self) -> "CpuMeter":
        self._cpu = time.process_time()
        self._wall = time.perf_counter()
        return self

    def percent(self) -> float:
        wall = time.perf_counter() - self._wall
        return 100.0 * (time.process_time() - self._cpu) / wall if wall > 0 else math.nan


def rss_mb() -> float:
    """This process's resident set size in MB (from /proc; NaN where unavailable)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            resident = int(fh.read().split()[1])
        return resident * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return math.nan


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MB."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


async def wait_until(predicate: Callable[[], bool], timeout: float, step: float = 0.005) -> bool:
    """Poll ``predicate`` on the event loop until it is true or ``timeout`` passes."""
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(step)
    return True


# -- the machine --------------------------------------------------------------------
def machine_info() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            mem_gb = int(fh.readline().split()[1]) / 1e6
    except (OSError, ValueError, IndexError):
        mem_gb = math.nan
    versions: dict[str, str] = {}
    from importlib import metadata

    for package in ("textual", "rich", "anthropic", "aider-chat"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "absent"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(mem_gb, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": versions,
        "commit": _git_commit(),
    }


def _git_commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=10)
        return done.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


class GcWatch:
    """Records CPython's cyclic garbage collections (generation, pause) while active.

    Full (generation 2) collections walk every tracked object, so on a large heap
    they pause the event loop for tens to hundreds of milliseconds.
    """

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float, float]] = []
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            now = time.perf_counter()
            self.pauses.append((info["generation"], now, now - self._started))

    def start(self) -> "GcWatch":
        import gc

        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)
        return self

    def stop(self) -> None:
        import gc

        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def __enter__(self) -> "GcWatch":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def full(self, start: float | None = None, end: float | None = None) -> list[float]:
        """Pauses (ms) of full collections between ``start`` and ``end``."""
        return [d * 1000 for g, at, d in self.pauses if g == 2 and (start is None or at >= start) and (end is None or at <= end)]

    def describe(self, start: float | None = None, end: float | None = None) -> str:
        import gc

        full = self.full(start, end)
        tracked = len(gc.get_objects())
        if not full:
            return f"no full GC collection ({tracked:,} tracked objects)"
        return f"{len(full)} full GC collections, longest {max(full):.0f} ms, {sum(full):.0f} ms in all ({tracked:,} tracked objects)"
