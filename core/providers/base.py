"""The provider contract: what the handler needs from any model vendor.

Adapters take provider-neutral messages (:class:`core.types.Message`) and
provider-neutral tool specs (``{"name", "description", "input_schema"}``) and
convert both to their vendor's wire format; nothing outside an adapter's module
knows that format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Literal, Protocol, Sequence, Union, runtime_checkable

from core.types import Message, TaskResult, ToolCall

ToolSpec = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class TextChunk:
    """A text delta as it arrives."""

    kind: Literal["text"] = "text"
    text: str


@dataclass(frozen=True, kw_only=True)
class ThinkingChunk:
    """A fragment of the model's visible reasoning as it arrives (shown, never part of the answer)."""

    kind: Literal["thinking"] = "thinking"
    text: str


@dataclass(frozen=True, kw_only=True)
class ToolCallReady:
    """A tool call whose arguments are complete (never a partial one)."""

    kind: Literal["tool_call"] = "tool_call"
    call: ToolCall
    error: str = ""
    """Set when the arguments were not valid JSON; the call must not run."""


@dataclass(frozen=True, kw_only=True)
class ResponseStarted:
    """The provider began its response (billed from here), with the usage it reported so far.

    Anthropic reports the input in ``message_start``; an OpenAI-compatible endpoint only
    at the end (``usage`` empty here). A response that ends before ResponseComplete is
    booked with this usage as a lower bound.
    """

    kind: Literal["started"] = "started"
    usage: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ResponseComplete:
    """The end of one model response: only yielded when the provider said the response was complete.

    ``stop_reason`` is normalised to one vocabulary (:data:`STOP_REASONS`): OpenAI's
    ``stop`` is ``end_turn``, ``tool_calls`` is ``tool_use``, ``length`` is ``max_tokens``.
    ``thinking`` holds the reasoning blocks to keep in history, as received
    (Anthropic ``thinking`` with its ``signature`` and ``redacted_thinking``; an
    OpenAI-compatible server's ``reasoning_content`` as ``{"type": "reasoning", "field", "text"}``).
    """

    kind: Literal["complete"] = "complete"
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    thinking: tuple[dict[str, Any], ...] = ()


StreamItem = Union[ResponseStarted, TextChunk, ThinkingChunk, ToolCallReady, ResponseComplete]

STOP_REASONS = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "content_filter", "pause_turn")
"""Normalised stop reasons; any other reason a provider gives is carried through as it came."""

_OPENAI_FINISH = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens"}


def normalise_stop_reason(reason: str | None) -> str:
    """A provider's stop or finish reason in the vocabulary of :data:`STOP_REASONS`."""
    return _OPENAI_FINISH.get(reason or "", reason or "")


ErrorKind = Literal[
    "rate_limit",
    "overloaded",
    "auth",
    "bad_request",
    "too_large",
    "network",
    "timeout",
    "server",
    "not_found",
    "incomplete",
    "context_limit",
    "content_filter",
    "tool_rejected",
]

_HINTS: dict[str, str] = {
    "rate_limit": "The provider is rate-limiting requests; wait a moment and send again.",
    "overloaded": "The provider is overloaded; try again in a minute.",
    "auth": "Check the API key (ANTHROPIC_API_KEY or OPENAI_API_KEY) and that it is valid for this endpoint.",
    "bad_request": "The provider rejected the request; try /reset or a shorter context.",
    "too_large": "The request is too large for the provider; drop files from context or /reset.",
    "network": "Could not reach the provider; check the network and the base URL setting.",
    "timeout": "The provider stopped responding; send again.",
    "server": "The provider had an internal error; try again.",
    "not_found": "The model or endpoint was not found; check the model name and base URL.",
    "context_limit": "The conversation is too long for the model; drop files from the context or /reset.",
    "content_filter": "The provider's content filter stopped the answer; rephrase the request.",
    "tool_rejected": "The provider rejected a tool call in the conversation; send again, or /reset if it repeats.",
}

# What an error inside a 200 stream says, by the words providers use for it (type, code or message),
# checked in order. SOURCE: Anthropic error types (docs.anthropic.com/en/api/errors), OpenAI error
# codes (platform.openai.com/docs/guides/error-codes), and the texts vLLM, Ollama and llama.cpp send.
_STREAM_ERROR_WORDS: tuple[tuple[ErrorKind, tuple[str, ...]], ...] = (
    ("overloaded", ("overloaded", "server is busy", "capacity", "unavailable")),
    ("rate_limit", ("rate_limit", "rate limit", "too many requests", "quota")),
    ("context_limit", ("context_length", "context length", "context window", "prompt is too long", "too many tokens", "maximum context", "exceeds the limit", "token limit")),
    ("content_filter", ("content_filter", "content filter", "content management", "content_policy", "safety")),
    ("auth", ("authentication", "permission", "api key", "unauthorized")),
    ("tool_rejected", ("tool_use", "tool_result", "tool call", "tool_call", "function call", "function_call", "tool_choice")),
    ("bad_request", ("invalid_request", "invalid request", "bad request", "invalid")),
    ("server", ("api_error", "server_error", "internal", "timeout")),
)
_RETRYABLE_KINDS = frozenset({"overloaded", "rate_limit", "server"})


def classify_stream_error(provider: str, etype: str, code: str, message: str) -> ProviderError:
    """An error that arrived inside an HTTP 200 stream, classified by what it says.

    Retryable only when retrying can help (overload, rate limit, a server fault);
    a rejected request, a token limit or a content filter fails at once.
    """
    said = " ".join(str(part) for part in (etype, code, message) if part).lower()
    kind: ErrorKind = "server"
    for candidate, words in _STREAM_ERROR_WORDS:
        if any(word in said for word in words):
            kind = candidate
            break
    else:
        text = f"{provider} reported an error in the stream: {message or etype or code or 'no details'}"
        return ProviderError("server", text, retryable=False)
    labels = {
        "overloaded": "is overloaded",
        "rate_limit": "is rate-limiting requests",
        "context_limit": "says the request is over the model's token limit",
        "content_filter": "stopped the answer with its content filter",
        "auth": "rejected the credentials",
        "tool_rejected": "rejected a tool call",
        "bad_request": "rejected the request",
        "server": "had an internal error",
    }
    detail = f": {message}" if message else ""
    return ProviderError(kind, f"{provider} {labels[kind]}{detail}", retryable=kind in _RETRYABLE_KINDS)


class ProviderError(Exception):
    """A model call failed. ``kind`` classifies it; ``hint`` says what to do."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        partial: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        """Seconds the provider asked us to wait (``retry-after``), if it said."""
        self.partial = partial
        """Text already streamed before the failure."""

    @property
    def hint(self) -> str:
        """What the user can do about it."""
        return _HINTS.get(self.kind, "")

    def user_message(self) -> str:
        """One human line: what happened and what to do."""
        status = f" (HTTP {self.status})" if self.status else ""
        return f"{self} {status}".strip() + (f". {self.hint}" if self.hint else "")


class SDKProvider:
    """What both SDK-backed adapters share: settings, a lazily built client, the identifier."""

    name = ""
    default_max_tokens: int | None = None

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
        idle_timeout: float = 90.0,
        max_tokens: int | None = None,
    ) -> None:
        self.model = model
        self._api_key = api_key or None
        self._base_url = base_url or None
        self.max_retries = max_retries
        self.idle_timeout = idle_timeout
        self.max_tokens = max_tokens or self.default_max_tokens
        self._client: Any = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self._base_url!r})"

    @property
    def client(self) -> Any:
        """The SDK client, created (and the SDK imported) on first use."""
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def prewarm(self) -> None:
        """Import the SDK and build the client now (call from a thread after first paint)."""
        self.client  # noqa: B018 - for its side effect

    async def ready_client(self) -> Any:
        """The client, built in a thread the first time so the SDK import never blocks the event loop."""
        if self._client is None:
            import asyncio

            await asyncio.to_thread(self.prewarm)
        return self._client

    def _make_client(self) -> Any:
        raise NotImplementedError

    def get_provider_identifier(self) -> str:
        return f"{self.name}:{self.model}"


@runtime_checkable
class ProviderAdapter(Protocol):
    """The duck-typed provider contract of SPEC.md section 2."""

    name: str
    model: str

    async def send_message(self, messages: Sequence[Message], system_prompt: str, tools: Sequence[ToolSpec]) -> Any:
        """One non-streaming call; returns the vendor's response object."""
        ...

    def stream_message(self, messages: Sequence[Message], system_prompt: str, tools: Sequence[ToolSpec]) -> AsyncIterator[StreamItem]:
        """A streaming call yielding text deltas, complete tool calls and then one ResponseComplete."""
        ...

    def extract_tool_calls(self, response: Any) -> dict[str, Any]:
        """``{"content", "tool_calls": [{"id", "name", "parameters"}], "awaiting_tool_response"}``."""
        ...

    def format_tool_result(self, tool_call: ToolCall | dict[str, Any], result: TaskResult) -> dict[str, Any]:
        """The vendor's tool-result message for one call."""
        ...

    def get_provider_identifier(self) -> str:
        """E.g. ``anthropic:claude-sonnet-4-5``."""
        ...


def retry_after_seconds(exc: BaseException) -> float | None:
    """The ``retry-after`` (or ``retry-after-ms``) header of an SDK status error, in seconds."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000.0
        if headers.get("retry-after"):
            return float(headers["retry-after"])
    except (TypeError, ValueError):
        return None
    return None


def is_transport_error(exc: BaseException) -> bool:
    """True for the HTTP client's own errors (a reset connection, a truncated chunked body)."""
    return any(cls.__module__.split(".")[0] in {"httpx", "httpx2", "httpcore", "httpcore2"} for cls in type(exc).__mro__)


NEUTRAL_TOOL_KEYS = ("name", "description", "input_schema")


def neutral_tool_spec(spec: ToolSpec) -> dict[str, Any]:
    """The wire-safe part of a tool spec (our own keys such as ``requires_approval`` dropped)."""
    out = {k: spec[k] for k in NEUTRAL_TOOL_KEYS if k in spec}
    out.setdefault("description", "")
    out.setdefault("input_schema", {"type": "object", "properties": {}})
    return out


def canonical_tools(tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    """Tool specs in a stable order (by name) with every mapping's keys sorted.

    The tools are the first thing a request renders, so their bytes must not
    depend on registration order: any change there invalidates every cached prefix.
    """
    ordered = sorted(tools, key=lambda spec: str(spec.get("name", "")))
    return [json.loads(json.dumps(neutral_tool_spec(spec), sort_keys=True, default=str)) for spec in ordered]


def interrupted_note(message: Message) -> str:
    """The note sent after an interrupted assistant message's text, saying why it stops there."""
    if message.get("stop_reason") == "incomplete":
        return "[cut off: the connection closed before the answer finished]"
    if message.get("stop_reason") == "error":
        return "[cut off: the provider failed before the answer finished]"
    return "[interrupted by the user]"


def result_text(result: TaskResult | str) -> str:
    """The text of a tool result as sent to the model."""
    if isinstance(result, str):
        return result
    content = result.get("content", "")
    return content if isinstance(content, str) else str(content)


def generic_extract(response: Any) -> dict[str, Any]:
    """SPEC shape for a plain string or an unknown response: content only, never parsed for tools."""
    if isinstance(response, str):
        content = response
    elif isinstance(response, dict) and isinstance(response.get("content"), str):
        content = response["content"]
    elif response is None:
        content = ""
    else:
        content = str(getattr(response, "content", "") or "") if not isinstance(response, dict) else ""
    return {"content": content, "tool_calls": [], "awaiting_tool_response": False}
