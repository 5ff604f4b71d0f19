"""Driving ``assistant-tui acp`` as a subprocess with the agent-client-protocol package's client side."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

REPO = Path(__file__).resolve().parents[2]
AGENT = [sys.executable, "-m", "tui.cli", "acp"]
"""The console script's own module: the acp path must get through it without Textual."""

Answer = Callable[[Any, list[Any]], Awaitable[RequestPermissionResponse]]


def allow(option: str = "allow_once") -> Answer:
    async def answer(tool_call: Any, options: list[Any]) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option))

    return answer


class RecordingClient:
    """An ACP client that records every session update and answers permission requests."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permissions: list[tuple[Any, list[Any]]] = []
        self.answer: Answer = allow()
        self.update_seen = asyncio.Event()
        self.permission_seen = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        self.update_seen.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **_: Any) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        self.permission_seen.set()
        return await self.answer(tool_call, options)

    def of(self, kind: str) -> list[Any]:
        """The updates of one ``sessionUpdate`` kind."""
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))


def cancelled_outcome() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "auth.py").write_text("def login(user):\n    return True\n")
    return root.resolve()


def agent_env(**extra: str) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), ASSISTANT_TUI_MAX_RETRIES="0", **extra)


@contextlib.asynccontextmanager
async def running_agent(
    project: Path, *args: str, client: RecordingClient | None = None, capabilities: Any = None, observers: list[Any] | None = None, **env: str
) -> AsyncIterator[tuple[Any, RecordingClient, Any]]:
    """``assistant-tui acp`` started in ``project``, initialized (with the client ``capabilities``); yields (connection, client, process).

    ``observers`` see every raw JSON-RPC message in both directions.
    """
    client = client or RecordingClient()
    stderr = open(project.parent / "agent-stderr.txt", "ab")  # noqa: SIM115 - read by the tests
    try:
        async with spawn_agent_process(
            client, *AGENT, *args, env=agent_env(**env), cwd=project, transport_kwargs={"stderr": stderr}, observers=observers or [],
            use_unstable_protocol=True,
        ) as (conn, process):
            init = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities), 30)
            assert init.agent_capabilities.load_session is True
            yield conn, client, process
    finally:
        stderr.close()


async def prompt(conn: Any, session_id: str, text: str, timeout: float = 60) -> Any:
    return await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[text_block(text)]), timeout)


def agent_stderr(project: Path) -> str:
    path = project.parent / "agent-stderr.txt"
    return path.read_text(errors="replace") if path.exists() else ""


def raw_agent(project: Path) -> subprocess.Popen[bytes]:
    """The agent with raw pipes, for malformed input."""
    return subprocess.Popen(AGENT, cwd=project, env=agent_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def agent_mid_answer(project: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The agent with raw pipes, streaming its answer to a prompt (its first chunk has arrived), and the session's id."""
    process = raw_agent(project)

    def send(message: dict) -> None:
        process.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        process.stdin.flush()

    def reply(request_id: int) -> dict:
        while True:
            message = json.loads(process.stdout.readline())
            if message.get("id") == request_id:
                return message

    send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    reply(1)
    send({"id": 2, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}})
    session_id = reply(2)["result"]["sessionId"]
    send({"id": 3, "method": "session/prompt", "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "talk"}]}})
    while '"agent_message_chunk"' not in process.stdout.readline().decode():
        pass
    return process, session_id
