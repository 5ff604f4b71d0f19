"""The provider contract: what the handler needs from any model vendor.

Adapters take provider-neutral messages (:class:`core.types.Message`) and
provider-neutral tool specs (``{"name", "description", "input_schema"}``) and
convert both to their vendor's wire format; nothing outside an adapter's module
knows that format.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Protocol, Sequence, runtime_checkable

from core.events import ResponseComplete, ResponseStarted, StreamItem, ToolCallReady
from core.providers.errors import ProviderError
from core.providers.generic_models import keep_generic_models
from core.types import Message, TaskResult, ToolCall

__all__ = ["ProviderError", "ResponseComplete", "ResponseStarted", "ToolCallReady"]  # the same classes as core.events'

ToolSpec = dict[str, Any]

STOP_REASONS = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "content_filter", "pause_turn")
"""Normalised stop reasons; any other reason a provider gives is carried through as it came."""

_OPENAI_FINISH = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens"}


def normalise_stop_reason(reason: str | None) -> str:
    """A provider's stop or finish reason in the vocabulary of :data:`STOP_REASONS`."""
    return _OPENAI_FINISH.get(reason or "", reason or "")


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
            keep_generic_models()  # before the SDK builds its stream types (the prewarm's too)
            self._client = self._make_client()
        return self._client

    def prewarm(self) -> None:
        """Import the SDK and build the client now (call from a thread after first paint)."""
        self.client  # noqa: B018 - for its side effect

    async def ready_client(self) -> Any:
        """The client, built in a thread the first time so the SDK import never blocks the event loop."""
        if self._client is None:
            import asyncio

            await asyncio.to_thread(SDKProvider.prewarm, self)  # the client only: a subclass's extra warming is not waited for
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
