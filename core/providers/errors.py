"""What a failed model call was, in one vocabulary for every provider.

:func:`classify_error` maps an exception of either SDK (``anthropic`` or ``openai``: their
error classes share names and meanings) or of the HTTP client to a :class:`ProviderError`
with a kind, whether retrying can help, and one human line that keeps the provider's own
words (its message and its error type or code). :func:`classify_stream_error` does the
same for an error that arrived inside an HTTP 200 stream.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

log = logging.getLogger(__name__)

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
    "tool_generation",
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
    "tool_generation": "The model wrote a tool call the provider could not parse; send again, or rephrase if it repeats.",
}

# What an error says, by the words providers use for it (type, code or message), checked in order.
# SOURCE: Anthropic error types (docs.anthropic.com/en/api/errors), OpenAI error codes
# (platform.openai.com/docs/guides/error-codes), Groq's tool_use_failed (console.groq.com/docs/tool-use),
# OpenRouter's mid-stream errors (openrouter.ai/docs/api-reference/errors), and the texts vLLM,
# Ollama, llama.cpp and LiteLLM send.
_ERROR_WORDS: tuple[tuple[ErrorKind, tuple[str, ...]], ...] = (
    ("tool_generation", ("tool_use_failed", "failed to call a function", "failed to parse tool call", "tool call validation failed")),
    ("overloaded", ("overloaded", "server is busy", "capacity", "unavailable")),
    ("rate_limit", ("rate_limit", "rate limit", "too many requests", "quota", "throttl")),
    ("context_limit", (
        "context_length", "context length", "context window", "prompt is too long", "too many tokens", "maximum context",
        "exceeds the limit", "token limit", "input is too long", "exceed_context", "maximum model length", "max_model_len",
    )),
    ("content_filter", ("content_filter", "content filter", "content management", "content_policy", "safety", "guardrail")),
    ("auth", ("authentication", "permission", "api key", "unauthorized")),
    ("tool_rejected", ("tool_use", "tool_result", "tool call", "tool_call", "function call", "function_call", "tool_choice")),
    ("bad_request", ("invalid_request", "invalid request", "bad request", "invalid")),
    ("server", ("api_error", "server_error", "internal", "timeout", "timed out")),
)
_RETRYABLE_KINDS = frozenset({"overloaded", "rate_limit", "server", "tool_generation"})
"""Kinds a retry can help: a busy or failing server, or a model's unparseable tool call (sampled again)."""

_STREAM_LABELS = {
    "tool_generation": "could not parse the model's tool call",
    "overloaded": "is overloaded",
    "rate_limit": "is rate-limiting requests",
    "context_limit": "says the request is over the model's token limit",
    "content_filter": "stopped the answer with its content filter",
    "auth": "rejected the credentials",
    "tool_rejected": "rejected a tool call",
    "bad_request": "rejected the request",
    "server": "had an internal error",
}


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
        said = f"{self} {status}".strip()
        if not self.hint:
            return said
        return f"{said} {self.hint}" if said.endswith((".", "!", "?")) else f"{said}. {self.hint}"


def _kind_of(said: str) -> ErrorKind | None:
    lowered = said.lower()
    for candidate, words in _ERROR_WORDS:
        if any(word in lowered for word in words):
            return candidate
    return None


def classify_stream_error(provider: str, etype: str, code: str, message: str) -> ProviderError:
    """An error that arrived inside an HTTP 200 stream, classified by what it says.

    The line shown keeps the provider's words: its message and, in brackets, its own
    name for the error (``overloaded_error``, ``tool_use_failed``, a numeric code).
    Retryable only when retrying can help (overload, rate limit, a server fault, a tool
    call the model wrote badly); a rejected request, a token limit or a content filter
    fails at once.
    """
    etype, code, message = str(etype or ""), str(code or ""), str(message or "")
    kind = _kind_of(" ".join(part for part in (etype, code, message) if part))
    named = ", ".join(dict.fromkeys(f"code {part}" if part.isdigit() else part for part in (etype, code) if part and part not in message))
    said = f" ({named})" if named else ""
    if kind is None:
        text = f"{provider} reported an error in the stream{said}: {message or 'no details'}"
        return ProviderError("server", text, retryable=False)
    detail = f": {message}" if message else ""
    return ProviderError(kind, f"{provider} {_STREAM_LABELS[kind]}{said}{detail}", retryable=kind in _RETRYABLE_KINDS)


def _sdk_classes(exc: BaseException) -> set[str]:
    """Names of the SDK error classes ``exc`` is an instance of (``anthropic`` and ``openai`` share them)."""
    return {cls.__name__ for cls in type(exc).__mro__ if cls.__module__.split(".")[0] in {"anthropic", "openai"}}


_TIMEOUT_PHASES = {
    "ConnectTimeout": "connecting",
    "WriteTimeout": "sending the request",
    "ReadTimeout": "waiting for the reply",
    "PoolTimeout": "waiting for a free connection",
}
"""The HTTP client's timeout classes (``httpx``'s, and the copy ``anthropic`` bundles), by what was being waited for."""


def _timeout_phase(exc: BaseException) -> str:
    """`` while connecting`` and the like: which wait ran out, from the exception's causes."""
    seen = exc.__cause__ or exc.__context__
    for _ in range(8):  # a chain is a few links long; the bound guards against a cycle
        if seen is None:
            break
        phase = next((_TIMEOUT_PHASES[cls.__name__] for cls in type(seen).__mro__ if cls.__name__ in _TIMEOUT_PHASES), None)
        if phase:
            return f" while {phase}"
        seen = seen.__cause__ or seen.__context__
    return ""


def classify_error(exc: BaseException, provider: str) -> ProviderError:
    """Map an exception of either SDK, or of the HTTP client, to a ProviderError (never echoing the key).

    Args:
        exc: what the SDK raised.
        provider: how the provider is named in the message (``Anthropic``, a host name).
    """
    if isinstance(exc, ProviderError):
        return exc
    classes = _sdk_classes(exc)
    if "APITimeoutError" in classes:
        return ProviderError("timeout", f"The request to {provider} timed out{_timeout_phase(exc)}", retryable=True)
    if "APIConnectionError" in classes:
        return ProviderError("network", f"Could not connect to {provider}", retryable=True)
    if "APIStatusError" in classes:
        error = _classify_status(exc, provider)
        error.retry_after = retry_after_seconds(exc)
        return error
    if "APIError" in classes:
        # An error object inside the SSE stream (HTTP 200): classified by what it says.
        body = getattr(exc, "body", None)
        inner = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else body
        if isinstance(inner, dict):
            return classify_stream_error(provider, inner.get("type") or "", inner.get("code") or "", inner.get("message") or str(exc))
        return classify_stream_error(provider, "", "", body if isinstance(body, str) and body else str(getattr(exc, "message", exc)))
    if is_transport_error(exc):
        return ProviderError("network", f"The connection to {provider} broke: {type(exc).__name__}", retryable=True)
    if isinstance(exc, json.JSONDecodeError | ValueError):
        # A garbled event: retried like a broken connection (the loop never retries after text).
        return ProviderError("server", f"Malformed response from {provider}: {exc}", retryable=True)
    log.exception("unexpected provider failure")
    return ProviderError("server", f"Unexpected provider failure: {type(exc).__name__}")


def _classify_status(exc: Any, provider: str) -> ProviderError:
    """An HTTP error status (or an SSE ``error`` event the Anthropic SDK raises with status 200)."""
    status = exc.status_code
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    etype = str((error or {}).get("type") or "")
    code = str((error or {}).get("code") or "")
    message = (error or {}).get("message") or getattr(exc, "message", "") or str(exc)
    if status == 200:
        return classify_stream_error(provider, etype, code, (error or {}).get("message") or "")
    if etype == "overloaded_error" or status in (503, 529):
        return ProviderError("overloaded", f"{provider} is overloaded: {message}", status=status, retryable=True)
    if etype == "rate_limit_error" or status == 429:
        return ProviderError("rate_limit", f"Rate limited by {provider}: {message}", status=status, retryable=True)
    if status in (401, 403) or etype in {"authentication_error", "permission_error"}:
        return ProviderError("auth", f"{provider} rejected the API key", status=status)
    if status == 413 or etype == "request_too_large":
        return ProviderError("too_large", f"The request is too large for {provider}", status=status)
    if status == 404 or etype == "not_found_error":
        return ProviderError("not_found", f"Not found at {provider}: {message}", status=status)
    if status in (400, 422) or etype == "invalid_request_error":
        if _kind_of(f"{etype} {code} {message}") == "tool_generation":
            named = f" ({code})" if code and code not in message else ""
            return ProviderError("tool_generation", f"{provider} {_STREAM_LABELS['tool_generation']}{named}: {message}", status=status, retryable=True)
        return ProviderError("bad_request", f"{provider} rejected the request: {message}", status=status)
    if status >= 500 or etype == "api_error":
        return ProviderError("server", f"{provider} server error: {message}", status=status, retryable=True)
    return ProviderError("server", f"{provider} error: {message}", status=status)


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
