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

from core.events import ResponseComplete, ResponseStarted, StreamItem, TextDelta, ThinkingDelta, ToolCallReady
from core.images import openai_parts
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
                text = f"{context}\n\n{content}" if context else content
                images = openai_parts(message.get("images") or [])  # type: ignore[arg-type]
                out.append({"role": "user", "content": [{"type": "text", "text": text}, *images] if images else text})
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
                    give_back(wire, message.get("thinking") or [], current_turn=position > last_user)
                elif not content:
                    continue
                out.append(wire)
            elif role == "tool":
                out.append(self.format_tool_result({"id": message.get("tool_call_id", "")}, {"content": content}))
        return out

    @property
    def label(self) -> str:
        """How messages name the provider: the endpoint's host (``openrouter.ai``), or OpenAI."""
        from urllib.parse import urlsplit

        return (urlsplit(self._base_url).hostname or self._base_url) if self._base_url else "OpenAI"

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
        from openai.types.chat import ChatCompletion

        client = await self.ready_client()
        return await client.post("/chat/completions", body=body, cast_to=ChatCompletion, stream=stream, stream_cls=_stream_class())

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
            raise classify_error(exc, self.label) from exc

    async def stream_message(
        self, messages: Sequence[Message], system_prompt: str = "", tools: Sequence[ToolSpec] = ()
    ) -> AsyncIterator[StreamItem]:
        """Stream one response; tool calls are yielded once their arguments are complete.

        The response is complete once a choice carried a ``finish_reason`` or the stream
        ended with the protocol's own end marker, ``data: [DONE]`` (Snowflake Cortex sends
        no finish reason); a stream that just stops raises an ``incomplete`` ProviderError
        with the text that arrived. Reasoning models' ``reasoning_content`` (DeepSeek,
        vLLM, Qwen) or ``reasoning`` streams as thinking; what the provider asks to get back
        (:func:`give_back`) is kept in ``ResponseComplete.thinking``.
        """
        text: list[str] = []
        reasoning = ReasoningAccumulator()
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
                if not started or chunk_usage:
                    started = True
                    yield ResponseStarted(usage=usage)
                for choice in chunk.choices or []:
                    if (getattr(choice, "index", 0) or 0) != 0:
                        continue  # n > 1 is never asked for; only the first choice is the answer
                    delta = getattr(choice, "delta", None)
                    if delta is not None:
                        for piece in reasoning.add(delta):
                            yield ThinkingDelta(text=piece)
                        refusal = getattr(delta, "refusal", None)
                        refused = refused or bool(isinstance(refusal, str) and refusal)
                        content = getattr(delta, "content", None)
                        if isinstance(content, list):  # Mistral's magistral: content chunks, thinking among them
                            for piece in reasoning.add_chunks(content):
                                yield ThinkingDelta(text=piece)
                            content = "".join(c.get("text") or "" for c in content if isinstance(c, dict) and c.get("type") == "text")
                        for piece in (content, refusal):
                            if isinstance(piece, str) and piece:
                                text.append(piece)
                                yield TextDelta(text=piece)
                        for part in getattr(delta, "tool_calls", None) or []:
                            calls.add(part)
                    if getattr(choice, "finish_reason", None):
                        finish = choice.finish_reason
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001
            error = classify_error(exc, self.label)
            error.partial = "".join(text)
            raise error from exc
        if not finish and not getattr(stream, "done", False):
            raise ProviderError(
                "incomplete", f"The connection to {self.label} closed before the answer finished", retryable=True, partial="".join(text)
            )
        stop_reason = normalise_stop_reason(finish or "stop")
        ready = calls.finish()
        if ready and stop_reason == "end_turn":
            stop_reason = "tool_use"  # Ollama and llama.cpp say "stop" although they sent tool calls
        if refused and stop_reason == "end_turn":
            stop_reason = "refusal"
        for item in ready:
            yield item
        thinking = reasoning.blocks() + calls.extras(ready)
        yield ResponseComplete(
            content="".join(text), tool_calls=tuple(r.call for r in ready), stop_reason=stop_reason, usage=usage, thinking=tuple(thinking)
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

_DETAIL_TEXT = {"reasoning.text": "text", "reasoning.summary": "summary"}
"""OpenRouter's readable ``reasoning_details`` types and the field their text streams in."""


class ReasoningAccumulator:
    """A response's reasoning as streamed: its text (shown as thinking) and what must go back.

    ``reasoning_content``/``reasoning`` text is joined; OpenRouter's ``reasoning_details``
    entries are kept as received, the fragments of one readable entry (same type and
    ``index``) joined, every encrypted entry (Gemini 3's thought signatures) verbatim.
    SOURCE: openrouter.ai/docs/use-cases/reasoning-tokens#preserving-reasoning-blocks.
    """

    def __init__(self) -> None:
        self.field = ""
        self.text: list[str] = []
        self.details: list[dict[str, Any]] = []
        self._open: dict[tuple[str, Any], dict[str, Any]] = {}

    def add(self, delta: Any) -> list[str]:
        """Fold one delta in; returns the readable reasoning it carried."""
        shown: list[str] = []
        for name in _REASONING_FIELDS:
            piece = getattr(delta, name, None)
            if isinstance(piece, str) and piece:
                self.field = self.field or name
                self.text.append(piece)
                shown.append(piece)
        details = getattr(delta, "reasoning_details", None)
        for entry in details if isinstance(details, list) else []:
            if not isinstance(entry, dict):
                continue
            key = _DETAIL_TEXT.get(str(entry.get("type")))
            if key and not shown and isinstance(entry.get(key), str) and entry[key]:
                shown.append(entry[key])  # a server that sends only reasoning_details
            open_entry = self._open.get((str(entry.get("type")), entry.get("index"))) if key else None
            if open_entry is None:
                open_entry = dict(entry)
                self.details.append(open_entry)
                if key:
                    self._open[(str(entry.get("type")), entry.get("index"))] = open_entry
                continue
            for field, value in entry.items():
                if field == key and isinstance(value, str):
                    open_entry[key] = (open_entry.get(key) or "") + value
                elif value not in (None, ""):
                    open_entry[field] = value  # a signature arrives on a later fragment (Claude through OpenRouter)
        return shown

    def add_chunks(self, content: list[Any]) -> list[str]:
        """The thinking of a content list (Mistral: ``{"type": "thinking", "thinking": [{"type": "text", "text"}]}``).

        SOURCE: docs.mistral.ai/capabilities/reasoning (magistral streams its thinking as content chunks).
        """
        shown: list[str] = []
        for chunk in content:
            if isinstance(chunk, dict) and chunk.get("type") == "thinking":
                parts = chunk.get("thinking")
                for part in parts if isinstance(parts, list) else [{"text": parts}]:
                    piece = part.get("text") if isinstance(part, dict) else None
                    if isinstance(piece, str) and piece:
                        self.field = self.field or "content"  # not a field: never sent back as one
                        self.text.append(piece)
                        shown.append(piece)
        return shown

    def blocks(self) -> list[dict[str, Any]]:
        """The reasoning blocks to keep in history (``core.events.ResponseComplete.thinking``)."""
        blocks: list[dict[str, Any]] = []
        if self.text:
            blocks.append({"type": "reasoning", "field": self.field, "text": "".join(self.text)})
        if self.details:
            blocks.append({"type": "reasoning_details", "details": self.details})
        return blocks


def give_back(wire: dict[str, Any], kept: Sequence[dict[str, Any]], *, current_turn: bool) -> None:
    """Put on an assistant message with tool calls what its provider asked to get back, as received.

    A tool call's ``extra_content`` (Gemini's thought signature, its OpenAI-compatible
    endpoint) always goes back with it. The reasoning of a tool-calling message of the
    current turn goes back too: DeepSeek answers 400 without its ``reasoning_content``
    (api-docs.deepseek.com/guides/thinking_mode), Gemini 3 through OpenRouter refuses
    function calling without its ``reasoning_details``; older turns' reasoning is not sent.
    """
    extras = {b.get("id"): b.get("extra_content") for b in kept if b.get("type") == "tool_call_extra"}
    for call in wire.get("tool_calls") or []:
        if extras.get(call["id"]) is not None:
            call["extra_content"] = extras[call["id"]]
    if not current_turn:
        return
    for block in kept:
        if block.get("type") == "reasoning" and block.get("text") and block.get("field") != "content":
            wire[block.get("field") or "reasoning_content"] = block["text"]
        elif block.get("type") == "reasoning_details" and block.get("details"):
            wire["reasoning_details"] = [dict(entry) for entry in block["details"]]


_STREAM_CLASS: Any = None


def _stream_class() -> Any:
    """The SDK's stream of chunks, also noting whether ``data: [DONE]`` arrived (``stream.done``).

    The SDK ends iteration quietly both at ``[DONE]`` and when the body just stops; only
    the first means the response is complete. The SDK's own event decoder notes it as it
    decodes each line (no generator of ours in the chain the SDK closes on an error).
    """
    global _STREAM_CLASS
    if _STREAM_CLASS is None:
        import openai
        from openai._streaming import SSEDecoder
        from openai.types.chat import ChatCompletionChunk

        class DoneNotingDecoder(SSEDecoder):
            done = False

            def decode(self, line: str) -> Any:
                event = super().decode(line)
                if event is not None and event.data.startswith("[DONE]"):
                    self.done = True
                return event

        class ChunkStream(openai.AsyncStream[ChatCompletionChunk]):  # type: ignore[misc]
            def __init__(self, **kwargs: Any) -> None:
                super().__init__(**kwargs)
                self._decoder = DoneNotingDecoder()

            @property
            def done(self) -> bool:
                return bool(getattr(self._decoder, "done", False))

        _STREAM_CLASS = ChunkStream
    return _STREAM_CLASS


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
        self.extra: dict[int, Any] = {}
        """A call's ``extra_content`` as received (Gemini's thought signature), by its slot."""

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
        extra = getattr(part, "extra_content", None)
        if extra is not None:
            self.extra[id(slot)] = extra
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

    def extras(self, ready: Sequence[ToolCallReady]) -> list[dict[str, Any]]:
        """``{"type": "tool_call_extra", "id", "extra_content"}`` for each finished call that carried one."""
        return [
            {"type": "tool_call_extra", "id": item.call.id, "extra_content": self.extra[id(slot)]}
            for slot, item in zip(self.slots, ready)
            if id(slot) in self.extra
        ]


def _complete_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
