"""Carrying a conversation over to another provider (Anthropic <-> OpenAI-compatible).

The history is provider-neutral (:class:`core.types.Message`); what can differ is
what each vendor accepts in it:

- tool-call ids: Anthropic's ``tool_use.id`` must match ``^[a-zA-Z0-9_-]+$``
  (SOURCE: platform.claude.com/docs/en/api/messages, ``ToolUseBlockParam.id``);
  OpenAI rejects ids longer than 40 characters (its 400 answer: "Invalid
  'messages[N].tool_calls[0].id': string too long. Expected a string with maximum
  length 40"). Ids another server made up (``call:weird/1``) are mapped to valid
  ones, consistently in the call, its result and the pointers that name it;
- thinking: Anthropic's signed ``thinking`` blocks mean nothing to another vendor and
  an OpenAI-compatible server's ``reasoning`` text cannot be signed; each adapter sends
  only its own kind (``core.providers``), so the others stay in the history (the export
  shows them) and are counted here as not sent.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Iterable

ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
OPENAI_ID_MAX = 40
OWN_THINKING = {"anthropic": frozenset({"thinking", "redacted_thinking"}), "openai": frozenset({"reasoning"})}


def valid_id(call_id: str, provider: str) -> bool:
    """True when ``provider`` accepts ``call_id`` as a tool-call id."""
    if provider == "anthropic":
        return bool(ANTHROPIC_ID.match(call_id))
    return 0 < len(call_id) <= OPENAI_ID_MAX


def mapped_id(call_id: str) -> str:
    """A tool-call id both vendors accept, derived from ``call_id`` (the same every time)."""
    clean = re.sub(r"[^a-zA-Z0-9_-]", "_", call_id)[:24]
    return f"{clean}_{hashlib.sha256(call_id.encode('utf-8', 'surrogateescape')).hexdigest()[:10]}"


@dataclass(frozen=True)
class Carried:
    """What carrying the conversation over changed: ids mapped, thinking blocks the new provider is not sent."""

    mapping: dict[str, str]
    """Old id to new id."""
    thinking_not_sent: int

    @property
    def ids_mapped(self) -> int:
        return len(self.mapping)


def carry_over(messages: Iterable[dict[str, Any]], provider: str) -> Carried:
    """Make ``messages`` (edited in place) valid for ``provider``; returns what changed."""
    messages = list(messages)
    mapping: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            call_id = str(call.get("id") or "")
            if not valid_id(call_id, provider):
                mapping[call_id] = mapping.get(call_id) or mapped_id(call_id)
                call["id"] = mapping[call_id]
    thinking = 0
    own = OWN_THINKING.get(provider, frozenset())
    for message in messages:
        if message.get("role") == "tool" and message.get("tool_call_id") in mapping:
            message["tool_call_id"] = mapping[message["tool_call_id"]]
        if message.get("role") == "tool" and mapping:
            content = str(message.get("content") or "")
            for old, new in mapping.items():
                if f"readFile call {old} " in content:
                    message["content"] = content = content.replace(f"readFile call {old} ", f"readFile call {new} ")
        thinking += sum(1 for block in message.get("thinking") or [] if block.get("type") not in own)
    return Carried(mapping=mapping, thinking_not_sent=thinking)
