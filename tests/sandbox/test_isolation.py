"""Issue 13, done-when (b): inside the sandbox each escape fails, is reported, and nothing outside changes."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from core.sandbox import Limits, SandboxStatus, run_command


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` and its content."""
    return {str(p): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


async def sandboxed(sandbox: SandboxStatus, project: Path, argv: list[str], **kwargs) -> "object":
    return await run_command(argv, project_root=project, bwrap=sandbox.bwrap,
                             rlimit_nproc=sandbox.process_limit == "rlimit", **kwargs)


async def test_writing_outside_the_root_fails_and_changes_nothing(sandbox, project, tmp_path, isolated_env):
    before, home_before = snapshot(tmp_path.parent), snapshot(isolated_env)
    target = tmp_path / "outside.txt"
    script = (f"echo pwned > {target}; echo pwned > {isolated_env}/planted; touch /usr/planted; "
              "echo inside > made-inside.txt; touch .git/hooks-planted; echo done")
    result = await sandboxed(sandbox, project, ["sh", "-c", script])
    assert result.status == "exited" and "done" in result.output
    assert "Read-only file system" in result.output or "No such file or directory" in result.output
    assert (project / "made-inside.txt").read_text() == "inside\n"  # the project itself is writable
    assert not (project / ".git" / "hooks-planted").exists()  # but its .git is not
    assert target.read_text() == "untouched\n"
    after = snapshot(tmp_path.parent)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert changed == {str(project / "made-inside.txt")}
    assert snapshot(isolated_env) == home_before
    assert not Path("/usr/planted").exists()


async def test_secrets_cannot_be_read(sandbox, project, isolated_env):
    ssh = isolated_env / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nhome-ssh-secret\n")
    os.environ["SANDBOX_TEST_TOKEN"] = "environment-secret-value"
    try:
        script = f"cat {ssh}/id_rsa; cat ~/.ssh/id_rsa; cat .env; cat keys/deploy.pem; env; echo finished"
        result = await sandboxed(sandbox, project, ["sh", "-c", script])
    finally:
        del os.environ["SANDBOX_TEST_TOKEN"]
    assert "finished" in result.output
    for secret in ("home-ssh-secret", "project-dotenv-secret", "project-pem-secret", "environment-secret-value"):
        assert secret not in result.output
    assert f"{ssh}/id_rsa: No such file or directory" in result.output
    assert ".env: Permission denied" in result.output and "deploy.pem: Permission denied" in result.output
    assert (project / ".env").read_text() == "API_TOKEN=project-dotenv-secret\n"


async def test_a_loopback_listener_cannot_be_reached(sandbox, project, python_inside):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[object] = []
    listener.settimeout(0.2)

    def accept() -> None:
        try:
            accepted.append(listener.accept())
        except OSError:
            pass

    port = listener.getsockname()[1]
    python, read_only = python_inside
    code = f"import socket\ntry:\n socket.create_connection(('127.0.0.1', {port}), timeout=3)\n print('CONNECTED')\nexcept OSError as e:\n print('refused:', e)"
    try:
        result = await sandboxed(sandbox, project, [*python, "-c", code], read_only=read_only)
        thread = threading.Thread(target=accept)
        thread.start()
        thread.join()
    finally:
        listener.close()
    assert "CONNECTED" not in result.output and "refused:" in result.output, result.output
    assert accepted == []


async def test_forking_past_the_process_limit_fails(sandbox, project):
    if sandbox.process_limit == "none":
        pytest.skip("no process-count limit on this machine (root without a writable pids cgroup)")
    script = "i=0; while [ $i -lt 60 ]; do sleep 1 & i=$((i+1)); done; wait; echo all-started"
    result = await sandboxed(sandbox, project, ["sh", "-c", script], limits=Limits(max_processes=20, timeout=30))
    assert "all-started" not in result.output or "fork" in result.output.lower(), result.output
    assert "fork" in result.output.lower(), result.output
    if sandbox.process_limit == "cgroup":
        assert result.process_limit_hit


def _processes_with(marker: str) -> list[int]:
    """Pids of the ``sleep MARKER`` processes on the machine."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", marker.encode()]:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _alive(pid: int) -> str:
    """The process's state line when it exists (a zombie counts), else empty."""
    try:
        status = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)
        return f"{pid} {status.get('Name')} {status.get('State')} ppid {status.get('PPid')}"
    except (OSError, IndexError):
        return ""


async def _until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll until ``condition()`` holds; fail naming ``what`` after ``timeout`` seconds (a hang detector)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not reached within {timeout:g}s: {what}"
        await asyncio.sleep(0.02)


async def test_running_past_the_timeout_kills_the_whole_tree(sandbox, project):
    marker = "987.654"  # a sleep length nothing else uses, to find the tree's processes by pid
    script = f"sleep {marker} & (sleep {marker} &) ; sleep {marker}"
    # The limit may end the run before all three have been seen (a loaded machine starts bwrap slowly):
    # then what was seen is checked, and that none of them is left.
    task = asyncio.create_task(sandboxed(sandbox, project, ["sh", "-c", script], limits=Limits(timeout=3.0)))
    await _until(lambda: len(_processes_with(marker)) >= 3 or task.done(), "the three sleeps started, or the run ended")
    pids = _processes_with(marker)
    result = await task
    assert result.status == "timeout"
    assert [_alive(pid) for pid in [result.pid, *pids] if _alive(pid)] == [], (result.pid, pids)
    assert _processes_with(marker) == []


async def test_cancelling_kills_the_whole_tree(sandbox, project):
    marker = "876.543"
    task = asyncio.create_task(sandboxed(sandbox, project, ["sh", "-c", f"sleep {marker} & sleep {marker}"]))
    await _until(lambda: len(_processes_with(marker)) >= 2, "the two sleeps started")
    pids = _processes_with(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [pid for pid in pids if _alive(pid)] == []


async def test_printing_endlessly_is_capped(sandbox, project):
    batches: list[int] = []
    result = await sandboxed(sandbox, project, ["yes", "endless"], limits=Limits(max_output=300_000),
                             on_output=lambda text, stream: batches.append(len(text)))
    assert result.status == "output_limit"
    assert result.output_bytes <= 300_000 and sum(batches) <= 300_000
    assert result.output.startswith("endless\n") and result.omitted_chars > 0
    assert not _alive(result.pid)
