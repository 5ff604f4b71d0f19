"""A tiny MCP server for the tests, written with the SDK's FastMCP (run as a script).

Tools: ``sleep`` (hangs; writes ``cancelled`` to $MARKER_DIR when the client's
notifications/cancelled reaches it), ``huge`` (a result of N characters), ``env``
(its own environment, for the canary test), ``picture`` (an image), ``oops`` (an
isError result), ``peek`` (read-only), ``crash`` (the process dies mid-call).
``--exit-at-start`` exits before speaking the protocol; ``--http PORT`` serves
streamable HTTP on 127.0.0.1 instead of stdio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

import anyio
from mcp.server.fastmcp import FastMCP, Image
from mcp.types import ToolAnnotations

parser = argparse.ArgumentParser()
parser.add_argument("--exit-at-start", action="store_true")
parser.add_argument("--http", type=int, default=0)
options = parser.parse_args()
if options.exit_at_start:
    print("tiny_server: configuration broken, exiting", file=sys.stderr)
    raise SystemExit(3)

server = FastMCP("tiny", host="127.0.0.1", port=options.http or 8000, log_level="WARNING")


def _mark(name: str) -> None:
    directory = os.environ.get("MARKER_DIR")
    if directory:
        Path(directory, name).write_text("1")


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleep for some seconds, then say so."""
    _mark("sleep-started")
    try:
        await asyncio.sleep(seconds)
    except (asyncio.CancelledError, anyio.get_cancelled_exc_class()):
        _mark("cancelled")
        raise
    return f"slept {seconds}"


@server.tool()
def huge(size: int) -> str:
    """Return a text of ``size`` characters, in lines."""
    line = "x" * 99 + "\n"
    return (line * (size // 100 + 1))[:size]


@server.tool()
def env() -> str:
    """This server's environment, as JSON."""
    return json.dumps(dict(os.environ))


@server.tool()
def picture() -> Image:
    """A small PNG."""
    return Image(data=b"\x89PNG\r\n\x1a\n" + b"\0" * 2040, format="png")


@server.tool()
def oops() -> str:
    """Always fails."""
    raise ValueError("the oops tool always fails")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def peek(key: str) -> str:
    """A read-only lookup."""
    return f"value of {key}"


@server.tool()
def crash() -> str:
    """The server process dies during the call."""
    print("tiny_server: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(7)


if __name__ == "__main__":
    server.run("streamable-http" if options.http else "stdio")
