"""The transcript format: one JSON object per line, ``kind`` first.

Record kinds (every record also carries ``ts``, a Unix timestamp):

- ``meta`` (first line): ``version``, ``id``, ``project_root``, ``created``,
  ``provider``, ``model`` and, for a fork, ``forked_from``.
- ``user``: ``content``, ``turn`` (the user-turn number, :mod:`core.turns`) and, when the
  turn added any, ``context_parts`` (picked files, suggestions, time, mode instructions;
  see ``core.turn_context``). A note (``/run`` output, a ``/task`` result: not a turn)
  has ``note: true`` and no ``turn``. Records written before ``turn`` was stored get it
  derived on load (:func:`core.turns.derive_turns`).
- ``assistant``: ``content``, ``tool_calls`` (``[{"id", "name", "parameters"}]``),
  ``interrupted`` and, when the provider reported it, ``usage`` (``input_tokens``,
  ``output_tokens``, ``cache_write_tokens``, ``cache_read_tokens``, ``model``, ``turn``;
  ``reported: false`` when the response ended before the provider's final usage report,
  so the figures are a lower bound); when present ``stop_reason`` (``max_tokens``,
  ``refusal``, ``incomplete``, ``error``...), ``error`` (``{"kind", "message"}``: the
  provider's error that cut the message, with ``stop_reason: "error"``) and
  ``thinking`` (reasoning blocks as received, signatures kept).
- ``usage``: ``usage`` as above, of a response that ended early and left no message
  (a retried attempt, a failure or Esc before any text).
- ``tool_result``: ``tool_call_id``, ``name``, ``content``, ``is_error``,
  ``status``, ``duration``.
- ``interruption``: ``reason``.
- ``warning``: ``code``, ``message``: what the turn told the user beside the conversation
  (a retry, the context almost full), kept for the export of a resumed session.
- ``error``: ``reason``, ``message``; ``retracted`` when the failed turn's user message
  left the conversation (nothing was answered; the text went back to the prompt).
- ``context``: ``files`` (``[{"path", "read_only"}]``), the file-context pane.
- ``trace``: ``entry``, one tool-trace pane entry.
- ``checkpoint`` and ``rewind``: the files a writer changed and the rewinds (``core.checkpoints.log``).
- ``compaction``: the model's view of the conversation was compacted here (``core.compaction``):
  ``pruned`` (tool call id to the pointer that replaced its result), ``replaced`` (how many
  leading messages of the view the ``summary`` replaced; absent when only pruned),
  ``summary``, ``summary_parts`` (the picked files sent with it), ``summary_turn``,
  ``trigger``, ``tokens_before``, ``tokens_after``. The messages stay in the transcript;
  loading replays it to rebuild the view (``core.compaction.apply.replay``).

A new transcript is created by its first record that is not a pane record
(``PANE_KINDS``): a session that ends without any message leaves no file.

Titles are not in the log: they live in the ``<id>.meta.json`` sidecar.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
import secrets
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1
KINDS = frozenset({"meta", "user", "assistant", "usage", "tool_result", "interruption", "warning", "error", "context", "trace", "compaction"})
KINDS |= {"checkpoint", "rewind"}  # issue 26: core.checkpoints.log
PANE_KINDS = frozenset({"context", "trace"})
"""Records about the panes, not the conversation: a session holding only these has no
message, so it is neither written to disk nor listed."""

TRANSCRIPT_SUFFIX = ".jsonl"
SIDECAR_SUFFIX = ".meta.json"
LOCK_SUFFIX = ".lock"

# Every user record starts with exactly these bytes (see ``encode``), which lets
# the session list count turns without parsing JSON.
USER_PREFIX = b'{"kind":"user"'
# A retracted error record (its question went back to the prompt) ends with exactly these
# bytes: ``retracted`` is its last field, and JSON escapes any quote inside the message.
RETRACTED_SUFFIX = b',"retracted":true}\n'
# A note (``/run`` output, a ``/task`` result: not a turn) ends with exactly these bytes.
NOTE_SUFFIX = b',"note":true}\n'

_ID_RE = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")
_ID_PREFIX_RE = re.compile(r"^[0-9a-f-]{1,22}$")
_ID_TIME_FORMAT = "%Y%m%d-%H%M%S"


def encode(record: dict[str, Any]) -> bytes:
    """One record as a complete UTF-8 line (JSON never contains a raw newline).

    Raises:
        ValueError: The record cannot be represented as JSON (e.g. a cycle).
    """
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escape them instead
        data = json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str).encode("ascii")
    return data + b"\n"


def new_session_id(when: float) -> str:
    """A sortable id: the UTC creation time and a random suffix, e.g. ``20250314-091522-3fa9c1``."""
    stamp = _dt.datetime.fromtimestamp(when, tz=_dt.timezone.utc).strftime(_ID_TIME_FORMAT)
    return f"{stamp}-{secrets.token_hex(3)}"


def is_session_id(text: str) -> bool:
    """True when ``text`` has the exact shape of a session id."""
    return bool(_ID_RE.match(text))


def is_session_id_prefix(text: str) -> bool:
    """True when ``text`` could begin a session id (and so is safe in a file name)."""
    return bool(_ID_PREFIX_RE.match(text))


def id_timestamp(session_id: str) -> float:
    """The creation time encoded in a session id (0.0 if it has none)."""
    try:
        stamp = _dt.datetime.strptime(session_id[:15], _ID_TIME_FORMAT).replace(tzinfo=_dt.timezone.utc)
    except ValueError:
        return 0.0
    return stamp.timestamp()


def project_key(project_root: Path) -> str:
    """Directory name of a project's sessions: a readable slug and a short hash of the path.

    ``/home/ann/code/my-app`` becomes ``home-ann-code-my-app-1f2e3d4c5b``; the
    hash keeps distinct paths apart even when their slugs collide.
    """
    resolved = str(project_root.expanduser().resolve())
    slug = re.sub(r"[^A-Za-z0-9._]+", "-", resolved).strip("-.") or "root"
    digest = hashlib.sha256(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"{slug[-48:].lstrip('-.')}-{digest}"


def one_line(text: str, limit: int = 200) -> str:
    """``text`` with whitespace collapsed, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


REWOUND_KINDS = frozenset({"user", "assistant", "tool_result", "interruption", "warning", "error", "trace", "compaction"})
"""Records a conversation rewind removes (their usage stays: a rewound response was still paid for; a compaction
made during the rewound turns summarised them, so it goes too)."""


def drop_rewound(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` without the turns each conversation ``rewind`` record took back (for the loader; ``core.checkpoints.log`` writes the records)."""
    if not any(r.get("kind") == "rewind" and r.get("conversation") for r in records):
        return records
    kept: list[dict[str, Any]] = []
    for record in records:
        if record.get("kind") == "rewind" and record.get("conversation") and isinstance(record.get("turn"), int):
            start = next((i for i in range(len(kept) - 1, -1, -1) if kept[i].get("kind") == "user"
                          and not kept[i].get("note") and kept[i].get("turn") == record["turn"]), None)
            if start is not None:
                tail = kept[start:]
                del kept[start:]
                for old in tail:
                    if old.get("kind") not in REWOUND_KINDS:
                        kept.append(old)
                    elif old.get("kind") == "assistant" and isinstance(old.get("usage"), dict):
                        kept.append({"kind": "usage", "ts": old.get("ts"), "usage": old["usage"], "turn": old.get("turn")})
        kept.append(record)
    return kept
