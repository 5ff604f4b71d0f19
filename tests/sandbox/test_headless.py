"""Headless: -p runs the model's commands in the sandbox with --sandbox-auto; jsonl carries their live output."""

from __future__ import annotations

import json
from pathlib import Path

from tests.core.test_cli import run_cli
from tests.fake_llm import Reply, Tool

COMMAND = ["sh", "-c", "echo out-line; echo err-line >&2; exit 3"]


def test_sandbox_auto_runs_the_command_and_jsonl_streams_its_output(fake_llm, tmp_path: Path, sandbox) -> None:
    fake_llm.script(Reply(text="Running it.", tools=[Tool("runCommand", {"command": COMMAND})]), Reply(text="It exited with 3."))
    out = run_cli(["-p", "run it", "--output-format", "jsonl", "--sandbox-auto"], tmp_path)
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    chunks = [e for e in events if e["kind"] == "tool_output"]
    assert {(c["stream"], c["text"]) for c in chunks} == {("stdout", "out-line\n"), ("stderr", "err-line\n")}
    finished = next(e for e in events if e["kind"] == "tool_call_finished")
    assert finished["status"] == "error" and "Exit status 3" in finished["result"]
    assert finished["metadata"]["sandboxed"] is True
    assert events.index(chunks[-1]) < events.index(finished)


def test_without_sandbox_auto_nobody_can_approve_so_it_is_denied(fake_llm, tmp_path: Path, sandbox) -> None:
    marker = tmp_path / "ran"
    fake_llm.script(Reply(tools=[Tool("runCommand", {"command": ["touch", str(marker)]})]), Reply(text="Denied."))
    out = run_cli(["-p", "run it", "--output-format", "jsonl"], tmp_path)
    assert out.returncode == 0, out.stderr
    finished = next(json.loads(line) for line in out.stdout.splitlines() if '"tool_call_finished"' in line)
    assert finished["status"] == "denied" and "nobody can approve" in finished["result"]
    assert not marker.exists()


def test_network_asks_even_with_sandbox_auto(fake_llm, tmp_path: Path, sandbox) -> None:
    fake_llm.script(Reply(tools=[Tool("runCommand", {"command": ["true"], "network": True})]), Reply(text="ok"))
    out = run_cli(["-p", "fetch", "--output-format", "jsonl", "--sandbox-auto"], tmp_path)
    finished = next(json.loads(line) for line in out.stdout.splitlines() if '"tool_call_finished"' in line)
    assert finished["status"] == "denied"
