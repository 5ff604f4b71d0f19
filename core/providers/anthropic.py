"""Anthropic Messages API adapter (the only module that knows its wire format)."""

from __future__ import annotations

import logging
import time
from typing import Any, AsyncIterator, Sequence

from core.events import ResponseComplete, ResponseStarted, StreamItem, TextDelta, ThinkingDelta, ToolCallReady
from core.images import anthropic_blocks
from core.providers.base import (
    SDKProvider,
    ToolSpec,
    canonical_tools,
    generic_extract,
    interrupted_note,
    neutral_tool_spec,
    normalise_stop_reason,
    result_text,
)
from core.providers.errors import ProviderError, classify_error
from core.providers.anthropic_cache import add_breakpoints
from core.types import Message, TaskResult, TaskStatus, ToolCall, is_error
from core.usage import anthropic_usage

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 8192


class ClaudeProvider(SDKProvider):
    """ProviderAdapter for Anthropic's Claude over ``anthropic.AsyncAnthropic``.

    The SDK is imported on first use, so building the provider costs nothing at
    start-up. ``base_url`` and ``api_key`` default to the SDK's own environment
    handling (``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``).
    """

    name = "anthropic"
    default_max_tokens = DEFAULT_MAX_TOKENS

    def __init__(
        self, model: str = "claude-sonnet-4-5", *, prompt_cache: bool = True, cache_ttl: str = "5m", thinking_budget: int = 0, **options: Any
    ) -> None:
        super().__init__(model, **options)
        self.prompt_cache = prompt_cache
        """Mark cache breakpoints (:mod:`core.providers.anthropic_cache`) on every request."""
        self.cache_ttl = cache_ttl
        self.thinking_budget = thinking_budget
        """Extended thinking's token budget; 0 leaves thinking off."""

    def _make_client(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key=self._api_key or _env_key(),
            base_url=self._base_url,
            max_retries=self.max_retries,
            timeout=anthropic.Timeout(self.idle_timeout, connect=15.0),
        )

    def prewarm(self) -> None:
        """Import the SDK, build the client, then the stream's event types (from a thread, after the first paint).

        The SDK builds an event type's pydantic schema the first time a stream meets it, on
        the event loop: the first reply stalled at its first token (``message_start``) and
        again after its last text (``content_block_stop``), which held back its final frame.
        """
        super().prewarm()
        _warm_stream_types()

    # -- wire format -------------------------------------------------------
    def convert_tools(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        """Provider-neutral specs to Anthropic tool definitions."""
        return [neutral_tool_spec(t) for t in canonical_tools(tools)]

    def format_tool_result(self, tool_call: ToolCall | dict[str, Any], result: TaskResult) -> dict[str, Any]:
        """A user message holding one ``tool_result`` block keyed by ``tool_use_id``."""
        call_id = tool_call.id if isinstance(tool_call, ToolCall) else tool_call["id"]
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": result_text(result)}
        if is_error(result):
            block["is_error"] = True
        return {"role": "user", "content": [block]}

    def convert_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Neutral history to Anthropic messages: tool results grouped, same roles merged."""
        out: list[dict[str, Any]] = []

        def push(role: str, blocks: list[dict[str, Any]]) -> None:
            if not blocks:
                return
            if out and out[-1]["role"] == role:
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": role, "content": blocks})

        for message in messages:
            role = message.get("role")
            content = message.get("content") or ""
            if role == "user":
                context = message.get("context") or ""
                images = anthropic_blocks(message.get("images") or [])  # type: ignore[arg-type]
                push("user", ([{"type": "text", "text": context}] if context else []) + images + [{"type": "text", "text": content or "(empty)"}])
            elif role == "assistant":
                kept = [b for b in message.get("thinking") or [] if b.get("type") == "content_blocks"]
                if kept and not message.get("interrupted"):
                    # Server tools' blocks (web search and its results...) go back exactly as received, in
                    # their order, as Anthropic documents for pause_turn and multi-turn server tool use.
                    push("assistant", [dict(b) for b in kept[0]["blocks"]])
                    continue
                blocks: list[dict[str, Any]] = [dict(b) for b in message.get("thinking") or [] if b.get("type") in _THINKING_TYPES]
                text = content
                if message.get("interrupted"):
                    text = (text + "\n\n" + interrupted_note(message)).strip()
                if text:
                    blocks.append({"type": "text", "text": text})
                for call in message.get("tool_calls") or []:
                    blocks.append({"type": "tool_use", "id": call["id"], "name": call["name"], "input": call.get("parameters") or {}})
                push("assistant", blocks)
            elif role == "tool":
                result: TaskResult = {"status": TaskStatus.ERROR if message.get("is_error") else TaskStatus.SUCCESS, "content": content}
                wire = self.format_tool_result({"id": message.get("tool_call_id", "")}, result)
                # Tool results must lead the user message that answers a tool_use turn.
                if out and out[-1]["role"] == "user":
                    out[-1]["content"].extend(wire["content"])
                else:
                    push("user", wire["content"])
        return out

    def _request(self, messages: Sequence[Message], system_prompt: str, tools: Sequence[ToolSpec]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": self.convert_messages(messages),
        }
        if self.thinking_budget:
            # The API wants max_tokens above the thinking budget (docs: extended thinking, max tokens).
            request["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
            if (self.max_tokens or 0) <= self.thinking_budget:
                request["max_tokens"] = self.thinking_budget + DEFAULT_MAX_TOKENS
        if system_prompt:
            request["system"] = system_prompt
        if tools:
            request["tools"] = self.convert_tools(tools)
        if self.prompt_cache:
            add_breakpoints(request, self.cache_ttl)
        return request

    # -- calls -------------------------------------------------------------
    async def send_message(self, messages: Sequence[Message], system_prompt: str = "", tools: Sequence[ToolSpec] = ()) -> Any:
        """One non-streaming call; returns the SDK's ``Message``."""
        try:
            return await (await self.ready_client()).messages.create(**self._request(messages, system_prompt, tools))
        except Exception as exc:  # noqa: BLE001 - classified below
            raise classify_error(exc, "Anthropic") from exc

    async def stream_message(
        self, messages: Sequence[Message], system_prompt: str = "", tools: Sequence[ToolSpec] = ()
    ) -> AsyncIterator[StreamItem]:
        """Stream one response: text and thinking deltas, each complete tool call, then ResponseComplete.

        The response is complete only after a ``message_stop`` with a ``stop_reason``. The
        SDK's stream helper ends quietly when the body ends early (a proxy or server that
        closes a ``Connection: close`` response), and ``get_final_message()`` then returns
        the partial snapshot with ``stop_reason`` None; that raises an ``incomplete``
        ProviderError here, carrying the text that arrived.
        """
        text: list[str] = []
        calls: list[ToolCall] = []
        stopped = False
        final: Any = None
        try:
            async with (await self.ready_client()).messages.stream(**self._request(messages, system_prompt, tools)) as stream:
                async for event in stream:
                    kind = event.type
                    if kind == "message_start":
                        yield ResponseStarted(usage=anthropic_usage(event.message.usage).as_dict())
                    elif kind == "message_delta" and event.usage is not None:
                        # The usage so far (server tools report their input here): booked if the stream breaks now.
                        yield ResponseStarted(usage=anthropic_usage(stream.current_message_snapshot.usage).as_dict())
                    elif kind == "text":
                        text.append(event.text)
                        yield TextDelta(text=event.text)
                    elif kind == "thinking":
                        yield ThinkingDelta(text=event.thinking)
                    elif kind == "content_block_stop" and getattr(event.content_block, "type", "") == "tool_use":
                        block = event.content_block
                        call = ToolCall(id=block.id, name=block.name, parameters=dict(block.input or {}))
                        calls.append(call)
                        yield ToolCallReady(call=call)
                    elif kind == "message_stop":
                        stopped = True
                if stopped:
                    final = await stream.get_final_message()
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001 - classified below
            error = classify_error(exc, "Anthropic")
            error.partial = "".join(text)
            raise error from exc
        if final is None or not final.stop_reason:
            raise ProviderError(
                "incomplete", "The connection to Anthropic closed before the answer finished", retryable=True, partial="".join(text)
            )
        closed = {call.id for call in calls}
        for block in final.content or []:
            if getattr(block, "type", "") == "tool_use" and block.id not in closed:
                # Cut off by max_tokens before its content_block_stop: kept (last) so the loop answers it "not run".
                params = block.input if isinstance(block.input, dict) else {}
                calls.append(ToolCall(id=block.id, name=block.name, parameters=dict(params)))
        usage = anthropic_usage(final.usage).as_dict()
        yield ResponseComplete(
            content="".join(text),
            tool_calls=tuple(calls),
            stop_reason=normalise_stop_reason(final.stop_reason),
            usage=usage,
            thinking=tuple(_kept_blocks(final.content)),
        )

    def extract_tool_calls(self, response: Any) -> dict[str, Any]:
        """SPEC shape from an Anthropic ``Message`` (object or dict), a string, or anything else."""
        content = getattr(response, "content", None)
        if content is None and isinstance(response, dict) and isinstance(response.get("content"), list):
            content = response["content"]
        if not isinstance(content, list):
            return generic_extract(response)
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for block in content:
            get = block.get if isinstance(block, dict) else lambda k, b=block: getattr(b, k, None)
            if get("type") == "text":
                texts.append(get("text") or "")
            elif get("type") == "tool_use":
                calls.append({"id": get("id"), "name": get("name"), "parameters": dict(get("input") or {})})
        stop = getattr(response, "stop_reason", None) or (response.get("stop_reason") if isinstance(response, dict) else None)
        return {"content": "".join(texts), "tool_calls": calls, "awaiting_tool_response": stop == "tool_use"}


_THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
_OWN_TYPES = _THINKING_TYPES | {"text", "tool_use"}
"""Block types the neutral history holds; any other (a server tool's) keeps the whole content as received."""


def _kept_blocks(content: Any) -> list[dict[str, Any]]:
    """What a final message must send back: its thinking and redacted_thinking blocks, exactly as received.

    When server tools' blocks are among its content (``server_tool_use``, ``web_search_tool_result``...),
    every block as received, in order, too (``{"type": "content_blocks", "blocks"}``): the
    conversation goes back as it is (a ``pause_turn`` continues from it).
    """
    blocks: list[dict[str, Any]] = []
    for block in content or []:
        kind = getattr(block, "type", "")
        if kind == "thinking":
            blocks.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
        elif kind == "redacted_thinking":
            blocks.append({"type": "redacted_thinking", "data": block.data})
    if any(getattr(block, "type", "") not in _OWN_TYPES for block in content or []):
        blocks.append({"type": "content_blocks", "blocks": [_as_received(block) for block in content]})
    return blocks


def _as_received(block: Any) -> dict[str, Any]:
    """A content block as the wire had it (fields the SDK added on its own left out)."""
    data = block.model_dump(mode="json", exclude_unset=True)
    data.pop("parsed_output", None)
    return data


_WARM_USAGE: dict[str, Any] = {
    "input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 1, "cache_read_input_tokens": 1,
    "cache_creation": {"ephemeral_5m_input_tokens": 1, "ephemeral_1h_input_tokens": 0}, "server_tool_use": {"web_search_requests": 0},
}
_WARM_STREAM: tuple[dict[str, Any], ...] = (
    {"type": "message_start", "message": {"id": "msg_warm", "type": "message", "role": "assistant", "content": [], "model": "warm",
                                          "stop_reason": None, "stop_sequence": None, "usage": {**_WARM_USAGE, "service_tier": "standard"}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "warm"}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "warm"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "warm"}},
    {"type": "content_block_stop", "index": 1},
    {"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_warm", "name": "warm", "input": {}}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
    {"type": "content_block_stop", "index": 2},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": _WARM_USAGE},
    {"type": "message_stop"},
)
"""One made-up stream with each kind of event a reply brings (thinking, text, a tool call, the end)."""


def _warm_stream_types() -> None:
    """Run :data:`_WARM_STREAM` through the SDK's own event parsing and accumulation, so its types are built."""
    try:
        from anthropic._models import construct_type  # the SDK's internals: guarded, never required
        from anthropic.lib.streaming._messages import accumulate_event, build_events
        from anthropic.types import RawMessageStreamEvent

        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for raw in _WARM_STREAM:
            time.sleep(0)  # hand the GIL over between types: the event loop (painting, a first turn) waits less for it
            event = construct_type(value=raw, type_=RawMessageStreamEvent)
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
            build_events(event=event, message_snapshot=snapshot)
    except Exception:  # noqa: BLE001 - an SDK that moved these only loses the head start
        log.debug("the SDK's stream types could not be built ahead", exc_info=True)


def _env_key() -> str | None:
    import os

    # The SDK insists on a key; local Anthropic-compatible gateways may not need one.
    return os.environ.get("ANTHROPIC_API_KEY") or ("not-needed" if os.environ.get("ANTHROPIC_BASE_URL") else None)
