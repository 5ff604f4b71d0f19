"""The MCP servers an ACP client passes with ``session/new`` and ``session/load``.

They join the project's own configured servers (``core/mcp``) for that session,
replacing one of the same name: the editor's list is what its user set up for
this agent. Stdio and streamable-HTTP servers are supported; SSE is not
advertised (``mcpCapabilities.sse`` false), so a client does not send it.
"""

from __future__ import annotations

import logging
import re
from typing import Any

log = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def client_servers(servers: list[Any] | None) -> tuple[list[Any], list[str]]:
    """Our server configs for the client's ``mcpServers``, and a sentence per entry skipped."""
    from core.mcp.config import McpConfigError, parse_server

    configs: list[Any] = []
    problems: list[str] = []
    for server in servers or []:
        name = _UNSAFE.sub("_", str(getattr(server, "name", "") or "server"))[:40]
        transport = getattr(server, "type", None) or "stdio"
        if transport == "stdio":
            raw: dict[str, Any] = {
                "command": server.command,
                "args": list(server.args or []),
                "env": {variable.name: variable.value for variable in server.env or []},
            }
        elif transport == "http":
            raw = {"type": "http", "url": server.url, "headers": {header.name: header.value for header in server.headers or []}}
        else:
            problems.append(f"MCP server {name!r} from the client: the {transport} transport is not supported")
            continue
        try:
            # environ={}: the client's values are taken as given, never expanded from our environment
            configs.append(parse_server(name, raw, "the ACP client", environ={}))
        except McpConfigError as exc:
            problems.append(str(exc))
    for problem in problems:
        log.warning("%s", problem)
    return configs, problems
