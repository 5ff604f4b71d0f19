"""How each part of a conversation reads, in every view of it.

The live chat and trace, a resumed session, the Markdown export (and f2) and an
editor's ``session/load`` all word a tool call, a denial, an interruption, an error,
a warning and a turn number through these functions, so the four views of one
recorded session read the same (issue 24, "one renderer of a conversation").
Nothing here knows a widget, Markdown or ACP: each view styles the words it gets.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.types import ToolCall


ERROR_TITLES: dict[str, str] = {
    "llm_error": "The model call failed",
    "incomplete_response": "The answer is incomplete",
    "resource_exhaustion": "Limit reached",
    "tool_execution_error": "A tool failed",
    "internal": "Something went wrong",
}
"""The title of a failed turn by its ``TurnFailed.reason`` (any other reason: :data:`ERROR_TITLE`)."""
ERROR_TITLE = "The turn failed"

WARNING_TITLES: dict[str, str] = {
    "context_80": "Context almost full",
    "retry": "Retrying",
    "session_not_saved": "Session not saved",
    "session_saved": "Session saved again",
}
"""The title of a warning by its ``Warning.code`` (any other code: ``Warning``)."""

INTERRUPTIONS: dict[str, str] = {
    "user": "Interrupted.",
}
"""How an interruption reads by its recorded ``reason`` (the transcript's ``interruption`` record):
``user``, the only one recorded today, is the user's Esc (or an editor's cancel), so it needs no words."""

STATUS_LABELS: dict[str, str] = {
    "pending": "awaiting approval",
    "running": "running",
    "success": "done",
    "error": "failed",
    "denied": "denied",
    "refused": "refused by policy",
    "not_run": "not run",
    "interrupted": "interrupted",
}
"""How a tool call's state reads (``core.types.ToolStatus`` plus ``pending`` and ``running``)."""

@dataclass(frozen=True)
class Stop:
    """How an answer that did not end as the model meant it reads: ``■ interrupted``, ``▲ output limit reached…``."""

    mark: str
    """The symbol before the words in the chat (``■`` cut, ``▲`` a limit, ``⊘`` refused)."""
    words: str
    """What happened, the same in the chat, the export and ACP."""
    hint: str
    """What the reader of the live chat can do about it (not in the export)."""
    kind: str
    """Its family, for styling: ``interrupted``, ``incomplete``, ``cut``, ``refused``."""


STOPS: dict[str, Stop] = {
    "interrupted": Stop("■", "interrupted", "", "interrupted"),
    "incomplete": Stop("■", "incomplete: the connection closed before the answer finished", "", "incomplete"),
    "error": Stop("■", "cut off: the provider failed mid-answer", "(its error is below)", "incomplete"),
    "max_tokens": Stop("▲", "output limit reached: the answer stops here", "· send /continue to have the model go on", "cut"),
    "refusal": Stop("⊘", "refused: the model declined to answer this", "", "refused"),
    "content_filter": Stop("⊘", "stopped by the provider's content filter", "", "refused"),
}
"""How an answer that did not end as the model meant it reads, by its stop reason (``interrupted``: the user's Esc)."""


ARGV_KEYS = ("command", "args")
"""Arguments that hold a program's argv as a list (``runCommand``'s ``command``, ``runTests``' ``args``)."""


def error_title(reason: str) -> str:
    """The title a failed turn is shown under, live and replayed (``llm_error`` -> "The model call failed")."""
    return ERROR_TITLES.get(reason, ERROR_TITLE)


def warning_title(code: str) -> str:
    """The title a warning is shown under (``retry`` -> "Retrying")."""
    return WARNING_TITLES.get(code, "Warning")


def interruption_text(reason: str = "user") -> str:
    """What an interrupted turn reads as (the recorded reason; ``user``: Esc, or the editor's cancel)."""
    return INTERRUPTIONS.get(reason or "user", f"Interrupted ({reason}).")


def status_label(status: str) -> str:
    """``done``, ``failed``, ``denied``, ``refused by policy``... for a tool call's status."""
    return STATUS_LABELS.get(status, status)


def stop_note(stop_reason: str, interrupted: bool = False) -> str:
    """How an answer that did not end normally is noted (``interrupted``, ``output limit reached…``); empty if it did."""
    stop = STOPS.get(stop_reason or "") or (STOPS["interrupted"] if interrupted else None)
    return stop.words if stop is not None else ""


def stop_label(stop_reason: str) -> tuple[str, str]:
    """The chat's line under a message that did not end normally, and its kind: ``("■ interrupted", "interrupted")``.

    The same words as :func:`stop_note`, with the mark and the live hint; an unknown reason reads ``■ stopped: <reason>``.
    """
    stop = STOPS.get(stop_reason) or Stop("■", f"stopped: {stop_reason}", "", "cut")
    return " ".join(part for part in (stop.mark, stop.words, stop.hint) if part), stop.kind


def turn_label(turn: Any) -> str:
    """``turn 3`` (the user-turn number of :mod:`core.turns`); empty for a note, which is no turn."""
    return f"turn {turn}" if isinstance(turn, int) and not isinstance(turn, bool) and turn > 0 else ""


def command_line(parameters: dict[str, Any]) -> str | None:
    """The argv of a command tool's call as a shell would print it (``git status --short 'a b.py'``), else None."""
    for key in ARGV_KEYS:
        value = parameters.get(key)
        if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
            return shlex.join(value)
    return None


def summarize_args(parameters: dict[str, Any], width: int = 60) -> str:
    """A one-line summary of tool arguments: the command line or the main value if there is one, else compact JSON."""
    if not parameters:
        return ""
    line = command_line(parameters)
    if line is not None:
        shown = next(key for key in ARGV_KEYS if isinstance(parameters.get(key), list) and parameters[key])
        text = " · ".join(part for part in (line, _other_args(parameters, shown)) if part)
    else:
        for key in ("command", "prompt", "query", "path", "instruction"):
            value = parameters.get(key)
            if isinstance(value, str) and value:
                text = value
                break
        else:
            text = json.dumps(parameters, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def tool_line(call: ToolCall, width: int = 200) -> str:
    """A tool call in one line, as the chat shows it: its name and what it was asked (``runCommand  git status``)."""
    summary = summarize_args(call.parameters, width)
    return f"{call.name}  {summary}" if summary else call.name


def _other_args(parameters: dict[str, Any], shown: str) -> str:
    """The arguments besides the one shown, compactly (``network=true timeout_s=30``)."""
    return " ".join(f"{key}={json.dumps(value, ensure_ascii=False, default=str)}" for key, value in parameters.items() if key != shown)
