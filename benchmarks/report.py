"""Writing the results: a Markdown report, its JSON twin, and a console table."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

FINDINGS = Path(__file__).with_name("FINDINGS.md")
"""Hand-written analysis of missed targets (profiles, causes, fixes), included in the report."""

BASELINE = Path(__file__).with_name("baseline.json")
"""An earlier full run's JSON, compared in the report; its optional ``about`` says what it is (default: the report published before this round's changes)."""

_LOWER_IS_BETTER = frozenset({"ms", "s", "MB", "% of a core", "bytes", "$"})
_HIGHER_IS_BETTER = frozenset({"tokens/s"})
_NOISE = 0.10
"""Changes smaller than this share (of the ratio to the anchor, else of the figure) are called "same"."""


def fmt(value: float | None, unit: str = "") -> str:
    """A number for humans: 3 significant digits, thousands separators for big ones."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    magnitude = abs(value)
    if magnitude >= 1000:
        text = f"{value:,.0f}"
    elif magnitude >= 100:
        text = f"{value:.0f}"
    elif magnitude >= 10:
        text = f"{value:.1f}"
    elif magnitude >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".rstrip() if unit else text


def _spread(summary: dict[str, Any] | None, unit: str) -> str:
    if not summary or summary.get("median") is None:
        return "–"
    text = fmt(summary["median"], unit)
    if summary.get("n", 0) > 1 and summary.get("min") is not None:
        text += f" ({fmt(summary['min'])}–{fmt(summary['max'])})"
    return text


def _met(value: bool | None) -> str:
    return {True: "✅ met", False: "❌ missed", None: "–"}[value]


def summary_rows(results: list[dict[str, Any]]) -> list[list[str]]:
    """One row per figure: benchmark, metric, app, anchor, ratio, target, met."""
    rows = []
    for number, result in enumerate(results, 1):
        if result.get("error") and not result.get("figures"):
            rows.append([f"{number}. {result['title']}", "(failed: see below)", "–", "–", "–", "–", "–"])
        for figure in result.get("figures", []):
            anchor = figure.get("anchor")
            anchor_text = f"{_spread(anchor, figure['unit'])} · {anchor['name']}" if anchor else "–"
            ratio = f"{figure['ratio']:.2f}×" if figure.get("ratio") is not None else "–"
            rows.append([f"{number}. {result['title']}", figure["metric"], _spread(figure, figure["unit"]), anchor_text, ratio, figure["target"] or "–", _met(figure["met"])])
    return rows


def _direction(figure: dict[str, Any]) -> int:
    """+1 when a higher figure is better, -1 when lower is, 0 when neither is said."""
    target = figure.get("target") or ""
    if target.startswith("≥"):
        return 1
    if target.startswith("≤"):
        return -1
    return 1 if figure["unit"] in _HIGHER_IS_BETTER else -1 if figure["unit"] in _LOWER_IS_BETTER else 0


def _verdict(direction: int, before: float, after: float) -> str:
    if not direction or not before:
        return "–"
    change = (after - before) / abs(before)
    if abs(change) < _NOISE:
        return "same"
    return "better" if change * direction > 0 else "worse"


def _overlap(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """True when the two runs' spreads (min–max over repeats) overlap: within the noise."""
    if None in (old.get("min"), old.get("max"), new.get("min"), new.get("max")):
        return False
    return old["min"] <= new["max"] and new["min"] <= old["max"]


def comparison_rows(baseline: dict[str, Any], run: dict[str, Any]) -> list[list[str]]:
    """Before/after for every figure present in both runs: values, ratios to their anchors, and a verdict.

    The verdict compares ratios to the anchor when both runs have one (the machine's speed
    cancels out), else the figures themselves, which read "same" when the two runs' spreads
    overlap; changes under 10 % read "same".
    """
    before = {(r["name"], f["metric"]): f for r in baseline.get("results", []) for f in r.get("figures", [])}
    rows = []
    for number, result in enumerate(run["results"], 1):
        for figure in result.get("figures", []):
            old = before.get((result["name"], figure["metric"]))
            if old is None or old.get("median") is None or figure.get("median") is None:
                continue
            direction = _direction(figure)
            if old.get("ratio") is not None and figure.get("ratio") is not None:
                verdict = _verdict(direction, old["ratio"], figure["ratio"])
            elif _overlap(old, figure):
                verdict = "same" if direction else "–"
            else:
                verdict = _verdict(direction, old["median"], figure["median"])
            ratio = lambda f: f"{f['ratio']:.2f}×" if f.get("ratio") is not None else "–"  # noqa: E731
            rows.append([f"{number}. {result['title']}", figure["metric"], fmt(old["median"], figure["unit"]), fmt(figure["median"], figure["unit"]),
                         ratio(old), ratio(figure), verdict])
    return rows


def _comparison(run: dict[str, Any]) -> list[str]:
    if not BASELINE.exists() or run.get("quick"):
        return []
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    rows = comparison_rows(baseline, run)
    if not rows:
        return []
    counts = {word: sum(1 for row in rows if row[-1] == word) for word in ("better", "same", "worse")}
    about = baseline.get("about") or "The report published before this round's changes"
    return [
        "## Before and after",
        "",
        f"{about} ({baseline['date']}, commit {baseline['machine']['commit']}, "
        "`benchmarks/baseline.json`) against this run. Absolute times move with the machine's load from run to run; where a figure has an anchor measured in the same run, "
        "the verdict compares the ratios to it, otherwise the figures, which read \"same\" when the spreads (min–max over repeats) of the two runs overlap. "
        "Changes under 10 % read \"same\".",
        "",
        _table(["Benchmark", "Metric", "Before", "Now", "Ratio before", "Ratio now", "Verdict"], rows),
        "",
        f"Better: {counts['better']}, same: {counts['same']}, worse: {counts['worse']}.",
        "",
    ]


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(run: dict[str, Any], methods: dict[str, str]) -> str:
    """The whole report."""
    machine = run["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items())
    out = [
        "# Benchmarks",
        "",
        f"Generated by `{run['command']}` on {run['date']} ({'quick run: tiny sizes, few repeats' if run['quick'] else 'full run'}), "
        f"in {run['seconds']:.0f} s."
        + (f" **What-if run**: the app was patched at run time with `{run['whatif']}` (benchmarks/whatif.py); these are not the app's figures." if run.get("whatif") else ""),
        "",
        f"Machine: {machine['cpu']}, {machine['cores']} cores, {machine['memory_gb']} GB, {machine['os']}, "
        f"Python {machine['python']} ({versions}); commit {machine['commit']}.",
        "",
        "How to read: every benchmark runs headless in a fresh process against the loopback fake LLM server "
        "(in a process of its own, so its CPU is not counted); the anchor is measured in the same run. "
        "Figures are medians over repeats, with the spread (min–max over repeats) in parentheses; "
        "the ratio is app ÷ anchor; targets are from issue 7. The machine is shared and noisy: trust ratios more than absolute times.",
        "",
        "## Summary",
        "",
        _table(["Benchmark", "Metric", "assistant-tui", "Anchor (same run)", "Ratio", "Target", "Met"], summary_rows(run["results"])),
        "",
    ]
    missed = [(r["title"], f["metric"]) for r in run["results"] for f in r.get("figures", []) if f.get("met") is False]
    out.append(f"Targets met: {sum(1 for r in run['results'] for f in r.get('figures', []) if f.get('met'))}, missed: {len(missed)}.")
    out.append("")
    out += _comparison(run)
    if FINDINGS.exists():
        out += [FINDINGS.read_text(encoding="utf-8").strip(), ""]
    out += ["## Method and details", ""]
    for number, result in enumerate(run["results"], 1):
        out += [f"### {number}. {result['title']}", ""]
        method = methods.get(result["name"], "").strip()
        if method:
            out += [method, ""]
        if result.get("parameters"):
            out += ["Parameters: " + ", ".join(f"{k}={v}" for k, v in result["parameters"].items()) + ".", ""]
        for note in result.get("notes", []):
            out.append(f"- {note}")
        for figure in result.get("figures", []):
            if figure.get("note"):
                out.append(f"- {figure['metric']}: {figure['note']}")
        if result.get("error"):
            out += ["", "This benchmark did not complete:", "", "```", result["error"].strip()[-3000:], "```"]
        load = result.get("load")
        load_text = f" (1-minute load average {load[0]:g} before, {load[1]:g} after, on {machine['cores']} cores)" if load else ""
        out += ["", f"Took {result.get('seconds', 0):.0f} s{load_text}.", ""]
    out += ["## Running it", "", "```", "python -m benchmarks            # full run, writes docs/benchmarks.md and docs/benchmarks.json",
            "python -m benchmarks --quick    # tiny sizes, a minute; writes to the cache directory unless --output is given",
            "python -m benchmarks --only picker,index   # a subset", "```", ""]
    return "\n".join(out)


def write(run: dict[str, Any], methods: dict[str, str], markdown_path: Path) -> Path:
    """Write the Markdown report and the JSON beside it; returns the JSON path."""
    markdown_path.parent.mkdir(parents=True, exist_ok=True)
    markdown_path.write_text(render_markdown(run, methods), encoding="utf-8")
    json_path = markdown_path.with_suffix(".json")
    json_path.write_text(json.dumps(run, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return json_path


def console_lines(result: dict[str, Any]) -> list[str]:
    """A few lines summarising one benchmark for the terminal."""
    lines = []
    for row in summary_rows([result]):
        _, metric, app, anchor, ratio, target, met = row
        lines.append(f"  {metric:<44} {app:<28} anchor {anchor:<34} {ratio:>7}  target {target:<16} {met}")
    if result.get("error"):
        lines.append("  ERROR: " + result["error"].strip().splitlines()[-1][:200])
    return lines
