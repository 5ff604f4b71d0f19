"""/cost's per-model table at every width: a model's name is never cut into pieces."""

from __future__ import annotations

import io

from rich.console import Console

from tui.cost import ModelTable

ROWS = [
    ("claude-sonnet-4-5", {"input_tokens": 21, "cache_write_tokens": 7_800, "cache_read_tokens": 16_700, "output_tokens": 557, "hit_rate": 0.68, "cost": 0.0425}),
    ("llama3.1:8b", {"input_tokens": 7_900, "cache_write_tokens": 0, "cache_read_tokens": 0, "output_tokens": 60, "hit_rate": 0.0, "cost": None}),
]


def lines_at(width: int) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(ModelTable(ROWS))
    return [line.rstrip() for line in console.export_text().splitlines()]


def test_a_row_per_model_when_the_names_fit() -> None:
    lines = lines_at(80)
    assert lines[0].split() == ["model", "in", "write", "read", "out", "hit", "cost"]
    assert lines[2].split() == ["claude-sonnet-4-5", "21", "7.8k", "16.7k", "557", "68%", "$0.0425"]
    assert lines[3].split() == ["llama3.1:8b", "7.9k", "0", "0", "60", "0%", "—"]


def test_each_name_on_its_own_line_when_they_do_not() -> None:
    """The chat's width at 80x24 (about 42 columns): names whole, figures whole, in the columns of the header."""
    lines = lines_at(42)
    assert lines[0].split() == ["in", "write", "read", "out", "hit", "cost"]
    assert lines[2:] == ["claude-sonnet-4-5", lines[3], "llama3.1:8b", lines[5]]
    assert lines[3].split() == ["21", "7.8k", "16.7k", "557", "68%", "$0.0425"]
    assert lines[5].split() == ["7.9k", "0", "0", "60", "0%", "—"]
    assert lines[0].index("cost") + len("cost") == len(lines[3]) == len(lines[5])  # right-aligned under the header


def test_the_totals_count_one_response_in_the_singular() -> None:
    from types import SimpleNamespace

    from core.usage import Usage, UsageLedger
    from tui.cost import cost_report

    ledger = UsageLedger()
    ledger.add(1, "claude-sonnet-4-5", Usage(input_tokens=900, output_tokens=20))
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(cost_report(SimpleNamespace(usage=ledger, budget=None)))
    assert "920 tokens in 1 response · cache hit rate 0%" in console.export_text()
