"""The status line: provider and model, turns, tool calls, and the context meter."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from tui.format import context_figure, format_tokens

METER_CELLS = 8
WARN_AT = 0.8
DROP_ORDER = ("vendor", "meter", "spend", "warning", "turn", "tools")
"""What the status line leaves out, first to last, when the terminal is too narrow for all of it.

"vendor" is the provider's prefix of the model's name (``anthropic:``). The tool-call counter
goes last: during a tool loop it is what the line is watched for (at 80 columns it stays, with
the turn, while a cost is shown). The warning's colour stays when its words go. Model, context
figures and state always stay: they are what a glance at the line is for.
"""

READY = "ready"
WAITING = "waiting for the model…"
"""A request is out and nothing has come back yet (before the first token, after each tool result)."""
THINKING = "thinking…"
"""The model is sending its thinking (extended thinking), not yet its answer."""
STREAMING = "streaming…"


MODEL_CELLS = 12
"""Cells of the model's name kept however narrow the line (``claude-sonn…``)."""


def meter(fraction: float, cells: int = METER_CELLS) -> str:
    """A bar of ``cells`` cells filled to ``fraction``."""
    filled = max(0, min(cells, round(fraction * cells)))
    return "█" * filled + "░" * (cells - filled)


class StatusLine(Static):
    """One line: ``anthropic:claude · turn 3 · tools 2/10 · ████░░ ~41k/200k · ready · Σ 120k $0.21``.

    "turn" is the user's turn (messages sent); tools counts this turn's calls as they start.
    When the line is wider than the terminal, parts are left out in :data:`DROP_ORDER`;
    the model, the context figures and the state always stay.
    """

    def __init__(self, *, provider: str, context_window: int = 0, max_tool_calls: int | None = None, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self.provider = provider
        self.metrics: dict[str, Any] = {
            "user_turns": 0,
            "tool_calls_this_turn": 0,
            "max_tool_calls": max_tool_calls,
            "estimated_tokens": 0,
            "context_window": context_window,
        }
        self.state = READY
        self._line: Text | None = None

    def on_mount(self) -> None:
        self._render_line()

    def update_metrics(self, metrics: dict[str, Any]) -> None:
        """Merge the handler's latest metrics and redraw (the context pane gets the same figures from
        the conversation, never from this widget)."""
        self.metrics.update({k: v for k, v in metrics.items() if v is not None})
        self._render_line()

    def set_state(self, state: str) -> None:
        """What the app is doing: :data:`READY`, :data:`WAITING`, :data:`THINKING`, :data:`STREAMING`,
        ``running readFile…``, … (called per streamed delta: free when unchanged)."""
        if state != self.state:
            self.state = state
            self._render_line()

    def set_provider(self, provider: str) -> None:
        self.provider = provider
        self._render_line()

    def on_resize(self) -> None:
        self._render_line()

    def _parts(self, fraction: float, figures: str, warn: bool) -> list[tuple[str, Text]]:
        """The line's parts in display order, each named by what :data:`DROP_ORDER` calls it."""
        m = self.metrics
        parts = [
            ("provider", Text(self.provider, style="bold")),
            ("turn", Text(f"turn {m.get('user_turns', 0)}")),  # user turns; SPEC's "turns" counts model responses
            ("tools", Text(f"tools {m.get('tool_calls_this_turn', 0)}" + (f"/{m['max_tool_calls']}" if m.get("max_tool_calls") is not None else ""))),
            ("meter", Text(meter(fraction), style="bold" if warn else "")),
            ("context", Text(figures)),
        ]
        if warn:
            parts.append(("warning", Text(f"⚠ {fraction:.0%} of context", style="bold")))
        parts.append(("state", Text(self.state, style="italic")))
        usage = m.get("usage") if isinstance(m.get("usage"), dict) else {}
        if usage.get("total_tokens") or usage.get("unreported"):
            spent = usage.get("cost") if usage.get("cost") is not None else usage.get("cost_partial")
            least = "≥ " if usage.get("unreported") else ""  # a response ended before its usage report: a lower bound
            tokens = format_tokens(int(usage.get("total_tokens") or 0))
            from core.usage import money  # its dataclasses are not needed for the first frame

            parts.append(("spend", Text(f"Σ {tokens} {least}{money(spent)}" if spent is not None else f"Σ {least}{tokens}")))
        return parts

    def _render_line(self) -> None:
        fraction, figures = context_figure(self.metrics)  # "~": partly an estimate; the context pane shows the same
        warn = fraction >= WARN_AT
        line = fit_line(self._parts(fraction, figures, warn), self.size.width)
        if line != self._line:
            self._line = line
            self.update(line, layout=False)  # one line of fixed height and width: a repaint, never a layout
        self.set_class(warn, "-warning")


def fit_line(parts: list[tuple[str, Text]], width: int) -> Text:
    """The status line from its named parts, fitted to ``width`` cells (0: unknown, all parts).

    Parts are left out in :data:`DROP_ORDER` (first the provider's prefix: ``claude-sonnet-4-5``);
    if model, context and state are still too wide, the model's name is cut.
    """
    dropped = iter(DROP_ORDER)
    while width and _joined_length(parts) > width:
        name = next(dropped, None)
        if name is None:
            model = parts[0][1].copy()
            parts = [("provider", model), *parts[1:]]
            keep = min(model.cell_len, MODEL_CELLS)  # the model stays recognisable; a long state is cut at its end instead
            model.truncate(max(keep, model.cell_len - max(0, _joined_length(parts) - width)), overflow="ellipsis")
            break
        if name == "vendor":
            provider = parts[0][1]
            parts = [("provider", Text(provider.plain.rpartition(":")[2], style=provider.style)), *parts[1:]]
            continue
        parts = [(key, text) for key, text in parts if key != name]
    line = _join(parts)
    if width and line.cell_len > width:
        line.truncate(width, overflow="ellipsis")
    return line


def _separator(before: str, after: str) -> str:
    return " " if (before, after) in _GLUED else " · "


_GLUED = {("meter", "context"), ("context", "warning")}
"""Parts that read as one (``████░░ ~41k/200k ⚠ 85% of context``): a space between them, not a dot."""


def _join(parts: list[tuple[str, Text]]) -> Text:
    """The parts as the status line shows them: a leading space, `` · `` between unrelated parts.

    A separator takes the style of the part after it (the meter's stays plain).
    """
    line = Text(no_wrap=True, overflow="ellipsis")
    for index, (name, text) in enumerate(parts):
        separator = _separator(parts[index - 1][0], name) if index else " "
        if name == "meter":
            line.append(separator)
            line.append(text.plain, style=text.style)
        else:
            line.append(separator + text.plain, style=text.style)
    return line


def _joined_length(parts: list[tuple[str, Text]]) -> int:
    """Cells of :func:`_join` of the parts, without building it."""
    return 1 + sum(text.cell_len for _, text in parts) + sum(len(_separator(a, b)) for (a, _), (b, _) in zip(parts, parts[1:]))
