"""``assistant-tui acp``: our engine as an Agent Client Protocol agent on stdio.

An ACP client (Zed, Toad, JetBrains...) starts ``assistant-tui acp`` and speaks
JSON-RPC on its stdin and stdout. Built on the ``agent-client-protocol`` package;
no Textual is imported on this path. Logs go to the log file, never stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Any, Sequence

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
"""Signals that end the agent in order: turns cancelled, transcripts closed, exit status 0."""


def build_parser() -> argparse.ArgumentParser:
    """The flags of ``assistant-tui acp`` (each session's project is the client's cwd)."""
    parser = argparse.ArgumentParser(
        prog="assistant-tui acp",
        description="Run as an Agent Client Protocol agent on stdin/stdout (for Zed, Toad and other ACP clients).",
    )
    parser.add_argument("--provider", choices=("anthropic", "openai"), help="model provider")
    parser.add_argument("--model", help="chat model name")
    parser.add_argument("--max-tool-calls", type=int, metavar="N", help="most tool calls per user turn")
    parser.add_argument("--approval-mode", choices=("ask", "allow", "deny"), help="tool calls that change things: ask the client (default), allow or deny")
    parser.add_argument("--aider-model", help="model aider uses, in aider's naming")
    parser.add_argument("--mcp-config", metavar="FILE", help="also start the MCP servers of FILE in every session (.mcp.json format, or TOML)")
    parser.add_argument("--no-mcp", action="store_true", help="start no MCP server of our own config (the client's still start)")
    parser.add_argument("--debug", action="store_true", help="log debug details to the log file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Serve ACP on stdio until the client closes it; returns the exit status."""
    from core.acp.stdio import take_stdio
    from core.exit_codes import EXIT_USAGE
    from core.config import ConfigError, load_settings
    from core.logging_setup import setup_logging

    args = build_parser().parse_args(argv)
    overrides = {
        "provider": args.provider,
        "model": args.model,
        "max_tool_calls": args.max_tool_calls,
        "approval_mode": args.approval_mode,
        "aider_model": args.aider_model,
        "mcp_config": str(Path(args.mcp_config).expanduser().resolve()) if args.mcp_config else None,
        "mcp_enabled": False if args.no_mcp else None,
    }
    if args.max_tool_calls is not None and args.max_tool_calls < 0:
        sys.stderr.write("assistant-tui acp: --max-tool-calls must be 0 or more\n")
        return EXIT_USAGE
    if args.mcp_config and not Path(args.mcp_config).expanduser().is_file():
        sys.stderr.write(f"assistant-tui acp: --mcp-config {args.mcp_config!r}: no such file\n")
        return EXIT_USAGE
    try:
        settings = load_settings(overrides)
    except ConfigError as exc:
        sys.stderr.write(f"assistant-tui acp: configuration error: {exc}\n")
        return EXIT_USAGE
    in_fd, out_fd = take_stdio()
    setup_logging(settings.secrets(), level=logging.DEBUG if args.debug else logging.INFO)
    log.info("ACP agent starting (provider %s)", settings.provider)
    try:
        asyncio.run(serve(overrides, in_fd, out_fd))
    except KeyboardInterrupt:
        return 130
    except Exception:  # noqa: BLE001 - never a traceback on the protocol stream
        log.exception("ACP agent failed")
        sys.stderr.write("assistant-tui acp: the agent stopped on an internal error; details are in the log file.\n")
        return 1
    log.info("ACP agent stopped: the client closed the connection")
    return 0


async def serve(overrides: dict[str, Any], in_fd: int, out_fd: int, application_factory: Any = None) -> None:
    """Run the agent on the given descriptors until end of input."""
    from acp.core import AgentSideConnection

    from core.acp.agent import AssistantAgent
    from core.acp.stdio import StdioTransport

    transport = StdioTransport(in_fd, out_fd)
    await transport.open()
    agent = AssistantAgent(overrides, application_factory=application_factory, transport=transport)
    unanswered = Unanswered()
    connection = AgentSideConnection(agent, transport, listening=False, use_unstable_protocol=True,  # session/resume, close, fork
                                     observers=[unanswered])
    listening = asyncio.ensure_future(connection.listen())
    loop = asyncio.get_running_loop()
    for number in STOP_SIGNALS:  # an editor quitting mid-turn: end like a closed connection, without a traceback
        loop.add_signal_handler(number, listening.cancel)
    try:
        await asyncio.wait({listening})
        if listening.cancelled():
            log.info("ACP agent stopping: asked to by a signal")
        elif listening.exception() is not None:
            raise listening.exception()  # type: ignore[misc]
    finally:
        for number in STOP_SIGNALS:
            loop.remove_signal_handler(number)
        await agent.close()  # running turns end (their prompts are answered "cancelled")
        if not listening.cancelled():
            await unanswered.all_answered()  # end of input: what was asked before it still gets its answer
        await asyncio.shield(connection.close())


class Unanswered:
    """Observes the connection: the client's requests not answered yet.

    At end of input the agent answers every request it read before ending (a client may write
    its last requests and close its end at once); only then does it close the connection, which
    cancels what is still running.
    """

    def __init__(self) -> None:
        self._ids: set[Any] = set()
        self._none_left = asyncio.Event()
        self._none_left.set()

    def __call__(self, event: Any) -> None:
        message, incoming = event.message, event.direction == "incoming"
        if "id" not in message or incoming != ("method" in message):
            return  # a notification, or the client's answer to our own request
        if incoming:
            self._ids.add(message["id"])
        else:
            self._ids.discard(message["id"])
        self._none_left.clear() if self._ids else self._none_left.set()

    async def all_answered(self) -> None:
        """Return once every request read so far has been answered."""
        await self._none_left.wait()
