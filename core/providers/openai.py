"""OpenAI chat-completions adapter, for OpenAI and any compatible endpoint.

Works against gateways, Ollama, vLLM, llama.cpp server and LM Studio through
``base_url`` (``OPENAI_BASE_URL``). The only module that knows this wire format.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, AsyncIterator, Sequence

from core.providers.base import (
    ProviderError,
    SDKProvider,
    ResponseComplete,
    StreamItem,
    TextChunk,
    ToolCallReady,
    ToolSpec,
    canonical_tools,
    generic_extract,
    is_transport_error,
    retry_after_seconds,
    neutral_tool_spec,
    result_text,
)
from core.types import Message, TaskResult, ToolCall
from core.usage import openai_usage

log = logging.getLogger(__name__)


class OpenAICompatibleProvider(SDKProvider):
    """ProviderAdapter over ``openai.AsyncOpenAI`` (SDK imported on first use)."""

    name = "openai"

    def __init__(self, model: str = "gpt-4o-mini", **options: Any) -> None:
        super().__init__(model, **options)

    def _make_client(self) -> Any:
        import openai

        # Local servers need no key, but the SDK insists on one.
        return openai.AsyncOpenAI(
            api_key=self._api_key or os.environ.get("OPENAI_API_KEY") or "not-needed",
            base_url=self._base_url,
            max_retries=self.max_retries,
            timeout=openai.Timeout(self.idle_timeout, connect=15.0),
        )

    # -- wire format -------------------------------------------------------
    def convert_tools(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        out = []
        for spec in canonical_tools(tools):
            neutral = neutral_tool_spec(spec)
            out.append(
                {
                    "type": "function",
                    "function": {"name": neutral["name"], "description": neutral["description"], "parameters": neutral["input_schema"]},
                }
            )
        return out

    def format_tool_result(self, tool_call: ToolCall | dict[str, Any], result: TaskResult) -> dict[str, Any]:
        """A ``role: "tool"`` message keyed by ``tool_call_id``."""
        call_id = tool_call.id if isinstance(tool_call, ToolCall) else tool_call["id"]
        return {"role": "tool", "tool_call_id": call_id, "content": result_text(result)}

    def convert_messages(self, messages: Sequence[Message], system_prompt: str = "") -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if system_prompt:
            out.append({"role": "system", "content": system_prompt})
        for message in messages:
            role = message.get("role")
            content = message.get("content") or ""
            if role == "user":
                context = message.get("context") or ""
                out.append({"role": "user", "content": f"{context}\n\n{content}" if context else content})
            elif role == "assistant":
                if message.get("interrupted"):
                    content = (content + "\n\n[interrupted by the user]").strip()
                wire: dict[str, Any] = {"role": "assistant", "content": content or None}
                calls = message.get("tool_calls") or []
                if calls:
                    wire["tool_calls"] = [
                        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c.get("parameters") or {})}}
                        for c in calls
                    ]
                elif not content:
                    continue
                out.append(wire)
            elif role == "tool":
                out.append(self.format_tool_result({"id": message.get("tool_call_id", "")}, {"content": content}))
        return out

    def _request(self, messages: Sequence[Message], system_prompt: str, tools: Sequence[ToolSpec]) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": self.convert_messages(messages, system_prompt)}
        if tools:
            request["tools"] = self.convert_tools(tools)
        if self.max_tokens:
            request["max_tokens"] = self.max_tokens
        return request

    # -- calls -------------------------------------------------------------
    async def _post(self, body: dict[str, Any], *, stream: bool) -> Any:
        """POST ``/chat/completions`` with ``body``, already plain JSON built by :meth:`_request`.

        Not ``chat.completions.create``: it first walks every message through the SDK's
        type-driven transform (~130 µs a message, on the event loop), so a 1000-message
        session froze the UI ~0.15 s per request and turns slowed 5x over 500 turns.
        ``client.post`` (the SDK's documented call for any endpoint) sends the same JSON
        and parses the same response and chunks.
        """
        import openai
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        client = await self.ready_client()
        return await client.post(
            "/chat/completions", body=body, cast_to=ChatCompletion, stream=stream,
            stream_cls=openai.AsyncStream[ChatCompletionChunk],
        )

    async def send_message(self, messages: Sequence[Message], system_prompt: str = "", tools: Sequence[ToolSpec] = ()) -> Any:
        try:
            return await self._post(self._request(messages, system_prompt, tools), stream=False)
        except Exception as exc:  # noqa: BLE001
            raise classify_error(exc) from exc

    async def stream_message(
        self, messages: Sequence[Message], system_prompt: str = "", tools: Sequence[ToolSpec] = ()
    ) -> AsyncIterator[StreamItem]:
        """Stream one response; tool calls are yielded once their arguments are complete."""
        text: list[str] = []
        pending: dict[int, dict[str, str]] = {}
        finish = ""
        usage: dict[str, int] = {}
        try:
            body = {**self._request(messages, system_prompt, tools), "stream": True, "stream_options": {"include_usage": True}}
            stream = await self._post(body, stream=True)
            async for chunk in stream:
                if getattr(chunk, "usage", None):
                    usage = openai_usage(chunk.usage).as_dict()
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                delta = choice.delta
                if delta is not None and delta.content:
                    text.append(delta.content)
                    yield TextChunk(text=delta.content)
                for part in (delta.tool_calls or []) if delta is not None else []:
                    slot = pending.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                    if part.id:
                        slot["id"] = part.id
                    if part.function is not None:
                        slot["name"] += part.function.name or ""
                        slot["arguments"] += part.function.arguments or ""
                if choice.finish_reason:
                    finish = choice.finish_reason
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001
            error = classify_error(exc)
            error.partial = "".join(text)
            raise error from exc
        if not finish and not text and not pending:
            raise ProviderError("server", "The endpoint closed the stream without a response", retryable=True)
        calls: list[ToolCall] = []
        for index in sorted(pending):
            slot = pending[index]
            call_id = slot["id"] or f"call_{index}"
            try:
                params = json.loads(slot["arguments"] or "{}")
                error = "" if isinstance(params, dict) else "tool arguments must be a JSON object"
            except json.JSONDecodeError as exc:
                params, error = {}, f"tool arguments are not valid JSON ({exc.msg} at position {exc.pos})"
            call = ToolCall(id=call_id, name=slot["name"], parameters=params if isinstance(params, dict) else {})
            calls.append(call)
            yield ToolCallReady(call=call, error=error)
        yield ResponseComplete(content="".join(text), tool_calls=tuple(calls), stop_reason=finish, usage=usage)

    def extract_tool_calls(self, response: Any) -> dict[str, Any]:
        """SPEC shape from a ``ChatCompletion`` (object or dict), a string, or anything else."""
        choices = getattr(response, "choices", None)
        if choices is None and isinstance(response, dict):
            choices = response.get("choices")
        if not choices:
            return generic_extract(response)
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else getattr(first, "message", None)
        finish = first.get("finish_reason") if isinstance(first, dict) else getattr(first, "finish_reason", None)
        get = message.get if isinstance(message, dict) else lambda k: getattr(message, k, None)
        calls = []
        for call in get("tool_calls") or []:
            fn = call["function"] if isinstance(call, dict) else call.function
            name = fn["name"] if isinstance(fn, dict) else fn.name
            raw = fn["arguments"] if isinstance(fn, dict) else fn.arguments
            try:
                params = json.loads(raw or "{}")
            except json.JSONDecodeError:
                params = {}
            calls.append({"id": call["id"] if isinstance(call, dict) else call.id, "name": name, "parameters": params if isinstance(params, dict) else {}})
        return {"content": get("content") or "", "tool_calls": calls, "awaiting_tool_response": finish == "tool_calls"}


def classify_error(exc: BaseException) -> ProviderError:
    """Map an openai SDK exception to a ProviderError (never echoing the key)."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return ProviderError("timeout", "The request to the OpenAI-compatible endpoint timed out", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return ProviderError("network", "Could not connect to the OpenAI-compatible endpoint", retryable=True)
    if isinstance(exc, openai.APIStatusError):
        error = _classify_status(exc)
        error.retry_after = retry_after_seconds(exc)
        return error
    if isinstance(exc, openai.APIError):
        # e.g. an error object inside the SSE stream (HTTP 200)
        return ProviderError("server", f"Endpoint error: {exc.message}", retryable=True)
    if is_transport_error(exc):
        return ProviderError("network", f"The connection to the OpenAI-compatible endpoint broke: {type(exc).__name__}", retryable=True)
    if isinstance(exc, json.JSONDecodeError):
        # A garbled SSE event: retried like a broken connection (the loop never retries after text).
        return ProviderError("server", f"Malformed response from the endpoint: {exc}", retryable=True)
    log.exception("unexpected provider failure")
    return ProviderError("server", f"Unexpected provider failure: {type(exc).__name__}")


def _classify_status(exc: Any) -> ProviderError:
    status = exc.status_code
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    message = (error or {}).get("message") or exc.message
    if status == 429:
        return ProviderError("rate_limit", f"Rate limited: {message}", status=status, retryable=True)
    if status in (401, 403):
        return ProviderError("auth", "The endpoint rejected the API key", status=status)
    if status == 413:
        return ProviderError("too_large", "The request is too large for the endpoint", status=status)
    if status == 404:
        return ProviderError("not_found", f"Not found: {message}", status=status)
    if status == 400:
        return ProviderError("bad_request", f"The endpoint rejected the request: {message}", status=status)
    if status in (503, 529):
        return ProviderError("overloaded", f"The endpoint is overloaded: {message}", status=status, retryable=True)
    return ProviderError("server", f"Endpoint error: {message}", status=status, retryable=status >= 500)
