"""Small text formatters shared by the panes (durations, token counts, tool arguments)."""

from __future__ import annotations

import json
from typing import Any

from core.narration import ARGV_KEYS, STATUS_LABELS, command_line, summarize_args  # noqa: F401  (the panes import them from here)

# Tool call status (core.events.TOOL_STATUSES, plus pending and running) -> icon, label and colour.
STATUS_ICONS: dict[str, str] = {
    "pending": "○",
    "running": "◐",
    "success": "✓",
    "error": "✗",
    "denied": "⊘",
    "refused": "⊗",
    "not_run": "⊖",
    "interrupted": "■",
}
STATUS_STYLES: dict[str, str] = {
    "pending": "magenta",
    "running": "cyan",
    "success": "green",
    "error": "red",
    "denied": "yellow",
    "refused": "yellow",
    "not_run": "dim",
    "interrupted": "yellow",
}
NEVER_RAN = frozenset({"denied", "refused", "not_run"})
"""Statuses of calls that did not run: they have no run time to show."""


def status_timing(status: str, duration: float | None) -> str:
    """``done 1.6s``, ``failed 0.1s``, ``denied``, ``not run`` … for a finished call."""
    label = STATUS_LABELS.get(status, status)
    if status in NEVER_RAN or duration is None:
        return label
    return f"{label} {format_duration(duration)}"


def approval_line(decision: str, automatic: bool, waited: float | None, ran: float | None) -> str:
    """``allow once · waited 4.1s for approval, ran 1.6s`` (what the user decided and what it cost)."""
    if automatic:  # nobody was asked: an earlier "always" (issue 26: per file or project), else the mode or the tool's policy
        text = decision + (" (you said always)" if decision == "allow session" else " (by approval mode)")
    else:
        text = decision
    if waited and not automatic:
        text += f" · waited {format_duration(waited)} for approval"
        if ran is not None:
            text += f", ran {format_duration(ran)}"
    return text


def format_duration(seconds: float) -> str:
    """``0.4s``, ``12s``, ``2m05s``."""
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def format_tokens(count: int) -> str:
    """``850``, ``12.3k``, ``200k``, ``1.2M``."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        value = count / 1000
        return f"{value:.1f}k".replace(".0k", "k") if value < 100 else f"{value:.0f}k"
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


CONTEXT_KEYS = ("estimated_tokens", "context_estimated_tokens", "context_window", "context_window_source")
"""The metrics keys of the context figure (:meth:`core.usage.ContextMeter.as_metrics`)."""
CONTEXT_ESTIMATE_NOTE = "~ means partly estimated: the model's last reported input plus an estimate of what was added since"


def context_figure(metrics: dict[str, Any]) -> tuple[float, str]:
    """The context figure both the status line and the context pane show: ``(fraction, "~41k/200k")``.

    Read from the handler's metrics (``estimated_tokens``, ``context_estimated_tokens``,
    ``context_window``: :class:`core.usage.ContextMeter`); ``~`` marks a figure that is partly an estimate.
    Where the window came from follows it unless it is the model table's (``core.models``):
    ``(server)`` a local server reported it, ``(setting)`` the user set it, ``(assumed)`` an unknown model.
    """
    tokens = int(metrics.get("estimated_tokens") or 0)
    window = int(metrics.get("context_window") or 0)
    approx = "~" if metrics.get("context_estimated_tokens") else ""
    source = str(metrics.get("context_window_source") or "table")
    where = f" ({source})" if window and source != "table" else ""
    return (tokens / window if window else 0.0), f"{approx}{format_tokens(tokens)}" + (f"/{format_tokens(window)}{where}" if window else "")


def pretty_args(parameters: dict[str, Any]) -> str:
    """Tool arguments as indented JSON; a command's argv first as its command line (``$ git status``)."""
    line = command_line(parameters)
    if line is None:
        return json.dumps(parameters, indent=2, ensure_ascii=False, default=str)
    shown = next(key for key in ARGV_KEYS if isinstance(parameters.get(key), list) and parameters[key])
    rest = {key: value for key, value in parameters.items() if key != shown}
    return f"$ {line}" + (f"\n{json.dumps(rest, indent=2, ensure_ascii=False, default=str)}" if rest else "")


def truncate_lines(text: str, max_lines: int) -> tuple[str, int]:
    """The first ``max_lines`` lines of ``text`` and how many lines were cut.

    Never splits the whole text: a tool result can be 100,000 lines.
    """
    end = -1
    for _ in range(max_lines):
        end = text.find("\n", end + 1)
        if end == -1:
            return text, 0
    rest = text[end + 1 :]
    if not rest:
        return text, 0
    return text[:end], rest.count("\n") + (0 if rest.endswith("\n") else 1)
