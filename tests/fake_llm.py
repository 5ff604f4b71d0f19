"""A loopback fake LLM server speaking the real wire formats.

It serves the Anthropic Messages API (``POST /v1/messages``, JSON or SSE) and the
OpenAI chat-completions API (``POST /v1/chat/completions``, JSON or SSE) on
127.0.0.1, so tests drive the real ``anthropic`` and ``openai`` SDKs (and aider,
through litellm) against it with ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``.

Responses are scripted in order with :meth:`FakeLLM.script`; when the script is
empty, :attr:`FakeLLM.responder` (a callable of the request) answers. Every
request is recorded in :attr:`FakeLLM.requests`.

Scripted items:

* :class:`Reply` - text and/or tool calls, streamed in small chunks, optionally paced.
* :class:`HTTPError` - a status code with the provider's error body (429, 529, 401...).
* :class:`StreamError` - an SSE ``error`` event after some text chunks.
* :class:`Drop` - the connection is closed after some chunks (mid tool-call JSON too).
* :class:`Stall` - headers (and optionally some chunks) are sent, then silence.
* :class:`Garbage` - a malformed SSE event (not JSON) in the middle of a reply.
* :class:`CleanClose` - a well-formed but unfinished SSE body (``Connection: close``, no
  length, no chunked encoding) whose socket is then closed cleanly: to the client the
  body simply ends, as when a proxy or local server gives up mid-answer.
* :class:`Raw` - recorded bytes replayed exactly as given (the wire-compatibility suite).

``Reply(thinking=...)`` (Anthropic) streams a thinking block with a signature first,
``Reply(redacted=...)`` redacted_thinking blocks, ``Reply(reasoning=...)`` (OpenAI side)
``reasoning_content`` deltas. Like the real APIs, the server then answers 400 to a later
request whose assistant message of that tool-use turn lost or altered them
(:attr:`FakeLLM.issued_thinking`).

``Reply(split_bytes=N)`` sends the reply's SSE bytes in pieces of ``N`` bytes, so
multi-byte UTF-8 characters arrive split across reads.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

from tests.fake_cache import CacheError, PromptCaching


@dataclass
class Tool:
    """A tool call the fake model makes."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    raw_json: str | None = None
    """Exact argument JSON to send instead of ``input`` (for malformed-argument cases)."""


@dataclass
class Reply:
    """An assistant response: text, then tool calls.

    ``chunk`` is the number of characters per text delta; ``tokens_per_second``
    paces the deltas (one delta counts ~``chunk/4`` tokens); ``None`` sends unpaced.
    """

    text: str = ""
    tools: list[Tool] = field(default_factory=list)
    chunk: int = 12
    tokens_per_second: float | None = None
    stop_reason: str | None = None
    input_tokens: int | None = None
    """Reported input tokens; None counts the request and accounts prompt caching (:mod:`tests.fake_cache`)."""
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int | None = None
    omit_done: bool = False
    """OpenAI side: leave out the final ``data: [DONE]``."""
    split_bytes: int | None = None
    """Send the SSE stream in pieces of this many bytes (cutting UTF-8 characters), each flushed apart."""
    thinking: str = ""
    """Anthropic: a thinking block (with a signature) before the text."""
    redacted: tuple[str, ...] = ()
    """Anthropic: redacted_thinking blocks (their opaque ``data``) after the thinking block."""
    reasoning: str = ""
    """OpenAI side: ``reasoning_content`` deltas before the text (DeepSeek, vLLM, Qwen)."""
    refusal: str = ""
    """OpenAI side: ``refusal`` deltas instead of text."""


@dataclass
class HTTPError:
    """An HTTP error response with the provider's error body."""

    status: int
    message: str = "error"
    error_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class StreamError:
    """An in-stream SSE error event after ``after_chunks`` text chunks of ``text``."""

    text: str = ""
    after_chunks: int = 0
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    input_tokens: int = 0
    """Input tokens reported before the error (Anthropic's ``message_start``; the OpenAI side reports none)."""


@dataclass
class Drop:
    """Close the connection abruptly after ``after_events`` SSE events of ``reply``."""

    reply: Reply
    after_events: int


@dataclass
class Stall:
    """Send ``before`` events of ``reply``, then stay silent for ``seconds``."""

    reply: Reply = field(default_factory=Reply)
    before: int = 0
    seconds: float = 30.0


@dataclass
class Garbage:
    """Send ``after_events`` SSE events of ``reply``, then ``line`` (a malformed event), then the rest."""

    reply: Reply
    after_events: int = 1
    line: bytes = b"data: {this is not json\n\n"


@dataclass
class CleanClose:
    """Send the first ``after_events`` SSE events of ``reply`` with ``Connection: close`` framing, then close.

    No content-length and no chunked encoding: the body ends when the socket closes,
    and it closes cleanly (no reset), so the HTTP client sees a normal end of body.
    """

    reply: Reply
    after_events: int | None = None
    drop_last: int = 0
    """With ``after_events`` None: send every event but the last ``drop_last``."""


@dataclass
class Raw:
    """Bytes replayed exactly as given: a recorded response body.

    ``framing``: ``close`` (``Connection: close``, body ends with the socket),
    ``chunked`` (one HTTP chunk per ``split`` bytes, or the whole body) or ``length``.
    """

    body: bytes
    status: int = 200
    content_type: str = "text/event-stream"
    framing: str = "chunked"
    split: int | None = None


Scripted = Reply | HTTPError | StreamError | Drop | Stall | Garbage | CleanClose | Raw


@dataclass
class Request:
    """A recorded request."""

    api: str  # "anthropic" or "openai"
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def system(self) -> str:
        """The system prompt as text, whichever API sent it."""
        if self.api == "anthropic":
            system = self.body.get("system", "")
            if isinstance(system, list):
                return "".join(b.get("text", "") for b in system)
            return system or ""
        return "".join(
            m["content"] if isinstance(m.get("content"), str) else ""
            for m in self.messages
            if m.get("role") == "system"
        )

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") or []
        if self.api == "anthropic":
            return [t["name"] for t in tools]
        return [t["function"]["name"] for t in tools]

    def last_user_text(self) -> str:
        """Text of the last user message (string or text blocks), without its per-turn ``<context>`` block."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    return content.split("</context>\n\n", 1)[1] if content.startswith("<context>\n") else content
                texts = [b.get("text", "") for b in content if b.get("type") == "text" and not b.get("text", "").startswith("<context>\n")]
                if texts:
                    return "\n".join(texts)
        return ""

    def last_user_context(self) -> str:
        """The per-turn ``<context>`` block of the last user message with text ('' if none)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                blocks = [{"text": content}] if isinstance(content, str) else [b for b in content if b.get("type") == "text"]
                for block in blocks:
                    text = block.get("text", "")
                    if text.startswith("<context>\n"):
                        return text.split("</context>", 1)[0] + "</context>"
                if blocks:
                    return ""
        return ""


def _replace_reply(item: Any, reply: Reply, **changes: Any) -> Any:
    """``item`` (a Reply, or a Drop/Stall/Garbage holding one) with its reply changed."""
    counted = dataclasses.replace(reply, **changes)
    return counted if item is reply else dataclasses.replace(item, reply=counted)


def _anthropic_input(reply: Reply) -> dict[str, int]:
    """Anthropic's input usage fields of a reply (input excludes the cached tokens)."""
    return {
        "input_tokens": reply.input_tokens or 0,
        "cache_creation_input_tokens": reply.cache_creation_input_tokens,
        "cache_read_input_tokens": reply.cache_read_input_tokens,
    }


def _openai_usage(reply: Reply, out_tokens: int) -> dict[str, Any]:
    """OpenAI's usage object (``prompt_tokens`` includes ``prompt_tokens_details.cached_tokens``)."""
    prompt = reply.input_tokens or 0
    return {
        "prompt_tokens": prompt,
        "completion_tokens": out_tokens,
        "total_tokens": prompt + out_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.cache_read_input_tokens},
    }


def _sse(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] if text else []


class _Server(ThreadingHTTPServer):
    """The fake's HTTP server; a client that hangs up is not an error of the server's.

    A test that stops a stream early (an error mid-stream, a cancelled turn) closes its
    connection; under load the handler may then meet the closed socket outside its own guard
    (reading the next request, flushing at the end). ``socketserver`` printed that traceback to
    stderr, where the tests that check the app printed none found it.
    """

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class FakeLLM:
    """The server. Use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(self) -> None:
        self._script: list[Scripted] = []
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        self.responder: Callable[[Request], Scripted] = lambda request: Reply(text="OK")
        self._ids = itertools.count(1)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._stop_event = threading.Event()
        self.caching: PromptCaching | None = None
        """Prompt-cache accounting (:mod:`tests.fake_cache`) for replies that leave ``input_tokens`` unset;
        without it such replies report the request's size (bytes / 4) as input, uncached."""
        self.nodelay = True
        """Set TCP_NODELAY on connections: without it each streamed response waits ~40 ms for a delayed ACK."""
        self.issued_thinking: dict[str, list[dict[str, Any]]] = {}
        """Reasoning the server sent, by the id of a tool call of the same message: Anthropic thinking
        blocks, or ``[{"reasoning_content": text}]`` on the OpenAI side. Requests must send it back unchanged."""
        self.rejected: list[str] = []
        """Why requests were answered 400 for lost or altered reasoning."""

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> "FakeLLM":
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=lambda: self._server.serve_forever(poll_interval=0.05), name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop_event.set()
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> "FakeLLM":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def anthropic_url(self) -> str:
        """Value for ``ANTHROPIC_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Value for ``OPENAI_BASE_URL`` / ``OPENAI_API_BASE``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ---------------------------------------------------------
    def script(self, *items: Scripted) -> None:
        """Queue responses, answered in order, one per request."""
        with self._lock:
            self._script.extend(items)

    def clear(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()

    @property
    def pending(self) -> int:
        """Scripted responses not yet used."""
        with self._lock:
            return len(self._script)

    def requests_for(self, api: str) -> list[Request]:
        return [r for r in self.requests if r.api == api]

    def _next(self, request: Request) -> Scripted:
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.pop(0)
        return self.responder(request)

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"


class _Handler(BaseHTTPRequestHandler):
    server_fake: FakeLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        if self.server_fake.nodelay:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # -- plumbing ----------------------------------------------------------
    def _read_body(self) -> dict[str, Any]:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            return json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return {}

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _abort(self) -> None:
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.close_connection = True

    def do_GET(self) -> None:  # /v1/models and friends
        self._send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    def do_POST(self) -> None:
        path = self.path.split("?")[0]
        body = self._read_body()
        if path.endswith("/messages/count_tokens"):
            self._send_json(200, {"input_tokens": 100})
            return
        if path.endswith("/messages"):
            api = "anthropic"
        elif path.endswith("/chat/completions"):
            api = "openai"
        else:
            self._send_json(404, {"error": {"message": f"no route {path}"}})
            return
        request = Request(api=api, path=path, headers={k.lower(): v for k, v in self.headers.items()}, body=body)
        item = self.server_fake._next(request)
        problem = _reasoning_problem(api, body, self.server_fake.issued_thinking)
        if problem:
            self.server_fake.rejected.append(problem)
            item = HTTPError(400, problem, "invalid_request_error")
        try:
            self._respond(api, body, item)
        except (BrokenPipeError, ConnectionResetError):
            pass

    # -- responses ---------------------------------------------------------
    def _account(self, api: str, body: dict[str, Any], item: Scripted) -> Scripted:
        """``item`` with its reply's usage counted from the request, when the script left it unset."""
        reply = item if isinstance(item, Reply) else getattr(item, "reply", None)
        if not isinstance(reply, Reply) or reply.input_tokens is not None:
            return item
        caching = self.server_fake.caching
        if caching is None:
            return _replace_reply(item, reply, input_tokens=math.ceil(len(json.dumps(body)) / 4))
        try:
            if api == "anthropic":
                changes = caching.anthropic.account(body)
            else:
                usage = caching.openai.account(body)
                changes = {"input_tokens": usage["prompt_tokens"], "cache_read_input_tokens": usage["cached_tokens"]}
        except CacheError as exc:
            return HTTPError(400, str(exc))
        return _replace_reply(item, reply, **changes)

    def _respond(self, api: str, body: dict[str, Any], item: Scripted) -> None:
        item = self._account(api, body, item)
        if isinstance(item, HTTPError):
            self._send_error(api, item)
            return
        stream = bool(body.get("stream"))
        model = body.get("model", "fake-model")
        if isinstance(item, Reply) and not stream:
            self._send_json(200, self._complete_body(api, model, item))
            return
        if isinstance(item, StreamError):
            reply = Reply(text=item.text, input_tokens=item.input_tokens)
            events = list(self._events(api, model, reply, body))
            # message_start / role chunk + the requested number of text chunks
            head = 2 if api == "anthropic" else 1
            self._start_sse()
            for data in events[: head + item.after_chunks]:
                self._write_chunk(data)
            if api == "anthropic":
                err = {"type": "error", "error": {"type": item.error_type, "message": item.message}}
                self._write_chunk(_sse("error", err))
            else:
                self._write_chunk(_sse(None, {"error": {"message": item.message, "type": item.error_type}}))
            self._end_chunks()
            return
        if isinstance(item, Drop):
            events = list(self._events(api, model, item.reply, body))
            self._start_sse()
            for data in events[: item.after_events]:
                self._write_chunk(data)
            self._abort()
            return
        if isinstance(item, Stall):
            events = list(self._events(api, model, item.reply, body))
            self._start_sse()
            for data in events[: item.before]:
                self._write_chunk(data)
            self.server_fake._stop_event.wait(item.seconds)
            self._abort()
            return
        if isinstance(item, CleanClose):
            events = list(self._events(api, model, item.reply, body))
            end = item.after_events if item.after_events is not None else len(events) - item.drop_last
            self._send_close_framed(b"".join(events[:end]))
            return
        if isinstance(item, Raw):
            self._send_raw(item)
            return
        if isinstance(item, Garbage):
            events = list(self._events(api, model, item.reply, body))
            self._start_sse()
            for data in events[: item.after_events]:
                self._write_chunk(data)
            self._write_chunk(item.line)
            for data in events[item.after_events :]:
                self._write_chunk(data)
            self._end_chunks()
            return
        assert isinstance(item, Reply)
        if item.split_bytes:
            self._send_split(api, model, item, body)
            return
        self._start_sse()
        delay = 0.0
        if item.tokens_per_second:
            delay = max(item.chunk / 4.0, 1.0) / item.tokens_per_second
        for data in self._events(api, model, item, body):
            self._write_chunk(data)
            if delay and b"delta" in data:
                time.sleep(delay)
        self._end_chunks()

    def _send_split(self, api: str, model: str, reply: Reply, body: dict[str, Any]) -> None:
        """The reply's SSE bytes in ``split_bytes`` pieces, each its own flushed HTTP chunk.

        The client's HTTP parser hands each chunk on separately, so the SDK's SSE decoder
        sees multi-byte characters cut in two.
        """
        data = b"".join(self._events(api, model, reply, body))
        size = max(1, reply.split_bytes or 1)
        self._start_sse()
        for start in range(0, len(data), size):
            self._write_chunk(data[start : start + size])
        self._end_chunks()

    def _send_close_framed(self, data: bytes, status: int = 200, content_type: str = "text/event-stream") -> None:
        """``data`` as a body delimited by the connection closing, then a clean close (FIN, no reset)."""
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def _send_raw(self, item: Raw) -> None:
        if item.framing == "close":
            self._send_close_framed(item.body, item.status, item.content_type)
            return
        self.send_response(item.status)
        self.send_header("content-type", item.content_type)
        if item.framing == "length":
            self.send_header("content-length", str(len(item.body)))
            self.end_headers()
            self.wfile.write(item.body)
            self.wfile.flush()
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        size = item.split or max(1, len(item.body))
        for start in range(0, len(item.body), size):
            self._write_chunk(item.body[start : start + size])
        self._end_chunks()

    def _send_error(self, api: str, item: HTTPError) -> None:
        if api == "anthropic":
            kind = item.error_type or {
                400: "invalid_request_error",
                401: "authentication_error",
                403: "permission_error",
                404: "not_found_error",
                413: "request_too_large",
                429: "rate_limit_error",
                500: "api_error",
                529: "overloaded_error",
            }.get(item.status, "api_error")
            body = {"type": "error", "error": {"type": kind, "message": item.message}}
        else:
            body = {"error": {"message": item.message, "type": item.error_type or "error", "code": None}}
        self._send_json(item.status, body, item.headers)

    def _tool_ids(self, api: str, reply: Reply) -> list[str]:
        prefix = "toolu" if api == "anthropic" else "call"
        return [t.id or self.server_fake.next_id(prefix) for t in reply.tools]

    def _complete_body(self, api: str, model: str, reply: Reply) -> dict[str, Any]:
        ids = self._tool_ids(api, reply)
        out_tokens = reply.output_tokens or max(1, len(reply.text) // 4)
        if api == "anthropic":
            content: list[dict[str, Any]] = []
            if reply.text:
                content.append({"type": "text", "text": reply.text})
            for tool, tid in zip(reply.tools, ids):
                content.append({"type": "tool_use", "id": tid, "name": tool.name, "input": tool.input})
            return {
                "id": self.server_fake.next_id("msg"),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": reply.stop_reason or ("tool_use" if reply.tools else "end_turn"),
                "stop_sequence": None,
                "usage": {**_anthropic_input(reply), "output_tokens": out_tokens},
            }
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tools:
            message["tool_calls"] = [
                {
                    "id": tid,
                    "type": "function",
                    "function": {"name": t.name, "arguments": t.raw_json if t.raw_json is not None else json.dumps(t.input)},
                }
                for t, tid in zip(reply.tools, ids)
            ]
        return {
            "id": self.server_fake.next_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": reply.stop_reason or ("tool_calls" if reply.tools else "stop")}
            ],
            "usage": _openai_usage(reply, out_tokens),
        }

    def _events(self, api: str, model: str, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        if api == "anthropic":
            yield from self._anthropic_events(model, reply)
        else:
            yield from self._openai_events(model, reply, body)

    def _anthropic_events(self, model: str, reply: Reply) -> Iterator[bytes]:
        ids = self._tool_ids("anthropic", reply)
        out_tokens = reply.output_tokens or max(1, len(reply.text) // 4)
        yield _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": self.server_fake.next_id("msg"),
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**_anthropic_input(reply), "output_tokens": 1},
                },
            },
        )
        index = 0
        issued: list[dict[str, Any]] = []
        if reply.thinking:
            signature = f"sig-{self.server_fake.next_id('think')}-" + "A" * 40
            issued.append({"type": "thinking", "thinking": reply.thinking, "signature": signature})
            yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            for piece in _chunks(reply.thinking, reply.chunk):
                yield _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}})
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": signature}})
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        for data in reply.redacted:
            issued.append({"type": "redacted_thinking", "data": data})
            yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "redacted_thinking", "data": data}})
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        for tid in ids:
            if issued:
                self.server_fake.issued_thinking[tid] = issued
        if reply.text:
            yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            for piece in _chunks(reply.text, reply.chunk):
                yield _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
                )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        else:
            yield _sse("ping", {"type": "ping"})
        for tool, tid in zip(reply.tools, ids):
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": tid, "name": tool.name, "input": {}}},
            )
            raw = tool.raw_json if tool.raw_json is not None else json.dumps(tool.input)
            for piece in _chunks(raw, 10):
                yield _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}},
                )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        yield _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.stop_reason or ("tool_use" if reply.tools else "end_turn"), "stop_sequence": None},
                "usage": {"output_tokens": out_tokens},
            },
        )
        yield _sse("message_stop", {"type": "message_stop"})

    def _openai_events(self, model: str, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        ids = self._tool_ids("openai", reply)
        cid = self.server_fake.next_id("chatcmpl")
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return _sse(
                None,
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                },
            )

        yield chunk({"role": "assistant", "content": ""})
        for piece in _chunks(reply.reasoning, reply.chunk):
            yield chunk({"reasoning_content": piece})
        if reply.reasoning:
            for tid in ids:
                self.server_fake.issued_thinking[tid] = [{"reasoning_content": reply.reasoning}]
        for piece in _chunks(reply.refusal, reply.chunk):
            yield chunk({"refusal": piece})
        for piece in _chunks(reply.text, reply.chunk):
            yield chunk({"content": piece})
        for n, (tool, tid) in enumerate(zip(reply.tools, ids)):
            yield chunk({"tool_calls": [{"index": n, "id": tid, "type": "function", "function": {"name": tool.name, "arguments": ""}}]})
            raw = tool.raw_json if tool.raw_json is not None else json.dumps(tool.input)
            for piece in _chunks(raw, 10):
                yield chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]})
        yield chunk({}, reply.stop_reason or ("tool_calls" if reply.tools else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            out_tokens = reply.output_tokens or max(1, len(reply.text) // 4)
            yield _sse(
                None,
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": _openai_usage(reply, out_tokens),
                },
            )
        if not reply.omit_done:
            yield _sse(None, "[DONE]")


def _reasoning_problem(api: str, body: dict[str, Any], issued: dict[str, list[dict[str, Any]]]) -> str:
    """Why the request must be rejected for reasoning it lost or altered, or ``""``.

    Anthropic (docs: extended thinking with tool use): the assistant message of a tool-use
    turn must start with its thinking blocks exactly as sent. DeepSeek (docs: thinking mode,
    tool calls): an assistant message with tool calls in the current turn must carry its
    ``reasoning_content`` back. Wording modelled on their 400 answers.
    """
    if not issued:
        return ""
    messages = body.get("messages") or []
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user" and not _is_tool_result(m)), default=-1)
    for position, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        if api == "anthropic":
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            ids = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
            expected = next((issued[i] for i in ids if i in issued), None)
            if expected is not None and blocks[: len(expected)] != expected:
                return (
                    f"messages.{position}.content.0: thinking blocks in the latest assistant message cannot be modified. "
                    "These blocks must remain as they were in the original response."
                )
        else:
            ids = [c.get("id") for c in message.get("tool_calls") or []]
            expected = next((issued[i] for i in ids if i in issued), None)
            if expected is not None and position > last_user and message.get("reasoning_content") != expected[0]["reasoning_content"]:
                return f"Missing `reasoning_content` field in the assistant message at message index {position}"
    return ""


def _is_tool_result(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
