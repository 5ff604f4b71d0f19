"""``assistant-tui -p`` with MCP servers: started before the first request, --mcp-config, --no-mcp, trust."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.core.test_cli import run_cli
from tests.fake_llm import Reply, Tool
from tests.mcp.conftest import server_entry


def write_servers(path: Path, **servers: dict) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_print_mode_calls_a_real_mcp_server(fake_llm, tmp_path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    servers = write_servers(tmp_path / "servers.json", time=server_entry("time"), broken=server_entry("tiny", tiny_args=["--exit-at-start"]))
    fake_llm.script(Reply(tools=[Tool("mcp__time__convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"})]), Reply("17:30 in Kolkata."))
    out = run_cli(["-p", "noon UTC in Kolkata?", "--mcp-config", str(servers), "--yes", "--output-format", "jsonl"], project)
    assert out.returncode == 0, out.stderr
    assert "MCP server broken failed: the server exited during start-up" in out.stderr
    first, second = fake_llm.requests_for("anthropic")
    assert "mcp__time__convert_time" in first.tool_names  # the servers were up before the first request
    result = second.messages[-1]["content"][0]
    assert result["type"] == "tool_result" and "17:30" in json.dumps(result["content"])
    events = [json.loads(line) for line in out.stdout.splitlines()]
    finished = next(e for e in events if e["kind"] == "tool_call_finished")
    assert finished["call"]["name"] == "mcp__time__convert_time" and finished["status"] == "success"


def test_untrusted_project_servers_do_not_start_and_no_mcp_starts_none(fake_llm, tmp_path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    marker = tmp_path / "ran"
    write_servers(project / ".mcp.json", evil={"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]})
    fake_llm.script(Reply("hi"), Reply("hi"))
    out = run_cli(["-p", "hello"], project)
    assert out.returncode == 0, out.stderr
    assert "was not read: the project is not trusted" in out.stderr
    assert not marker.exists()
    servers = write_servers(tmp_path / "s.json", time=server_entry("time"))
    out = run_cli(["-p", "hello", "--mcp-config", str(servers), "--no-mcp"], project)
    assert out.returncode == 0, out.stderr
    assert not [n for n in fake_llm.requests_for("anthropic")[-1].tool_names if n.startswith("mcp__")]
    out = run_cli(["-p", "hello", "--mcp-config", str(tmp_path / "missing.json")], project)
    assert out.returncode == 2 and "no such file" in out.stderr
