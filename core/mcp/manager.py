"""The configured MCP servers of one Application, and their tools in the handler's registry.

Each server tool is registered through ``register_tool`` as ``mcp__SERVER__TOOL``
with the server's JSON schema (the tool loop validates arguments against it before
calling). Every MCP tool asks for approval unless its server's ``allow`` list names
it (or ``"*"``), or it is marked ``readOnlyHint`` and ``mcp_allow_read_only`` is on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any, Callable

from core.mcp.client import McpCallError, McpServer, ServerState
from core.mcp.config import McpConfig, McpServerConfig
from core.mcp.results import to_task_result
from core.types import TaskResult, error_result

log = logging.getLogger(__name__)

PREFIX = "mcp__"
MAX_DESCRIPTION = 1024
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
# Anthropic and OpenAI both accept tool names of 1-64 characters from [A-Za-z0-9_-].
MAX_TOOL_NAME = 64


def tool_name(server: str, tool: str) -> str:
    """The registered name of ``server``'s ``tool``: ``mcp__SERVER__TOOL``, made wire-safe."""
    return (PREFIX + _UNSAFE.sub("_", server) + "__" + _UNSAFE.sub("_", tool))[:MAX_TOOL_NAME]


class McpManager:
    """Starts, stops and restarts the servers; keeps their tools registered in the handler."""

    def __init__(self, handler: Any, config: McpConfig, *, allow_read_only: bool = False) -> None:
        self.handler = handler
        self.config = config
        self.allow_read_only = allow_read_only
        self.servers: dict[str, McpServer] = {
            name: McpServer(server, on_change=self._changed) for name, server in config.servers.items()
        }
        self.listeners: list[Callable[[McpServer], None]] = []
        """Called with a server whenever its state changes (the TUI refreshes ``/mcp``)."""
        self._registered: dict[str, set[str]] = {name: set() for name in self.servers}
        self.started = False

    def add(self, server: McpServerConfig) -> None:
        """Add a server (replacing one of the same name) before :meth:`start`: an ACP client's ``mcpServers``."""
        if self.started:
            raise RuntimeError("MCP servers can only be added before they are started")
        self.config.servers[server.name] = server
        self.servers[server.name] = McpServer(server, on_change=self._changed)
        self._registered[server.name] = set()

    @property
    def errors(self) -> list[str]:
        """Configuration problems (entries that could not be used)."""
        return list(self.config.errors)

    def start(self) -> None:
        """Start every enabled server in the background; returns at once."""
        if self.started:
            return
        self.started = True
        for server in self.servers.values():
            server.start()

    async def wait_started(self) -> None:
        """Wait until every server is ready or has failed (each is bounded by its startup timeout)."""
        await asyncio.gather(*(server.wait_settled() for server in self.servers.values()))

    async def restart(self, name: str) -> McpServer:
        """Restart one server by name.

        Raises:
            KeyError: no server has that name.
        """
        server = self.servers[name]
        self.started = True
        await server.restart()
        return server

    async def aclose(self) -> None:
        """Stop every server (at exit)."""
        await asyncio.gather(*(server.stop() for server in self.servers.values()), return_exceptions=True)

    # -- the registry ----------------------------------------------------------
    def _changed(self, server: McpServer) -> None:
        if server.state is ServerState.READY:
            self._register(server)
        for listener in list(self.listeners):
            try:
                listener(server)
            except Exception:  # noqa: BLE001
                log.exception("MCP listener failed")

    def _register(self, server: McpServer) -> None:
        """(Re-)register ``server``'s tools; tools it no longer lists are removed."""
        from core.handlers.validation import schema_problem

        names: set[str] = set()
        problems: list[str] = []
        for tool in server.tools:
            name = tool_name(server.name, tool.name)
            if name in names or (name in self.handler.registered_tools and name not in self._registered[server.name]):
                problems.append(f"{tool.name}: its name clashes with another tool ({name})")
                continue
            schema = dict(tool.inputSchema or {})
            schema.setdefault("type", "object")
            if problem := schema_problem(schema):
                problems.append(f"{tool.name}: invalid input schema ({problem})")
                continue
            names.add(name)
            self.handler.register_tool(self._spec(server, tool, name, schema), self._executor(server, tool.name))
        for stale in self._registered[server.name] - names:
            self.handler.unregister_tool(stale)
        self._registered[server.name] = names
        if problems:
            server.last_error = "skipped tools: " + "; ".join(problems)
            log.warning("MCP server %s: %s", server.name, server.last_error)

    def _spec(self, server: McpServer, tool: Any, name: str, schema: dict[str, Any]) -> dict[str, Any]:
        annotations = tool.annotations
        read_only = bool(annotations and annotations.readOnlyHint)
        allowed = server.config.allows(tool.name) or (self.allow_read_only and read_only)
        description = (tool.description or tool.title or tool.name).strip()
        if len(description) > MAX_DESCRIPTION:
            description = description[: MAX_DESCRIPTION - 1] + "…"

        def describe(params: dict[str, Any]) -> str:
            hints = []
            if annotations is not None:
                hints += ["read-only"] if annotations.readOnlyHint else []
                hints += ["destructive"] if annotations.destructiveHint else []
                hints += ["open world"] if annotations.openWorldHint else []
            head = f"MCP server {server.name} ({server.config.describe()}), tool {tool.name}"
            if hints:
                head += f" [server says: {', '.join(hints)}]"
            return head + "\n" + json.dumps(params, indent=2, ensure_ascii=False, default=str)

        return {
            "name": name,
            "description": f"{description} (MCP server {server.name})",
            "input_schema": schema,
            "requires_approval": not allowed,
            "describe": describe,
            # A backstop: the call's own timeout fires first and cancels the request on the server.
            "timeout": server.config.tool_timeout + 5,
            "mcp": {"server": server.name, "tool": tool.name, "read_only": read_only},
        }

    def _executor(self, server: McpServer, tool: str) -> Callable[[dict[str, Any]], Any]:
        async def call(params: dict[str, Any]) -> TaskResult:
            try:
                result = await server.call_tool(tool, params, server.config.tool_timeout)
            except McpCallError as exc:
                return error_result(str(exc), error="mcp_call_failed", mcp_server=server.name, mcp_tool=tool)
            return to_task_result(result, server.name, tool)

        return call

    # -- for /mcp ----------------------------------------------------------------
    def status(self) -> list[dict[str, Any]]:
        """One entry per server: name, state, transport, target, tools, last error, stderr tail."""
        rows = []
        for server in self.servers.values():
            rows.append(
                {
                    "name": server.name,
                    "state": server.state.value,
                    "transport": server.config.transport,
                    "target": server.config.describe(),
                    "source": server.config.source,
                    "tools": [
                        {
                            "name": tool.name,
                            "registered": tool_name(server.name, tool.name),
                            "asks": bool(self.handler.registered_tools.get(tool_name(server.name, tool.name), {}).get("requires_approval", True)),
                        }
                        for tool in server.tools
                    ],
                    "last_error": server.last_error,
                    "server_info": server.server_info,
                    "ready_after": round(server.ready_after, 3),
                }
            )
        return rows
