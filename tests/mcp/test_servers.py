"""Real MCP servers in the tool loop: the reference mcp-server-time and mcp-server-git from PyPI,
and a tiny FastMCP server for the faults (exit at start, a hung call, a huge result, a crash).

The model is the fake LLM server, reached through the real Anthropic SDK; each test
checks what the next request to the model carried.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core import events as ev
from core.mcp import ServerState
from core.types import Decision
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.mcp.conftest import server_entry


def tool_results(fake: FakeLLM, index: int = -1) -> list[dict[str, Any]]:
    """The tool_result blocks of a recorded Anthropic request."""
    request = fake.requests_for("anthropic")[index]
    blocks = []
    for message in request.messages:
        if isinstance(message.get("content"), list):
            blocks += [b for b in message["content"] if b.get("type") == "tool_result"]
    return blocks


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""


async def run_turn(handler: Any, query: str = "go") -> list[Any]:
    return [event async for event in handler.stream_query(query)]


def finished(events: list[Any]) -> list[ev.ToolCallFinished]:
    return [e for e in events if isinstance(e, ev.ToolCallFinished)]


async def test_time_server_tool_result_reaches_the_next_request(handler, start_servers, fake_llm) -> None:
    """The model calls mcp-server-time's get_current_time; its JSON answer is in the next request."""
    manager = await start_servers(time=server_entry("time"))
    assert manager.servers["time"].state is ServerState.READY, manager.servers["time"].last_error
    assert "mcp__time__get_current_time" in handler.registered_tools
    fake_llm.script(
        Reply(tools=[Tool("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})]),
        Reply("It is late in Tokyo."),
    )
    events = await run_turn(handler, "What time is it in Tokyo?")

    assert isinstance(events[-1], ev.TurnCompleted)
    first, second = fake_llm.requests_for("anthropic")
    assert "mcp__time__get_current_time" in first.tool_names
    sent = next(t for t in first.body["tools"] if t["name"] == "mcp__time__get_current_time")
    assert sent["input_schema"]["properties"]["timezone"]["type"] == "string"  # the server's own schema
    [block] = tool_results(fake_llm)
    answer = json.loads(result_text(block))
    assert answer["timezone"] == "Asia/Tokyo" and answer["datetime"].endswith("+09:00")
    assert not block.get("is_error")
    [call] = finished(events)  # what the trace pane draws
    assert call.status == "success" and "Asia/Tokyo" in call.result
    assert call.metadata["mcp_server"] == "time"
    assert handler.approve.requests and "MCP server time" in handler.approve.requests[0].detail  # asked by default


async def test_git_server_in_a_hostile_repository(handler, start_servers, fake_llm, tmp_path) -> None:
    """mcp-server-git in a repository whose .git/config names programs (fsmonitor, external diff, a
    clean filter): none runs (git's hardening, pinned for that repository, reaches the server), and
    the results reach the model."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit from the test"], check=True)
    marker = tmp_path / "pwned"
    hook = repo / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    for key in ("core.fsmonitor", "diff.external", "filter.ev.clean"):
        subprocess.run(["git", "-C", str(repo), "config", key, str(hook)], check=True)
    (repo / ".gitattributes").write_text("*.txt filter=ev\n")
    (repo / "b.txt").write_text("new\n")

    manager = await start_servers(git=server_entry("git", repository=str(repo)))
    assert manager.servers["git"].state is ServerState.READY, manager.servers["git"].last_error
    fake_llm.script(
        Reply(tools=[
            Tool("mcp__git__git_status", {"repo_path": str(repo)}),
            Tool("mcp__git__git_log", {"repo_path": str(repo), "max_count": 5}),
            Tool("mcp__git__git_add", {"repo_path": str(repo), "files": ["b.txt"]}),
            Tool("mcp__git__git_diff_staged", {"repo_path": str(repo)}),
        ]),
        Reply("One commit."),
    )
    events = await run_turn(handler, "What happened in the repo?")

    assert isinstance(events[-1], ev.TurnCompleted)
    status, log_block, add, diff = tool_results(fake_llm)
    assert "On branch" in result_text(status)
    assert "first commit from the test" in result_text(log_block)
    assert "staged successfully" in result_text(add)
    assert diff["is_error"] and "disabled-by-assistant-tui" in result_text(diff)  # the external diff is pinned to nothing
    assert not marker.exists(), "a program named by the repository's config ran"


async def test_server_that_exits_at_start_never_blocks_a_turn(handler, start_servers, fake_llm) -> None:
    manager = await start_servers(broken=server_entry("tiny", tiny_args=["--exit-at-start"]), missing={"command": "no-such-mcp-server"})
    broken, missing = manager.servers["broken"], manager.servers["missing"]
    assert broken.state is ServerState.FAILED and "configuration broken" in broken.last_error  # its stderr explains
    assert missing.state is ServerState.FAILED and "not found" in missing.last_error
    assert not [name for name in handler.registered_tools if name.startswith("mcp__")]
    fake_llm.script(Reply("Hello."))
    events = await run_turn(handler, "hi")
    assert isinstance(events[-1], ev.TurnCompleted)


async def test_server_that_never_answers_times_out_at_start(handler, start_servers, fake_llm, tmp_path) -> None:
    import sys

    pid_file = tmp_path / "pid"
    script = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    manager = await start_servers(mute={"command": sys.executable, "args": ["-c", script], "startup_timeout": 1})
    mute = manager.servers["mute"]
    assert mute.state is ServerState.FAILED and mute.last_error == "did not start within 1 seconds"
    pid = int(pid_file.read_text())
    await _wait_until(lambda: not _alive(pid))  # its process was ended, not left behind


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is gone for our purpose
        return stat.read().split(")")[-1].split()[0] != "Z"


async def test_hung_call_times_out_cancels_on_the_server_and_the_loop_stays_responsive(handler, start_servers, fake_llm, tmp_path) -> None:
    manager = await start_servers(tiny=server_entry("tiny", tool_timeout=1, env={"MARKER_DIR": str(tmp_path)}))
    assert manager.servers["tiny"].state is ServerState.READY
    fake_llm.script(Reply(tools=[Tool("mcp__tiny__sleep", {"seconds": 3600})]), Reply("It timed out."))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        events = await run_turn(handler)
    finally:
        task.cancel()
    [call] = finished(events)
    assert call.status == "error" and "timed out after 1 seconds" in call.result
    [block] = tool_results(fake_llm)
    assert block["is_error"] and "timed out" in result_text(block)
    assert ticks > 20, "the event loop was blocked during the hung call"
    await _wait_for(tmp_path / "cancelled")  # the server received notifications/cancelled
    # The server is still usable afterwards.
    fake_llm.script(Reply(tools=[Tool("mcp__tiny__peek", {"key": "k"})]), Reply("ok"))
    await run_turn(handler)
    assert "value of k" in result_text(tool_results(fake_llm)[-1])


async def test_cancelling_the_turn_sends_the_protocol_cancellation(handler, start_servers, fake_llm, tmp_path) -> None:
    """Esc cancels the turn's task; the in-flight call is cancelled on the server, the history stays valid."""
    await start_servers(tiny=server_entry("tiny", env={"MARKER_DIR": str(tmp_path)}))
    fake_llm.script(Reply(tools=[Tool("mcp__tiny__sleep", {"seconds": 3600})]))
    seen: list[Any] = []

    async def consume() -> None:
        async for event in handler.stream_query("sleep"):
            seen.append(event)

    task = asyncio.create_task(consume())
    await _wait_for(tmp_path / "sleep-started")
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await _wait_for(tmp_path / "cancelled")
    from tests.core.conftest import assert_history_valid

    assert_history_valid(handler.conversation_history)
    assert handler.conversation_history[-1]["role"] == "tool" and "interrupted" in handler.conversation_history[-1]["content"]


@pytest.mark.settings(max_tool_result_chars=5000)
async def test_huge_result_is_capped_like_other_tool_results(handler, start_servers, fake_llm) -> None:
    await start_servers(tiny=server_entry("tiny"))
    fake_llm.script(Reply(tools=[Tool("mcp__tiny__huge", {"size": 3_000_000})]), Reply("big"))
    events = await run_turn(handler)
    [call] = finished(events)
    assert call.metadata["full_chars"] == 3_000_000
    text = result_text(tool_results(fake_llm)[0])
    assert len(text) < 5200 and "[output truncated" in text


async def test_results_images_errors_and_crashes(handler, start_servers, fake_llm) -> None:
    manager = await start_servers(tiny=server_entry("tiny"))
    fake_llm.script(
        Reply(tools=[Tool("mcp__tiny__picture", {}), Tool("mcp__tiny__oops", {}), Tool("mcp__tiny__peek", {"key": 5})]),
        Reply(tools=[Tool("mcp__tiny__crash", {})]),
        Reply("done"),
    )
    events = await run_turn(handler)
    picture, oops, invalid = (result_text(b) for b in tool_results(fake_llm, 1))
    assert picture == "[image image/png, 2 KB not shown]"
    assert "always fails" in oops and tool_results(fake_llm, 1)[1]["is_error"]
    assert invalid.startswith("Invalid arguments for mcp__tiny__peek")  # validated against the schema, never sent
    crash = tool_results(fake_llm, 2)[-1]
    assert crash["is_error"] and "MCP server tiny" in result_text(crash)
    assert isinstance(events[-1], ev.TurnCompleted)
    await _wait_until(lambda: manager.servers["tiny"].state is ServerState.FAILED)
    assert "crashing on purpose" in manager.servers["tiny"].last_error
    await manager.restart("tiny")
    await manager.servers["tiny"].wait_settled()
    assert manager.servers["tiny"].state is ServerState.READY


async def test_approval_allow_lists_and_read_only_setting(handler, start_servers, fake_llm) -> None:
    await start_servers(
        allow_read_only=True,
        listed=server_entry("tiny", allow=["huge"]),
        hinted=server_entry("tiny"),
    )
    approvals = handler.approve
    approvals.answer = Decision.DENY
    fake_llm.script(
        Reply(tools=[Tool("mcp__listed__huge", {"size": 3}), Tool("mcp__hinted__peek", {"key": "a"}), Tool("mcp__hinted__huge", {"size": 3})]),
        Reply("ok"),
    )
    await run_turn(handler)
    listed, hinted, asked = (result_text(b) for b in tool_results(fake_llm))
    assert listed == "xxx" and hinted == "value of a"
    assert asked.startswith("Denied")
    assert [r.tool_call.name for r in approvals.requests] == ["mcp__hinted__huge"]


async def test_server_environment_is_only_its_config(handler, start_servers, fake_llm, monkeypatch) -> None:
    """Our keys (and anything else of ours) never reach a server; its config's env does."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-canary-0123456789")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "canary-token-9876543210")
    monkeypatch.setenv("UNRELATED_SETTING", "canary-plain")
    await start_servers(tiny=server_entry("tiny", env={"GIVEN_BY_CONFIG": "yes"}, allow=["*"]))
    fake_llm.script(Reply(tools=[Tool("mcp__tiny__env", {})]), Reply("ok"))
    await run_turn(handler)
    text = result_text(tool_results(fake_llm)[0])
    assert "canary" not in text
    environment = json.loads(text)
    assert environment["GIVEN_BY_CONFIG"] == "yes"
    assert environment["PATH"].endswith("/usr/local/bin:/usr/bin:/bin")
    assert environment["GIT_CONFIG_COUNT"]  # git hardening
    from core.gitutil import harden_git_environment

    hardening: dict[str, str] = {}
    harden_git_environment(hardening)
    sdk_identity = {"HOME", "LOGNAME", "SHELL", "TERM", "USER", "LC_CTYPE"}
    extra = {k for k in environment if not k.startswith("GIT_CONFIG_")} - sdk_identity - set(hardening) - {"GIVEN_BY_CONFIG", "PATH"}
    assert not extra, f"unexpected variables reached the server: {sorted(extra)}"


async def _wait_for(path: Path, timeout: float = 20.0) -> None:
    await _wait_until(path.exists, timeout)


async def _wait_until(condition: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def test_streamable_http_server(handler, start_servers, fake_llm, tmp_path) -> None:
    """A server reached by URL (streamable HTTP on 127.0.0.1): its tool runs in the loop, Esc-style cancellation reaches it."""
    import socket
    import sys

    from tests.mcp.conftest import TINY

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "MARKER_DIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, TINY, "--http", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await _wait_until(lambda: _listening(port), timeout=30)
        manager = await start_servers(web={"url": f"http://127.0.0.1:{port}/mcp", "tool_timeout": 1})
        assert manager.servers["web"].state is ServerState.READY, manager.servers["web"].last_error
        fake_llm.script(Reply(tools=[Tool("mcp__web__peek", {"key": "over http"}), Tool("mcp__web__sleep", {"seconds": 60})]), Reply("ok"))
        await run_turn(handler)
        peek, sleep = tool_results(fake_llm)
        assert result_text(peek) == "value of over http"
        assert sleep["is_error"] and "timed out" in result_text(sleep)
        await _wait_for(tmp_path / "cancelled")
    finally:
        process.terminate()
        process.wait(timeout=10)


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0
