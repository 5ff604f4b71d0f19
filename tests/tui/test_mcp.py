"""/mcp and MCP tools in the app: real servers configured in config.toml, the real engine on the fake LLM."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from core import paths
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.tui.conftest import FixedClock, finish_turn, send, wait_for
from tui.app import AssistantApp, make_app
from tui.screens.mcp import McpScreen
from tui.widgets.chat import NoteMessage

TESTS_MCP = Path(__file__).resolve().parents[1] / "mcp"
CONFIG = """
[mcp_servers.time]
command = "mcp-python"
args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
allow = ["get_current_time"]

[mcp_servers.broken]
command = "mcp-python"
args = ["tiny_server.py", "--exit-at-start"]
cwd = "{cwd}"

[mcp_servers.missing]
command = "no-such-mcp-server"
"""


@pytest.fixture
def mcp_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """config.toml with three servers; ``mcp-python`` (this Python) on PATH keeps the commands shown stable."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "mcp-python"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    target = paths.config_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(CONFIG.format(cwd=TESTS_MCP))
    return target


def settled(app: AssistantApp) -> bool:
    return all(server.state in ("ready", "failed") for server in app.mcp.servers.values())


async def test_mcp_tools_in_the_app(mcp_config, real_settings, fake_llm: FakeLLM) -> None:
    """A failing server is reported in the chat; a ready one's tool runs in a turn and shows in the trace;
    /mcp lists the servers and r restarts one."""
    app = make_app(real_settings, clock=FixedClock())
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: settled(app), timeout=60)
        await wait_for(pilot, lambda: len([n for n in app.chat.children if isinstance(n, NoteMessage) and "MCP server" in n.body]) == 2)
        notes = [n.body for n in app.chat.children if isinstance(n, NoteMessage) and "MCP server" in n.body]
        assert any("MCP server broken failed: the server exited during start-up" in n for n in notes)
        assert any("MCP server missing failed: command 'no-such-mcp-server' was not found" in n for n in notes)

        fake_llm.script(Reply(tools=[Tool("mcp__time__get_current_time", {"timezone": "America/Lima"})]), Reply("Lima time."))
        await send(pilot, "time in Lima?")
        await finish_turn(pilot)
        (record,) = app.trace.records.values()
        assert record.call.name == "mcp__time__get_current_time" and record.status == "success"
        assert "America/Lima" in record.result
        assert "America/Lima" in str(fake_llm.requests_for("anthropic")[-1].messages[-1]["content"])

        await send(pilot, "/mcp")
        await wait_for(pilot, lambda: isinstance(app.screen, McpScreen))
        await pilot.press("down")  # broken
        await pilot.press("r")
        await wait_for(pilot, lambda: app.mcp.servers["broken"].state == "starting")
        await wait_for(pilot, lambda: settled(app), timeout=60)
        assert app.mcp.servers["broken"].state == "failed"
        await pilot.press("escape")
        assert not isinstance(app.screen, McpScreen)


class TestMcpScreen:
    """/mcp with one ready server and two failed ones."""

    def test_mcp_screen(self, snap_compare, mcp_config, real_settings) -> None:
        """A modal "MCP servers": time ready with 2 tools, broken and missing failed; below, the
        highlighted server (time): stdio and its command, configured in ~/.config/assistant-tui/config.toml,
        its tools with get_current_time marked (allowed); the hint "r restarts · Esc closes"; the footer shows
        the screen's keys (r Restart, esc Close)."""

        async def run_before(pilot: Any) -> None:
            app = pilot.app
            await wait_for(pilot, lambda: settled(app), timeout=60)
            await send(pilot, "/mcp")
            await wait_for(pilot, lambda: isinstance(app.screen, McpScreen))
            await pilot.pause()

        app = make_app(real_settings, clock=FixedClock())
        assert snap_compare(app, terminal_size=(100, 32), run_before=run_before)


async def test_escape_cancels_an_mcp_call_on_the_server(real_settings, fake_llm: FakeLLM, tmp_path: Path) -> None:
    """Esc during a hung MCP call: the turn ends at once and the server receives notifications/cancelled."""
    target = paths.config_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        f'[mcp_servers.tiny]\ncommand = "{sys.executable}"\nargs = ["{TESTS_MCP / "tiny_server.py"}"]\n'
        f'env = {{ MARKER_DIR = "{tmp_path}" }}\nallow = ["sleep"]\n'
    )
    app = make_app(real_settings, clock=FixedClock())
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: settled(app), timeout=60)
        fake_llm.script(Reply(tools=[Tool("mcp__tiny__sleep", {"seconds": 600})]))
        await send(pilot, "sleep")
        await wait_for(pilot, (tmp_path / "sleep-started").exists, timeout=30)
        await pilot.press("escape")
        await finish_turn(pilot)
        await wait_for(pilot, (tmp_path / "cancelled").exists, timeout=30)
        (record,) = app.trace.records.values()
        assert record.call.name == "mcp__tiny__sleep" and record.status != "success"
