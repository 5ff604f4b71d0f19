"""The status line: provider and model, turns, tool calls, and the context meter."""

from __future__ import annotations

import re
from typing import Any

from rich.text import Text
from textual.widgets import Static

from tui.format import context_figure, format_tokens

METER_CELLS = 8
WARN_AT = 0.8
STEPS: tuple[tuple[str, str], ...] = (
    ("provider", "short"),
    ("meter", "drop"),
    ("spend", "short"),
    ("warning", "short"),
    ("state", "short"),
    ("context", "short"),
    ("warning", "drop"),
    ("provider", "cut"),
    ("state", "cut"),
    ("turn", "drop"),
    ("spend", "drop"),
    ("tools", "drop"),
)
"""How the status line gets shorter when the terminal is too narrow for all of it, first to last.

``short`` replaces a part by its short form (:func:`shorter`): the model's name without the
provider's prefix (``claude-sonnet-4-5``), the session's spend without its tokens (``Σ ≥ $1.37``),
the warning without its words (``⚠ 86%``), the state in one word (``waiting…``, ``readFile…``),
the context figures without where the window came from; ``cut`` shortens the model's name (to
:data:`MODEL_CELLS` at least) or the state (to :data:`STATE_CELLS`) with an ellipsis; ``drop`` leaves
the part out. At 80 columns every part that matters stays: the
model, ``turn N``, ``tools n/10``, the context figures, the state and the session's cost (what a
glance at the line is for during a tool loop, and after an interruption). Narrower, the turn goes,
then the cost, then the tool counter; model, context and state always stay (a long state is cut
at its end).
"""

READY = "ready"
WAITING = "waiting for the model…"
"""A request is out and nothing has come back yet (before the first token, after each tool result)."""
THINKING = "thinking…"
"""The model is sending its thinking (extended thinking), not yet its answer."""
STREAMING = "streaming…"


MODEL_CELLS = 12
"""Cells of the model's name kept however narrow the line (``claude-sonn…``)."""
STATE_CELLS = 12
"""Cells of the state kept before the turn is left out (``executeFileP…``)."""
CUT_CELLS = {"provider": MODEL_CELLS, "state": STATE_CELLS}


def meter(fraction: float, cells: int = METER_CELLS) -> str:
    """A bar of ``cells`` cells filled to ``fraction``."""
    filled = max(0, min(cells, round(fraction * cells)))
    return "█" * filled + "░" * (cells - filled)


class StatusLine(Static):
    """One line: ``anthropic:claude · turn 3 · tools 2/10 · ████░░ ~41k/200k · ready · Σ 120k $0.21``.

    "turn" is the user's turn (messages sent); tools counts this turn's calls as they start.
    When the line is wider than the terminal, parts are shortened or left out in :data:`STEPS`'
    order; at 80 columns all of them stay in some form.
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
        """The line's parts in display order, each named as :data:`STEPS` calls it."""
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

    Parts are shortened or left out in :data:`STEPS`' order until the line fits; if it is still
    too wide, it is cut at its end (the state's last words).
    """
    steps = iter(STEPS)
    uncut: dict[str, Text] = {}
    while width and _joined_length(parts) > width:
        step = next(steps, None)
        if step is None:
            break
        name, how = step
        if how == "drop":
            parts = [(key, text) for key, text in parts if key != name]
        elif how == "cut":
            uncut.update((key, text) for key, text in parts if key == name)
            parts = _cut_part(parts, name, width)
        else:
            parts = [(key, shorter(key, text) if key == name else text) for key, text in parts]
    for name, text in uncut.items():  # what a later step left room for goes back to the cut parts, in the order they were cut
        parts = _cut_part([(key, text if key == name else other) for key, other in parts], name, width)
    line = _join(parts)
    if width and line.cell_len > width:
        line.truncate(width, overflow="ellipsis")
    return line


def _cut_part(parts: list[tuple[str, Text]], name: str, width: int) -> list[tuple[str, Text]]:
    """``parts`` with the part ``name`` cut (see :func:`_cut`) as far as the line is wider than ``width``."""
    excess = _joined_length(parts) - width
    return [(key, _cut(text, excess, CUT_CELLS[key]) if key == name else text) for key, text in parts]


def _cut(text: Text, excess: int, least: int) -> Text:
    """``text`` ``excess`` cells shorter, ending in an ellipsis, but never under ``least`` cells (it stays recognisable)."""
    cut = text.copy()
    keep = min(cut.cell_len, least)
    cut.truncate(max(keep, cut.cell_len - max(0, excess)), overflow="ellipsis")
    return cut


_SPEND_TOKENS = re.compile(r"^Σ \S+ (?=(≥ )?\$)")
_WARNING_WORDS = re.compile(r" of context$")
_SOURCE = re.compile(r" \((server|setting|assumed)\)$")
_RUNNING = re.compile(r"^running (.+)$")
_APPROVAL = re.compile(r"^waiting for your approval of (.+)$")


def shorter(name: str, text: Text) -> Text:
    """The short form of the part ``name`` (see :data:`STEPS`); the text itself when it has none."""
    plain = text.plain
    if name == "provider":
        plain = plain.rpartition(":")[2]
    elif name == "spend":
        plain = _SPEND_TOKENS.sub("Σ ", plain)
    elif name == "warning":
        plain = _WARNING_WORDS.sub("", plain)
    elif name == "context":
        plain = _SOURCE.sub("", plain)
    elif name == "state":
        plain = SHORT_STATES.get(plain) or _RUNNING.sub(r"\1", plain)
        plain = _APPROVAL.sub(r"approve \1", plain)
    return Text(plain, style=text.style)


SHORT_STATES = {WAITING: "waiting…"}
"""States with a one-word form; ``running readFile…`` becomes ``readFile…`` and an approval ``approve readFile…``."""


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
