"""MCP client: tools from Model Context Protocol servers in the handler's registry.

``load_mcp_config`` reads the configured servers, ``McpManager`` starts them in the
background and registers their tools as ``mcp__SERVER__TOOL``. The Application
owns one manager, shared by the TUI, ``-p`` and ACP.
"""

from core.mcp.client import McpCallError, McpServer, ServerState
from core.mcp.config import McpConfig, McpConfigError, McpServerConfig, load_mcp_config
from core.mcp.manager import McpManager, tool_name

__all__ = [
    "McpCallError",
    "McpConfig",
    "McpConfigError",
    "McpManager",
    "McpServer",
    "McpServerConfig",
    "ServerState",
    "load_mcp_config",
    "tool_name",
]
