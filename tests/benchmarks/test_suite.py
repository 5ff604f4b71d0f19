"""The benchmark suite runs end to end in --quick mode and every benchmark produces its figures.

This checks that each figure has a number, never what the number is: benchmarks
do not fail CI over speed.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import BENCHMARKS

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHMARKS)
def test_quick_suite_produces_every_figure(tmp_path: Path, name: str) -> None:
    """One benchmark a test (the suite's ``--only``), so the test processes share the suite's two minutes."""
    output = tmp_path / "report" / "benchmarks.md"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", name, "--output", str(output)],
        cwd=REPO,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    run = json.loads(output.with_suffix(".json").read_text(encoding="utf-8"))
    results = {result["name"]: result for result in run["results"]}
    assert list(results) == [name]
    for name, result in results.items():
        assert not result["error"], f"{name} failed:\n{result['error']}"
        assert result["figures"], f"{name} produced no figures"
        for figure in result["figures"]:
            assert isinstance(figure["median"], (int, float)) and math.isfinite(figure["median"]), f"{name}: {figure['metric']} has no value"
            if figure["anchor"] is not None:
                assert isinstance(figure["anchor"]["median"], (int, float)), f"{name}: {figure['metric']} has no anchor value"
    report = output.read_text(encoding="utf-8")
    assert "## Summary" in report
    for result in results.values():
        assert result["title"] in report


def _figure(metric: str, median: float, spread: tuple[float, float], ratio: float | None = None, unit: str = "ms") -> dict:
    return {"metric": metric, "unit": unit, "median": median, "min": spread[0], "max": spread[1], "n": 3,
            "ratio": ratio, "target": "", "anchor": None}


def test_before_and_after_reads_noise_as_same_and_names_what_got_worse() -> None:
    """The report's before/after verdicts: ratios to the anchor when both runs have one, else
    figures whose spreads do not overlap; a higher rate is better, a longer time is worse."""
    from benchmarks.report import comparison_rows

    before = {"results": [{"name": "b", "title": "B", "figures": [
        _figure("lag", 30, (28, 33)), _figure("cpu", 26, (25, 27), unit="% of a core"),
        _figure("rate", 1000, (900, 1100), ratio=2.0, unit="tokens/s"), _figure("start", 600, (500, 700), ratio=1.6),
    ]}]}
    after = {"results": [{"name": "b", "title": "B", "figures": [
        _figure("lag", 34, (30, 40)), _figure("cpu", 35, (33, 36), unit="% of a core"),
        _figure("rate", 1100, (1000, 1200), ratio=3.0, unit="tokens/s"), _figure("start", 900, (800, 1000), ratio=1.1),
        _figure("new", 1, (1, 1)),
    ]}]}
    verdicts = {row[1]: row[-1] for row in comparison_rows(before, after)}
    assert verdicts == {"lag": "same", "cpu": "worse", "rate": "better", "start": "better"}
