"""assistant-tui's benchmark suite: the app measured against its anchors, side by side.

Run ``python -m benchmarks`` (``--quick`` for a short run). Every benchmark runs
headless in its own process, against the loopback fake LLM server (itself in a
separate process so its CPU is not counted), measures the anchor in the same
run, and reports medians and spreads over repeats, the ratio to the anchor, the
target and whether it was met. Results go to ``docs/benchmarks.md`` and
``docs/benchmarks.json``. Benchmarks never fail: they print and write.
"""

BENCHMARKS: tuple[str, ...] = (
    "startup",
    "firehose",
    "keys",
    "history",
    "picker",
    "index",
    "loop",
    "flood",
    "policy",
    "cost",
    "sandbox",
    "findsandbox",
    "compaction",
    "checkpoints",
)
"""Benchmark modules (``benchmarks.<name>``), in the order they run and are reported."""
