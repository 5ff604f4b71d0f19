"""``/cost`` and ``/budget``: where the session's tokens and money went, and a fresh allowance."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from core.pricing import PRICES_DATE, PRICES_SOURCE
from core.usage import UsageLedger, at_least, money
from tui.format import format_tokens

_HEADERS = ("in", "write", "read", "out", "hit", "cost")


def _cost(row: dict[str, Any]) -> str:
    """The row's cost: "≥ $0.04" when a response of it ended without its usage report (a lower bound)."""
    if row.get("cost") is not None:
        return at_least(row) + money(row["cost"])
    if row.get("cost_partial"):
        return f"{at_least(row)}{money(row['cost_partial'])}+"
    return "—"


def _table(label: str | None, rows: list[tuple[str, dict[str, Any]]], *, label_no_wrap: bool = False) -> Table:
    """The figures of ``rows``, under a ``label`` column holding their names (None: no name column)."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 0, 0, 1), pad_edge=False, show_edge=False, header_style="bold")
    if label is not None:
        table.add_column(label, overflow="fold", no_wrap=label_no_wrap)  # numbers never wrap
    for header in _HEADERS:
        table.add_column(header, justify="right", no_wrap=True)
    for name, row in rows:
        figures = (
            format_tokens(row["input_tokens"]),
            format_tokens(row["cache_write_tokens"]),
            format_tokens(row["cache_read_tokens"]),
            format_tokens(row["output_tokens"]),
            f"{row['hit_rate']:.0%}",
            _cost(row),
        )
        table.add_row(*((name, *figures) if label is not None else figures))
    return table


class ModelTable:
    """The per-model (or per-turn) table: a row per name when the names fit beside the figures, else each
    name on a line of its own above them.

    At 80 columns the chat leaves about 40 for the table; the figures take 35 of them, and a
    name squeezed into the rest broke into pieces of three letters (``cla|ude-|son…``, ``tur|n``).
    """

    def __init__(self, rows: list[tuple[str, dict[str, Any]]], *, label: str = "model", line_label: str = "") -> None:
        self.rows = rows
        self.label = label
        self.line_label = line_label
        """Put before a name on its own line (``"turn "``: "turn 3" rather than a bare "3")."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        wide = _table(self.label, self.rows, label_no_wrap=True)
        if Measurement.get(console, options.update_width(10_000), wide).maximum <= options.max_width:  # every cell whole on one line
            yield wide
            return
        # the figures alone (a line per row: nothing in them wraps), each model's name on the line above its figures
        lines = console.render_lines(_table(None, self.rows), options, pad=False)
        head, body = lines[: len(lines) - len(self.rows)], lines[len(lines) - len(self.rows):]
        for line in head:
            yield from line
            yield Segment.line()
        for (name, _), line in zip(self.rows, body):
            yield Text(self.line_label + name, no_wrap=True, overflow="ellipsis")
            yield from line
            yield Segment.line()


def cost_report(session: Any, *, last_turns: int = 10) -> RenderableType:
    """The ``/cost`` report of ``session`` (``core.session.Session``): totals, per turn and per model tables, budget, price source."""
    ledger: UsageLedger | None = session.usage
    if not isinstance(ledger, UsageLedger) or not ledger.entries:
        return Text("No model responses yet in this session, so nothing has been spent.")
    summary = ledger.summary()
    head = Text()
    head.append(f"{at_least(summary)}{format_tokens(summary['total_tokens'])} tokens", style="bold")
    responses = summary["responses"]
    head.append(f" in {responses} response{'' if responses == 1 else 's'} · cache hit rate ")
    head.append(f"{summary['hit_rate']:.0%}", style="bold")
    head.append(" · estimated cost ")
    head.append(_cost(summary), style="bold")
    turns = summary["per_turn"]
    shown = [(str(row["turn"]), row) for row in turns[-last_turns:]]
    parts: list[RenderableType] = [head, Text(""), ModelTable(shown, label="turn", line_label="turn ")]  # "turn" whole, never "tur/n"
    if len(turns) > last_turns:
        parts.append(Text(f"(turns 1–{turns[-last_turns - 1]['turn']} not shown)", style="dim"))
    parts += [Text(""), ModelTable([(row["model"], row) for row in summary["per_model"]])]
    if summary.get("unreported"):
        count = summary["unreported"]
        parts.append(
            Text(
                f"\n≥: at least. {count} response{'' if count == 1 else 's'} ended (interrupted, dropped or cut by an error) "
                "before the provider reported all its usage: what it reported is counted, the rest is not known.",
            )
        )
    budget = session.budget
    if budget is not None and budget.active:
        limits = []
        if budget.session_cost:
            limits.append(f"session {money(budget.session_cost)} (spent {money(ledger.cost()[0] - budget.session_base_cost)})")
        if budget.turn_cost:
            limits.append(f"turn {money(budget.turn_cost)}")
        if budget.session_tokens:
            limits.append(f"session {budget.session_tokens:,} tokens")
        if budget.turn_tokens:
            limits.append(f"turn {budget.turn_tokens:,} tokens")
        parts.append(Text("\nBudget: " + ", ".join(limits) + ". /budget gives the session a fresh allowance."))
    parts.append(
        Text(
            "Tokens are what the provider reported; costs are estimates from the price table "
            f"({PRICES_SOURCE}, taken {PRICES_DATE}; override with [prices.\"model\"] in the config file). "
            "\"—\": no price for that model (tokens only); \"+\": part of it has no price.",
            style="dim",
        )
    )
    return Group(*parts)


def budget_message(session: Any) -> str:
    """``/budget``: a fresh session allowance for ``session``, or how to set one."""
    budget = session.budget
    if budget is None:
        return "Budgets are not available: the engine did not start."
    if not budget.active:
        return "No budget is set. Set one with --max-cost USD, --max-turn-cost USD, or max_cost / max_turn_cost / max_session_tokens / max_turn_tokens in the config."
    allowed = session.refresh_budget()
    if not allowed:
        return "Only per-turn budgets are set; each new message starts with a fresh allowance."
    return f"Fresh session allowance: {allowed} from now on. Send your message again (or 'continue')."
