"""README's MCP example works after README's own install: no uvx, only what pip put in the venv.

The example's two servers are read from README.md as written (the TOML block under "Tools
from MCP servers"), with the venv's python of the example replaced by this one, and started
for real; the HTTP server of the example (docs.example.com) is left out: there is no network.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

from core.mcp import ServerState
from core.mcp.config import parse_server

README = Path(__file__).resolve().parents[2] / "README.md"
EXAMPLE_PYTHON = "/home/me/assistant-tui/.venv/bin/python"


def readme_servers() -> dict[str, dict]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Tools from MCP servers"):]
    block = re.search(r"```toml\n(.*?)```", section, re.S)
    assert block, "README's MCP section has a TOML example"
    return tomllib.loads(block.group(1))["mcp_servers"]


def test_the_example_needs_nothing_the_install_did_not_bring() -> None:
    servers = readme_servers()
    commands = {name: entry.get("command") for name, entry in servers.items() if "command" in entry}
    assert commands and set(commands.values()) == {EXAMPLE_PYTHON}, commands


async def test_the_example_servers_start(start_servers, tmp_path: Path) -> None:
    servers = readme_servers()
    entries = {}
    for name in ("time", "git"):
        entry = dict(servers[name], command=sys.executable)
        entry["args"] = [str(tmp_path) if arg == "/home/me/src/project" else arg for arg in entry["args"]]
        entry.pop("cwd", None)
        entries[name] = entry
        parse_server(name, entry, "README.md")
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    manager = await start_servers(**entries)
    for name in entries:
        assert manager.servers[name].state is ServerState.READY, manager.servers[name].last_error
