"""The host files a sandboxed run binds (masks, empty mount points) do not pile up in the temporary directory.

Each process keeps them in one directory of its own, removed at exit; one killed before its
exit (SIGKILL) leaves it, and the next process's first sandbox removes it. Judged by what is
in the temporary directory after real sandboxed runs in child processes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

CHILD = """
import asyncio, os, sys
from pathlib import Path
from core.sandbox import check_sandbox, run_command
project = Path(sys.argv[1])
status = check_sandbox(project)
result = asyncio.run(run_command(["cat", ".env"], project_root=project, bwrap=status.bwrap,
                                 rlimit_nproc=status.process_limit == "rlimit"))
print(result.status, result.output.strip(), flush=True)
if sys.argv[2] == "kill":
    os.kill(os.getpid(), 9)
"""


def run_child(project: Path, tmp: Path, how: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-c", CHILD, str(project), how], env=env, capture_output=True, text=True, timeout=300)


def entries(tmp: Path) -> set[str]:
    return {p.name for p in tmp.iterdir() if p.name.startswith("assistant-tui-")}


def test_a_killed_process_leaves_its_files_and_the_next_one_removes_them(sandbox, project, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    live = tmp / f"assistant-tui-{os.getpid()}-live"  # a running process's directory: kept
    live.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("kept\n")
    (tmp / "assistant-tui-4194999-link").symlink_to(elsewhere)  # a link with a dead pid's name: not followed, not removed

    killed = run_child(project, tmp, "kill")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert killed.stdout.startswith("exited"), killed.stdout  # the sandbox ran: the mask was bound
    assert "project-dotenv-secret" not in killed.stdout
    left = entries(tmp) - {live.name, "assistant-tui-4194999-link"}
    assert len(left) == 1, left  # one directory holds what that process bound
    (left_dir,) = left
    assert any((tmp / left_dir).iterdir())

    clean = run_child(project, tmp, "exit")
    assert clean.returncode == 0 and clean.stdout.startswith("exited"), clean.stderr
    assert entries(tmp) == {live.name, "assistant-tui-4194999-link"}  # the killed one's swept, its own removed at exit
    assert (elsewhere / "keep.txt").read_text() == "kept\n"


def test_killed_processes_never_pile_up(sandbox, project, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    for _ in range(3):
        assert run_child(project, tmp, "kill").returncode == -signal.SIGKILL
        assert len(entries(tmp)) == 1  # the last killed one's; each run swept the one before
    assert run_child(project, tmp, "exit").returncode == 0
    assert entries(tmp) == set()
