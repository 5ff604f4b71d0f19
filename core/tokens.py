"""Heuristic token estimation over everything a request sends (the bottom floor: the tool loop, the
turn's context, compaction and the file policy count alike).

No tokenizer is loaded (that would cost start-up time and differ per vendor);
about four characters a token, plus a small overhead per message and tool,
errs on the side of warning early.
"""

from __future__ import annotations

import json
import math
from typing import Any, Sequence

CHARS_PER_TOKEN = 4.0
"""Characters a token, about."""
MESSAGE_OVERHEAD = 4
"""Tokens a message adds besides its text."""
TOOL_OVERHEAD = 8
"""Tokens a tool's spec adds besides its JSON."""


def estimate_text_tokens(text: str) -> int:
    """Tokens of a piece of text."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def estimate_request_tokens(system_prompt: str, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
    """Tokens of a whole request: system prompt, history (with tool calls) and tool specs."""
    total = estimate_text_tokens(system_prompt)
    for message in messages:
        total += MESSAGE_OVERHEAD + estimate_text_tokens(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            total += MESSAGE_OVERHEAD + estimate_text_tokens(call.get("name", "") + json.dumps(call.get("parameters") or {}))
    for tool in tools:
        schema = {k: tool.get(k) for k in ("name", "description", "input_schema")}
        total += TOOL_OVERHEAD + estimate_text_tokens(json.dumps(schema, default=str))
    return total
