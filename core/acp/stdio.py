"""The agent's stdio: newline-delimited JSON-RPC on the process's own stdin and stdout.

stdout belongs to the protocol. Before anything else runs, the original stdin and
stdout are duplicated for the protocol and file descriptors 0 and 1 are pointed
at ``/dev/null`` and stderr, so a stray ``print`` (ours, aider's, a library's) or a
child process can neither corrupt the stream nor read requests meant for us.

:class:`StdioTransport` is an ``acp`` message transport that answers what the
package's own framing only logs: a line that is not JSON gets a JSON-RPC parse
error (-32700), one that is not a request, notification or response gets an
invalid-request error (-32600). Source of the codes: the JSON-RPC 2.0
specification, section 5.1 (https://www.jsonrpc.org/specification).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
from typing import Any

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""Longest request line accepted (prompts may embed whole files)."""


def take_stdio() -> tuple[int, int]:
    """Duplicate stdin/stdout for the protocol; fd 0 becomes /dev/null and fd 1 stderr.

    Returns:
        The protocol's input and output file descriptors (not inherited by children).
    """
    sys.stdout.flush()
    proto_in, proto_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return proto_in, proto_out


class StdioTransport:
    """An ``acp`` Transport over two file descriptors, answering malformed lines itself."""

    def __init__(self, in_fd: int, out_fd: int) -> None:
        self._in_fd = in_fd
        self._out_fd = out_fd
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self._outgoing: dict[Any, tuple[str, str]] = {}
        """Our requests still unanswered: id -> (method, session id)."""

    async def open(self) -> None:
        """Connect the descriptors to the running loop (a thread reads regular files)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
        if _pollable(self._in_fd):
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(self._in_fd, "rb", buffering=0))
        else:  # a file, /dev/null or a terminal: epoll refuses files, so a thread reads
            _feed_from_thread(loop, reader, self._in_fd)
        self._reader = reader
        if _pollable(self._out_fd):
            transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(self._out_fd, "wb", buffering=0))
            self._writer = asyncio.StreamWriter(transport, protocol, None, loop)
        else:
            self._writer = None  # written with os.write in a thread

    def take_pending(self, method: str, session_id: str) -> list[Any]:
        """The ids of our unanswered ``method`` requests about ``session_id``, forgotten (they are being withdrawn)."""
        ids = [request_id for request_id, sent in self._outgoing.items() if sent == (method, session_id)]
        for request_id in ids:
            del self._outgoing[request_id]
        return ids

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as a JSON line."""
        if "method" in message and "id" in message:
            params = message.get("params")
            self._outgoing[message["id"]] = (message["method"], str(params.get("sessionId", "")) if isinstance(params, dict) else "")
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        async with self._lock:
            if self._closed:
                raise ConnectionError("the protocol stream is closed")
            if self._writer is not None:
                self._writer.write(data)
                await self._writer.drain()
            else:
                await asyncio.to_thread(_write_all, self._out_fd, data)

    async def receive(self) -> dict[str, Any] | None:
        """The next valid message; malformed lines are answered with an error and skipped."""
        assert self._reader is not None, "open() first"
        while True:
            line, too_long = await self._read_line()
            if line is None:
                return None
            if too_long:
                await self._reply_error(None, INVALID_REQUEST, f"Invalid request: the message is longer than {MAX_MESSAGE_BYTES} bytes")
                continue
            text = line.strip()
            if not text:
                continue
            try:
                message = json.loads(text)
            except ValueError as exc:
                log.warning("malformed JSON-RPC line (%d bytes): %s", len(text), exc)
                await self._reply_error(None, PARSE_ERROR, f"Parse error: {exc}")
                continue
            problem = _shape_problem(message)
            if problem:
                log.warning("invalid JSON-RPC message: %s", problem)
                request_id = message.get("id") if isinstance(message, dict) and _valid_id(message.get("id")) else None
                if isinstance(message, dict) and "method" in message and "id" not in message:
                    continue  # a broken notification gets no answer (JSON-RPC 2.0, section 4.1)
                await self._reply_error(request_id, INVALID_REQUEST, f"Invalid request: {problem}")
                continue
            if "method" not in message:
                self._outgoing.pop(message.get("id"), None)
            return message

    async def close(self) -> None:
        """Close the output stream."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._writer is not None:
                self._writer.close()

    async def _reply_error(self, request_id: Any, code: int, message: str) -> None:
        try:
            await self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})
        except (ConnectionError, OSError):
            log.info("could not answer a malformed message: the client is gone")

    async def _read_line(self) -> tuple[bytes | None, bool]:
        """(line, False); (b"", True) for an over-long line (skipped); (None, False) at EOF."""
        assert self._reader is not None
        too_long = False
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                if too_long:
                    return b"", True
                return (exc.partial or None), False
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
                too_long = True
                continue
            return (b"", True) if too_long else (line, False)


def _pollable(fd: int) -> bool:
    """True for pipes and sockets, which the event loop can watch."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, (str, int)) and not isinstance(value, bool))


def _shape_problem(message: Any) -> str:
    """Why ``message`` is not a JSON-RPC 2.0 request, notification or response ('' if it is)."""
    if not isinstance(message, dict):
        return f"expected a JSON object, got {type(message).__name__}"
    if message.get("jsonrpc") != "2.0":
        return '"jsonrpc" must be "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str) or not message["method"]:
            return '"method" must be a non-empty string'
        if "params" in message and not isinstance(message["params"], (dict, list, type(None))):
            return '"params" must be an object'
    elif "id" not in message or not ("result" in message or "error" in message):
        return 'a message needs a "method" (request or notification) or an "id" with "result" or "error" (response)'
    if "id" in message and not _valid_id(message["id"]):
        return '"id" must be a string, a number or null'
    return ""


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int) -> None:
    def pump() -> None:
        try:
            while chunk := os.read(fd, 65536):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
        except OSError:
            log.exception("reading the protocol input failed")
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
