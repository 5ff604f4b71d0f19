"""What ``session/load`` shows besides the conversation's own messages, and the mode it restores.

The history keeps what the model was sent: a ``/task`` result or ``/run`` output is a
user *note* ("I ran `/task ...`"), and a file the client embedded in a prompt is a
``<file>`` block inside the query. A client replaying the session should see what
its user saw: the command they typed and its output as the agent's answer, and the
file's name where they mentioned it. The session mode (our approval mode) lives in a
small file beside the transcript, so a reloaded session keeps it.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from acp import update_agent_message_text, update_user_message_text

log = logging.getLogger(__name__)

_TASK_NOTE = re.compile(r"\AI ran `(?P<command>/task[^`]*)` \((?P<status>[^)]*)\); its result:\n\n(?P<body>.*)\Z", re.DOTALL)
_RUN_NOTE = re.compile(r"\AI ran a command, `(?P<command>[^`]*)`; its output:\n(?P<body>.*)\Z", re.DOTALL)
_EMBEDDED = re.compile(r'[ \t]*\n?<file path="(?P<path>[^"\n]*)">\n.*?\n</file>\n?[ \t]*', re.DOTALL)
_MODE_SUFFIX = ".acp.json"


def fenced(text: str) -> str:
    """``text`` as a Markdown code block: its ``<placeholders>`` and line breaks shown as they are."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip(chr(10))}\n{fence}"


def note_updates(text: str) -> list[Any]:
    """A note as its user saw it: the command they typed, then its output as the agent's answer."""
    task, run = _TASK_NOTE.match(text), _RUN_NOTE.match(text)
    if task:
        return [update_user_message_text(task["command"]), update_agent_message_text(fenced(task["body"]))]
    if run:
        return [update_user_message_text(f"/run {run['command']}"), update_agent_message_text(run["body"])]
    return [update_user_message_text(text)] if text else []


def shown_query(query: str) -> str:
    """A prompt as its user typed it: a file the client embedded is its name, not its content."""
    return _EMBEDDED.sub(lambda found: f" @{found['path']} ", query).strip()


def _mode_file(transcript: Path) -> Path:
    return transcript.with_name(transcript.name.removesuffix(".jsonl") + _MODE_SUFFIX)


def saved_mode(transcript: Path | None) -> str | None:
    """The session mode last chosen in the client for this session, or None."""
    if transcript is None:
        return None
    try:
        data = json.loads(_mode_file(transcript).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    mode = data.get("mode") if isinstance(data, dict) else None
    return mode if isinstance(mode, str) else None


def save_mode(transcript: Path | None, mode: str) -> None:
    """Remember the session's mode beside its transcript (a failure only loses the mode)."""
    if transcript is None:
        return
    from core import paths
    from core.sessions.fsutil import atomic_write

    try:
        paths.private_dir(transcript.parent)
        atomic_write(_mode_file(transcript), json.dumps({"mode": mode}).encode("utf-8"))
    except OSError as exc:
        log.warning("could not remember the session mode: %s", exc)
