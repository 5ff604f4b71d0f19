"""Anthropic prompt-caching breakpoints (part of the Anthropic adapter's wire format).

A request renders as tools, then system, then messages; ``cache_control`` on a
block caches everything up to and including it, and a request may carry at
most four such breakpoints. We place three: the last system block (tools and
system together), the last block of the newest message, and the last block of
the user message before it, which is exactly where the previous step of the
tool loop put its rolling breakpoint, so each step reads what the previous one
wrote even when a step added more blocks than the API's 20-block lookback.

SOURCE: https://platform.claude.com/docs/en/build-with-claude/prompt-caching
("Prompt caching caches the full prefix", "Cache limitations": 4 breakpoints,
minimum cacheable length; "1-hour cache duration": ``ttl: "1h"``).
"""

from __future__ import annotations

from typing import Any

MAX_BREAKPOINTS = 4
_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def cache_control(ttl: str) -> dict[str, str]:
    """The ``cache_control`` value for a TTL of ``5m`` (the default) or ``1h``."""
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def _mark_last(blocks: list[dict[str, Any]], marker: dict[str, str]) -> bool:
    for block in reversed(blocks):
        if block.get("type") not in _UNMARKABLE:
            block["cache_control"] = dict(marker)
            return True
    return False


def add_breakpoints(request: dict[str, Any], ttl: str = "5m") -> int:
    """Mark ``request`` (the Messages API body, changed in place); returns how many breakpoints it has."""
    marker = cache_control(ttl)
    used = 0
    system = request.get("system")
    if isinstance(system, str) and system:
        request["system"] = system = [{"type": "text", "text": system}]
    if isinstance(system, list) and system and _mark_last(system, marker):
        used += 1
    elif request.get("tools") and _mark_last(request["tools"], marker):
        used += 1
    messages = request.get("messages") or []
    user_indexes = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    targets = [len(messages) - 1] if messages else []
    earlier = [i for i in user_indexes if i < len(messages) - 1]
    if earlier:
        targets.append(earlier[-1])
    for index in targets:
        if used >= MAX_BREAKPOINTS:
            break
        content = messages[index].get("content")
        if isinstance(content, str):
            messages[index]["content"] = content = [{"type": "text", "text": content}]
        if isinstance(content, list) and _mark_last(content, marker):
            used += 1
    return used
