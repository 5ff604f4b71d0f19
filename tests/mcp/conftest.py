"""Fixtures for MCP tests: real MCP servers (the PyPI reference servers and a tiny FastMCP one)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import pytest

from core.config import Settings
from core.handlers.passthrough import PassthroughHandler
from core.mcp import McpConfig, McpManager
from core.mcp.config import parse_server
from core.types import ApprovalRequest, Decision
from tests.conftest import marked_settings
from tests.core.conftest import make_provider
from tests.fake_llm import FakeLLM

TINY = str(Path(__file__).with_name("tiny_server.py"))


def server_entry(kind: str, **extra: Any) -> dict[str, Any]:
    """A config entry (as in config.toml) for a test server."""
    if kind == "time":
        entry: dict[str, Any] = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    elif kind == "git":
        entry = {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", extra.pop("repository")]}
    elif kind == "tiny":
        entry = {"command": sys.executable, "args": [TINY, *extra.pop("tiny_args", [])]}
    else:
        raise ValueError(kind)
    entry.update(extra)
    return entry


class Approvals:
    """The handler's approver: records each request, answers with ``answer``."""

    def __init__(self, answer: Decision = Decision.ALLOW_ONCE) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return self.answer


@pytest.fixture
def handler(fake_llm: FakeLLM, tmp_path: Path, request: pytest.FixtureRequest) -> PassthroughHandler:
    """A handler on the real Anthropic SDK pointed at the fake server, approving everything it is asked."""
    provider = make_provider("anthropic", fake_llm, max_retries=0)
    built = PassthroughHandler(None, None, provider, Settings(project_root=tmp_path, max_retries=0, **marked_settings(request)))
    built.approvals.set_approver(Approvals())
    return built


@pytest.fixture
async def start_servers(handler: PassthroughHandler) -> AsyncIterator[Callable[..., Any]]:
    """``await start_servers(name=entry, ...)``: a started manager on ``handler`` (stopped after the test)."""
    managers: list[McpManager] = []

    async def start(allow_read_only: bool = False, **entries: dict[str, Any]) -> McpManager:
        config = McpConfig(servers={name: parse_server(name, entry, "test") for name, entry in entries.items()})
        manager = McpManager(handler, config, allow_read_only=allow_read_only)
        managers.append(manager)
        manager.start()
        await manager.wait_started()
        return manager

    yield start
    for manager in managers:
        await manager.aclose()
