"""When the garbage collector may pause the app: after start-up and between turns, not while a reply streams.

A full collection scans every tracked object: 100-300 ms with the few hundred
thousand objects of start-up (modules, classes, the SDK, a resumed session),
paid in the middle of a reply whenever the young objects of streaming tipped
it over. ``gc.freeze()`` moves the objects alive now out of the collector's
sight, so later full collections scan only what came after.

Frozen objects that die later in a cycle (a pruned chat widget) are not
reclaimed until they are unfrozen, so every :data:`UNFREEZE_EVERY` turns the
pause after a turn is one full collection of everything before freezing again.
"""

from __future__ import annotations

import gc
import logging
import sys
import time
from typing import Any

log = logging.getLogger(__name__)

UNFREEZE_EVERY = 25
"""Turns between full collections of the frozen objects too (what frozen objects leaked is reclaimed then)."""


FULL_COLLECTION_EVERY = 100
"""Middle-generation collections between full ones (CPython's default is 10)."""


def freeze() -> None:
    """Freeze what is alive now (start-up done, a session resumed); collects nothing, so it costs nothing."""
    gc.freeze()


class HeapPolicy:
    """Collects once a turn is over (the answer is on screen, nobody waits), then freezes the survivors."""

    def __init__(self) -> None:
        self.turns = 0
        young, middle, _ = gc.get_threshold()
        # Streaming keeps promoting render caches to the old generation, which set off a
        # full collection every few hundred ms; the collection between turns does that job.
        gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)

    def turn_over(self) -> None:
        """A turn ended: collect what it left (the unfrozen objects only, most turns), then freeze."""
        self.turns += 1
        began = time.perf_counter()
        if self.turns % UNFREEZE_EVERY == 0:
            gc.unfreeze()
        gc.collect()
        gc.freeze()
        log.debug("turn %d: gc took %.1f ms, %d objects frozen", self.turns, (time.perf_counter() - began) * 1000, gc.get_freeze_count())


def _load_trim() -> Any:
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to trim
        return None


_malloc_trim = _load_trim() if sys.platform.startswith("linux") else None


def release_free_memory() -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim``).

    A tool that returns megabytes (a build log) passes through a few transient
    copies (the decoded output, the transcript line, the request body); freed,
    they stayed in the process's heap: 24 MB of resident memory for a
    100,000-line result that nothing kept.
    """
    if _malloc_trim is not None:
        _malloc_trim(0)
