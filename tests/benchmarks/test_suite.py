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
