"""Prompt-cache accounting for the fake LLM server, the way the providers document it.

Anthropic (SOURCE: https://platform.claude.com/docs/en/build-with-claude/prompt-caching,
sections "How prompt caching works", "Cache limitations", "Tracking cache performance"
and "What invalidates the cache"; read 2026-11-23):

* A request renders as tools, then system, then messages. ``cache_control`` on a
  block makes the prefix up to and including that block cacheable; at most 4
  breakpoints per request (more is a 400 error).
* A prefix shorter than the model's minimum cacheable length (1,024 tokens for
  Sonnet/Opus 4.x, 2,048 or 4,096 for some others; :attr:`AnthropicCache.min_tokens`)
  is not cached, silently.
* On a request, the system looks for the longest cached prefix at each breakpoint
  and at up to 20 blocks before it; what it finds is read
  (``cache_read_input_tokens``, billed at 0.1x), what lies between it and the last
  breakpoint is written (``cache_creation_input_tokens``, 1.25x for 5 minutes, 2x
  for 1 hour), and the rest is ``input_tokens``. The three add up to the prompt.
* The cache lives 5 minutes (or 1 hour with ``ttl: "1h"``) from its last use.
* ``cache_control`` itself is not part of the cached content: moving a breakpoint
  does not change the prefix.

OpenAI (SOURCE: https://platform.openai.com/docs/guides/prompt-caching, read 2026-11-23):
caching is automatic for prompts of 1,024 tokens or more; hits come in 128-token
increments of the longest prefix seen before; ``usage.prompt_tokens_details.cached_tokens``
reports them (and they are part of ``prompt_tokens``).

Tokens are counted as ceil(bytes / 4) of each block's canonical JSON: a stand-in
tokenizer, the same for every request, which is all the accounting needs.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from typing import Any, Callable

LOOKBACK_BLOCKS = 20
MAX_BREAKPOINTS = 4
OPENAI_MIN_TOKENS = 1024
OPENAI_INCREMENT = 128


class CacheError(ValueError):
    """The request breaks a documented caching rule (the server answers 400)."""


def _tokens(data: bytes) -> int:
    return math.ceil(len(data) / 4)


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def anthropic_blocks(body: dict[str, Any]) -> list[tuple[bytes, dict[str, Any] | None]]:
    """The request's blocks in render order: (canonical bytes without cache_control, its cache_control)."""
    blocks: list[tuple[bytes, dict[str, Any] | None]] = []

    def add(prefix: str, block: Any) -> None:
        if isinstance(block, dict):
            control = block.get("cache_control")
            clean = {k: v for k, v in block.items() if k != "cache_control"}
        else:
            control, clean = None, block
        blocks.append((prefix.encode() + _canonical(clean), control if isinstance(control, dict) else None))

    for tool in body.get("tools") or []:
        add("tool:", tool)
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) and system else system or []:
        add("system:", block)
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            add(f"{message.get('role')}:", block)
    return blocks


class AnthropicCache:
    """Anthropic's prompt cache, per documented behaviour (see the module docstring)."""

    def __init__(self, min_tokens: int = 1024, clock: Callable[[], float] = time.monotonic) -> None:
        self.min_tokens = min_tokens
        self.clock = clock
        self._entries: dict[str, tuple[int, float, float]] = {}  # prefix hash -> (tokens, ttl seconds, expires at)
        self._lock = threading.Lock()

    def account(self, body: dict[str, Any]) -> dict[str, int]:
        """The usage input fields of one request, updating the cache.

        Raises:
            CacheError: more than four breakpoints.
        """
        blocks = anthropic_blocks(body)
        hashes: list[str] = []
        totals: list[int] = []
        digest = hashlib.sha256(str(body.get("model", "")).encode())
        running = 0
        breakpoints: list[tuple[int, float]] = []
        for index, (data, control) in enumerate(blocks):
            digest.update(len(data).to_bytes(8, "big") + data)
            hashes.append(digest.hexdigest())
            running += _tokens(data)
            totals.append(running)
            if control is not None:
                breakpoints.append((index, 3600.0 if control.get("ttl") == "1h" else 300.0))
        if len(breakpoints) > MAX_BREAKPOINTS:
            raise CacheError(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(breakpoints)}.")
        now = self.clock()
        with self._lock:
            self._entries = {h: e for h, e in self._entries.items() if e[2] > now}
            read_at = -1
            for index, _ttl in breakpoints:
                for position in range(index, max(-1, index - LOOKBACK_BLOCKS), -1):
                    if hashes[position] in self._entries:
                        read_at = max(read_at, position)
                        break
            read = totals[read_at] if read_at >= 0 else 0
            if read_at >= 0:
                tokens, ttl, _ = self._entries[hashes[read_at]]
                self._entries[hashes[read_at]] = (tokens, ttl, now + ttl)
            written_to = read_at
            for index, ttl in breakpoints:
                if index > read_at and totals[index] >= self.min_tokens:
                    self._entries[hashes[index]] = (totals[index], ttl, now + ttl)
                    written_to = max(written_to, index)
        write = totals[written_to] - read if written_to > read_at else 0
        total = totals[-1] if totals else 0
        return {"input_tokens": total - read - write, "cache_creation_input_tokens": write, "cache_read_input_tokens": read}


class OpenAICache:
    """OpenAI's automatic prefix cache (see the module docstring)."""

    def __init__(self, keep: int = 64) -> None:
        self.keep = keep
        self._seen: list[bytes] = []
        self._lock = threading.Lock()

    @staticmethod
    def serialise(body: dict[str, Any]) -> bytes:
        """The prompt as one byte string: tools, then the messages, in order."""
        return _canonical(body.get("tools") or []) + b"".join(_canonical(m) for m in body.get("messages") or [])

    def account(self, body: dict[str, Any]) -> dict[str, int]:
        """``{"prompt_tokens", "cached_tokens"}`` of one request, remembering its prefix."""
        data = self.serialise(body)
        with self._lock:
            common = max((_common_prefix(data, seen) for seen in self._seen), default=0)
            self._seen = (self._seen + [data])[-self.keep :]
        prompt = _tokens(data)
        cached_tokens = common // 4
        cached = (cached_tokens // OPENAI_INCREMENT) * OPENAI_INCREMENT if prompt >= OPENAI_MIN_TOKENS and cached_tokens >= OPENAI_MIN_TOKENS else 0
        return {"prompt_tokens": prompt, "cached_tokens": min(cached, prompt)}


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of two byte strings."""
    limit = min(len(a), len(b))
    if a[:limit] == b[:limit]:
        return limit
    low, high = 0, limit
    while low < high:  # binary search on the first differing byte
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class PromptCaching:
    """Both providers' caches, as one object the fake server consults per request."""

    def __init__(self, anthropic_min_tokens: int = 1024) -> None:
        self.anthropic = AnthropicCache(min_tokens=anthropic_min_tokens)
        self.openai = OpenAICache()
