"""Where event-loop stalls come from: sample the loop thread's stack while it is stuck.

A heartbeat task on the loop notes the time every few milliseconds; a sampler
thread looks every ``interval`` and, when the heartbeat is older than
``threshold``, records the loop thread's stack. Each sample stands for
``interval`` seconds of stalled time, so counting the functions on the sampled
stacks says where stalled time went (inclusive), file and function.

Benchmarks run it in a separate diagnostic repeat, never in a measured one.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import sys
import sysconfig
import threading
import time
from types import FrameType
from typing import AsyncIterator

from benchmarks import paths
from benchmarks.harness import cancel

_GENERIC = (
    "benchmarks/", "asyncio", "events.py", "base_events.py", "runners.py", "tasks.py", "threading.py",
    "textual/message_pump.py", "textual/_callback.py", "textual/timer.py", "textual/worker.py",
)
"""Dispatch frames on nearly every stack: they say nothing about the cause."""


_STDLIB = sysconfig.get_paths()["stdlib"] + "/"


def _label(frame: FrameType) -> str | None:
    """``file:function`` relative to the checkout, site-packages or the stdlib; None for anything else."""
    code = frame.f_code
    name = getattr(code, "co_qualname", code.co_name)
    filename = code.co_filename
    if filename.startswith(str(paths.REPO) + "/"):
        short = filename[len(str(paths.REPO)) + 1 :]
    elif "site-packages/" in filename:
        short = filename.split("site-packages/", 1)[1]
    elif filename.startswith(_STDLIB):
        short = filename[len(_STDLIB) :]
    else:
        return None
    return f"{short}:{name}"


class StallSampler:
    """Samples the loop thread's stack during stalls longer than ``threshold`` seconds."""

    def __init__(self, threshold: float = 0.030, interval: float = 0.002) -> None:
        self.threshold = threshold
        self.interval = interval
        self.samples: list[tuple[float, tuple[str, ...]]] = []
        self._beat = time.perf_counter()
        self._running = False
        self._task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None
        self._loop_thread = threading.get_ident()

    async def __aenter__(self) -> "StallSampler":
        self._loop_thread = threading.get_ident()
        self._beat = time.perf_counter()
        self._running = True
        self._task = asyncio.get_running_loop().create_task(self._heartbeat())
        self._thread = threading.Thread(target=self._sample, name="stall-sampler", daemon=True)
        self._thread.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._running = False
        await cancel(self._task)
        if self._thread is not None:
            self._thread.join()

    async def _heartbeat(self) -> None:
        while True:
            self._beat = time.perf_counter()
            await asyncio.sleep(0.003)

    def _sample(self) -> None:
        while self._running:
            time.sleep(self.interval)
            if time.perf_counter() - self._beat < self.threshold:
                continue
            frame = sys._current_frames().get(self._loop_thread)
            stack: list[str] = []
            while frame is not None:
                label = _label(frame)
                if label is not None:
                    stack.append(label)
                frame = frame.f_back
            self.samples.append((time.perf_counter(), tuple(stack)))

    def window(self, start: float | None = None, end: float | None = None) -> "StallSampler":
        """A view of the samples taken between ``start`` and ``end`` (perf_counter times)."""
        view = StallSampler(self.threshold, self.interval)
        view.samples = [(at, stack) for at, stack in self.samples if (start is None or at >= start) and (end is None or at <= end)]
        return view

    @property
    def stalled_ms(self) -> float:
        return len(self.samples) * self.interval * 1000

    def top(self, count: int = 6, ours: bool = True) -> list[tuple[str, float]]:
        """Where stalled time went: ``(file:function, share of stalled samples)``, most first.

        ``ours``: the innermost frame of the project's own code (core/, tui/) on each
        stack, i.e. which of our functions was running, itself or through a library.
        Otherwise: the library functions on the stacks (inclusive), dispatch frames left out.
        """
        counter: collections.Counter[str] = collections.Counter()
        for _, stack in self.samples:
            if ours:
                label = next((label for label in stack if label.startswith(("core/", "tui/"))), None)
                if label is not None:
                    counter[label] += 1
                continue
            seen = set()
            for label in stack:
                if not label.startswith(("core/", "tui/")) and label not in seen and not label.startswith(_GENERIC):
                    seen.add(label)
                    counter[label] += 1
        total = len(self.samples) or 1
        return [(label, n / total) for label, n in counter.most_common(count)]

    def describe(self, count: int = 5) -> str:
        """One line for a report: stalled time and where it went."""
        if not self.samples:
            return f"no loop stall over {self.threshold * 1000:.0f} ms was sampled"

        def fmt(items: list[tuple[str, float]]) -> str:
            return ", ".join(f"`{label}` {share:.0%}" for label, share in items) or "none"
        what = f"{self.stalled_ms:.0f} ms stalled over {self.threshold * 1000:.0f} ms" if self.threshold else f"{self.stalled_ms:.0f} ms of loop time sampled"
        return (
            f"{what}; innermost project function on the sampled stacks: "
            f"{fmt(self.top(count, ours=True))}; library functions on them: {fmt(self.top(count, ours=False))}"
        )


@contextlib.asynccontextmanager
async def diagnosis(enabled: bool, threshold: float = 0.030) -> AsyncIterator[StallSampler | None]:
    """A running StallSampler when ``enabled`` (a diagnostic repeat), else None."""
    if not enabled:
        yield None
        return
    async with StallSampler(threshold) as sampler:
        yield sampler
