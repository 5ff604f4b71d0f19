"""The status line: provider and model, turns, tool calls, and the context meter."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from core.usage import money
from tui.format import format_tokens

METER_CELLS = 8
WARN_AT = 0.8


def meter(fraction: float, cells: int = METER_CELLS) -> str:
    """A bar of ``cells`` cells filled to ``fraction``."""
    filled = max(0, min(cells, round(fraction * cells)))
    return "█" * filled + "░" * (cells - filled)


class StatusLine(Static):
    """One line: ``anthropic:claude · turn 3 · tools 2/10 · ████░░ ~41k/200k · ready · Σ 120k $0.21``.

    "turn" is the user's turn (messages sent); tools counts this turn's calls as they start.
    """

    def __init__(self, *, provider: str, context_window: int, max_tool_calls: int, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self.provider = provider
        self.metrics: dict[str, Any] = {
            "user_turns": 0,
            "tool_calls_this_turn": 0,
            "max_tool_calls": max_tool_calls,
            "estimated_tokens": 0,
            "context_window": context_window,
        }
        self.state = "ready"
        self._line: Text | None = None

    def on_mount(self) -> None:
        self._render_line()

    def update_metrics(self, metrics: dict[str, Any]) -> None:
        """Merge the handler's latest metrics and redraw."""
        self.metrics.update({k: v for k, v in metrics.items() if v is not None})
        self._render_line()

    def set_state(self, state: str) -> None:
        """What the app is doing: ``ready``, ``thinking…``, ``running tool`` … (called per streamed delta: free when unchanged)."""
        if state != self.state:
            self.state = state
            self._render_line()

    def set_provider(self, provider: str) -> None:
        self.provider = provider
        self._render_line()

    @property
    def context_fraction(self) -> float:
        window = int(self.metrics.get("context_window") or 0)
        return int(self.metrics.get("estimated_tokens") or 0) / window if window else 0.0

    def _render_line(self) -> None:
        m = self.metrics
        fraction = self.context_fraction
        warn = fraction >= WARN_AT
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f" {self.provider}", style="bold")
        line.append(f" · turn {m.get('user_turns', 0)}")  # user turns; SPEC's "turns" counts model responses
        line.append(f" · tools {m.get('tool_calls_this_turn', 0)}/{m.get('max_tool_calls', 0)}")
        line.append(" · ")
        line.append(meter(fraction), style="bold" if warn else "")
        estimated = "~" if m.get("context_estimated_tokens") else ""  # partly an estimate: what was added since the last response
        line.append(f" {estimated}{format_tokens(int(m.get('estimated_tokens') or 0))}/{format_tokens(int(m.get('context_window') or 0))}")
        if warn:
            line.append(f" ⚠ {fraction:.0%} of context", style="bold")
        line.append(f" · {self.state}", style="italic")
        usage = m.get("usage") if isinstance(m.get("usage"), dict) else {}
        if usage.get("total_tokens"):  # last: on a narrow terminal the session's spend is cut before the state
            spent = usage.get("cost") if usage.get("cost") is not None else usage.get("cost_partial")
            line.append(f" · Σ {format_tokens(int(usage['total_tokens']))}" + (f" {money(spent)}" if spent is not None else ""))
        if line != self._line:
            self._line = line
            self.update(line, layout=False)  # one line of fixed height and width: a repaint, never a layout
        self.set_class(warn, "-warning")
