"""OpenAI chat-completions adapter, for OpenAI and any compatible endpoint.

Works against gateways, Ollama, vLLM, llama.cpp server and LM Studio through
``base_url`` (``OPENAI_BASE_URL``). The only module that knows this wire format.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from typing import Any, AsyncIterator, Sequence

from core.providers.base import (
    ProviderError,
    SDKProvider,
    ResponseComplete,
    ResponseStarted,
    StreamItem,
    TextChunk,
    ThinkingChunk,
    ToolCallReady,
    ToolSpec,
    canonical_tools,
    generic_extract,
    is_transport_error,
    retry_after_seconds,
    classify_stream_error,
    interrupted_note,
    neutral_tool_spec,
    normalise_stop_reason,
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
        self.stream_options = True
        """Ask for the final usage chunk; turned off for good when the server rejects it."""

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
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        for position, message in enumerate(messages):
            role = message.get("role")
            content = message.get("content") or ""
            if role == "user":
                context = message.get("context") or ""
                out.append({"role": "user", "content": f"{context}\n\n{content}" if context else content})
            elif role == "assistant":
                if message.get("interrupted"):
                    content = (content + "\n\n" + interrupted_note(message)).strip()
                wire: dict[str, Any] = {"role": "assistant", "content": content or None}
                calls = message.get("tool_calls") or []
                if calls:
                    wire["tool_calls"] = [
                        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c.get("parameters") or {})}}
                        for c in calls
                    ]
                    if position > last_user:
                        # DeepSeek answers 400 unless a tool-calling message of the current turn carries
                        # its reasoning_content back as received; older turns' reasoning is not sent.
                        # SOURCE: api-docs.deepseek.com/guides/thinking_mode (tool calls).
                        for block in message.get("thinking") or []:
                            if block.get("type") == "reasoning" and block.get("text"):
                                wire[block.get("field") or "reasoning_content"] = block["text"]
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

    async def _open_stream(self, body: dict[str, Any]) -> Any:
        """Start a streaming request; a server that rejects ``stream_options`` gets one retry without it.

        Some servers (older vLLM, LM Studio, Azure deployments) answer 400/422 naming
        ``stream_options``; the provider then stops sending it for the rest of the session.
        """
        import openai

        if self.stream_options:
            body = {**body, "stream_options": {"include_usage": True}}
        try:
            return await self._post(body, stream=True)
        except openai.APIStatusError as exc:
            said = f"{exc.message} {exc.body}"
            if not self.stream_options or exc.status_code not in (400, 422) or "stream_options" not in said:
                raise
        log.info("the endpoint rejects stream_options; sending without it from now on")
        self.stream_options = False
        body = {k: v for k, v in body.items() if k != "stream_options"}
        return await self._post(body, stream=True)

    async def send_message(self, messages: Sequence[Message], system_prompt: str = "", tools: Sequence[ToolSpec] = ()) -> Any:
        try:
            return await self._post(self._request(messages, system_prompt, tools), stream=False)
        except Exception as exc:  # noqa: BLE001
            raise classify_error(exc) from exc

    async def stream_message(
        self, messages: Sequence[Message], system_prompt: str = "", tools: Sequence[ToolSpec] = ()
    ) -> AsyncIterator[StreamItem]:
        """Stream one response; tool calls are yielded once their arguments are complete.

        The response is complete only once a choice carried a ``finish_reason``; a
        stream that ends without one (a clean close, or ``[DONE]`` alone) raises an
        ``incomplete`` ProviderError with the text that arrived. Reasoning models'
        ``reasoning_content`` (DeepSeek, vLLM, Qwen) or ``reasoning`` streams as thinking.
        """
        text: list[str] = []
        reasoning: list[str] = []
        reasoning_field = ""
        calls = ToolCallAccumulator()
        finish = ""
        refused = False
        usage: dict[str, int] = {}
        try:
            stream = await self._open_stream({**self._request(messages, system_prompt, tools), "stream": True})
            started = False
            async for chunk in stream:
                chunk_usage = getattr(chunk, "usage", None)
                if chunk_usage:
                    usage = openai_usage(chunk_usage).as_dict()
                if not started:
                    started = True
                    yield ResponseStarted(usage=usage)
                for choice in chunk.choices or []:
                    if (getattr(choice, "index", 0) or 0) != 0:
                        continue  # n > 1 is never asked for; only the first choice is the answer
                    delta = getattr(choice, "delta", None)
                    if delta is not None:
                        for name in _REASONING_FIELDS:
                            piece = getattr(delta, name, None)
                            if isinstance(piece, str) and piece:
                                reasoning_field = reasoning_field or name
                                reasoning.append(piece)
                                yield ThinkingChunk(text=piece)
                        refusal = getattr(delta, "refusal", None)
                        refused = refused or bool(isinstance(refusal, str) and refusal)
                        for piece in (getattr(delta, "content", None), refusal):
                            if isinstance(piece, str) and piece:
                                text.append(piece)
                                yield TextChunk(text=piece)
                        for part in getattr(delta, "tool_calls", None) or []:
                            calls.add(part)
                    if getattr(choice, "finish_reason", None):
                        finish = choice.finish_reason
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001
            error = classify_error(exc)
            error.partial = "".join(text)
            raise error from exc
        if not finish:
            raise ProviderError(
                "incomplete",
                "The connection to the OpenAI-compatible endpoint closed before the answer finished",
                retryable=True,
                partial="".join(text),
            )
        stop_reason = normalise_stop_reason(finish)
        ready = calls.finish()
        if ready and stop_reason == "end_turn":
            stop_reason = "tool_use"  # Ollama and llama.cpp say "stop" although they sent tool calls
        if refused and stop_reason == "end_turn":
            stop_reason = "refusal"
        for item in ready:
            yield item
        thinking = ({"type": "reasoning", "field": reasoning_field, "text": "".join(reasoning)},) if reasoning else ()
        yield ResponseComplete(
            content="".join(text), tool_calls=tuple(r.call for r in ready), stop_reason=stop_reason, usage=usage, thinking=thinking
        )

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


_REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Delta fields reasoning models stream their thinking in (DeepSeek, vLLM, Qwen: reasoning_content;
newer vLLM, Ollama, OpenRouter: reasoning)."""


class ToolCallAccumulator:
    """Streamed tool-call pieces put back together, tolerant of what compatible servers send.

    OpenAI sends an ``index`` on every piece, the ``id`` and name on the first. Servers
    differ: some send the whole call in one piece, some leave out ``index`` or repeat
    index 0 for every call (each with its own ``id`` or name), some send no ``id`` at all
    (one is made up, so the follow-up request's ``tool_call_id`` matches).
    """

    def __init__(self) -> None:
        self.slots: list[dict[str, str]] = []
        self._by_index: dict[int, dict[str, str]] = {}

    def add(self, part: Any) -> None:
        """Fold one streamed ``delta.tool_calls`` piece in."""
        index = getattr(part, "index", None)
        call_id = getattr(part, "id", None) or ""
        function = getattr(part, "function", None)
        name = (getattr(function, "name", None) or "") if function is not None else ""
        arguments = getattr(function, "arguments", None) if function is not None else None
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments)  # some servers send the arguments as an object
        slot = self._by_index.get(index) if isinstance(index, int) else (self.slots[-1] if self.slots else None)
        starts_another = slot is not None and (
            (call_id and slot["id"] and call_id != slot["id"]) or (name and slot["name"] and not call_id and _complete_json(slot["arguments"]))
        )
        if slot is None or starts_another:
            slot = {"id": "", "name": "", "arguments": ""}
            self.slots.append(slot)
            if isinstance(index, int):
                self._by_index[index] = slot
        if call_id:
            slot["id"] = call_id
        if name and name != slot["name"]:
            slot["name"] += name
        slot["arguments"] += arguments or ""

    def finish(self) -> list[ToolCallReady]:
        """Every call, in order, its arguments parsed; an unparseable one carries ``error`` and must not run."""
        ready: list[ToolCallReady] = []
        seen: set[str] = set()
        for slot in self.slots:
            if slot["id"] in seen:
                slot["id"] = ""  # a server that repeats one id for several calls: each result needs its own
            seen.add(slot["id"])
            error = ""
            try:
                params = json.loads(slot["arguments"] or "{}")
                if not isinstance(params, dict):
                    params, error = {}, "tool arguments must be a JSON object"
            except json.JSONDecodeError as exc:
                params, error = {}, f"tool arguments are not valid JSON ({exc.msg} at position {exc.pos})"
            call = ToolCall(id=slot["id"] or f"call_{uuid.uuid4().hex[:24]}", name=slot["name"], parameters=params)
            ready.append(ToolCallReady(call=call, error=error))
        return ready


def _complete_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


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
        # An error object inside the SSE stream (HTTP 200): classified by what it says.
        body = exc.body
        if isinstance(body, dict):
            return classify_stream_error("The endpoint", str(body.get("type") or ""), str(body.get("code") or ""), str(body.get("message") or exc.message))
        return classify_stream_error("The endpoint", "", "", str(body) if isinstance(body, str) and body else exc.message)
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
