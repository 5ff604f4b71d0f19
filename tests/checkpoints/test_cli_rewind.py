"""A sandboxed command's changes (create, rewrite, delete, a directory renamed) rewound from the shell (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.checkpoints.support import git_dir_hash, tree_state
from tests.core.test_cli import run_cli
from tests.fake_llm import Reply, Tool

SCRIPT = "echo new > made.txt; printf 'changed\\r\\n' > crlf.txt; rm keep.txt; mv pkg lib; chmod +x calc.py"


def test_a_command_turn_is_rewound_byte_for_byte(fake_llm, project: Path, sandbox) -> None:
    original, git_before = tree_state(project), git_dir_hash(project)
    fake_llm.script(Reply(text="Running.", tools=[Tool("runCommand", {"command": ["sh", "-c", SCRIPT]})]), Reply(text="Done."))
    out = run_cli(["-p", "reshape it", "--output-format", "jsonl", "--sandbox-auto"], project)
    assert out.returncode == 0, out.stderr
    finished = next(json.loads(line) for line in out.stdout.splitlines() if '"tool_call_finished"' in line)
    files = finished["metadata"]["files_changed"]
    assert (files["created"], files["changed"], files["deleted"]) == (3, 2, 3)
    assert "created lib/mod.py, lib/util.py, made.txt" in finished["result"]
    assert (project / "lib" / "mod.py").exists() and not (project / "keep.txt").exists()

    listed = run_cli(["rewind", "--list"], project)
    assert listed.returncode == 0, listed.stderr
    assert "reshape it" in listed.stdout and "made.txt created" in listed.stdout

    done = run_cli(["rewind", "1", "--yes"], project)
    assert done.returncode == 0, done.stderr
    assert "-changed" in done.stdout  # the diff it applied was shown
    assert tree_state(project) == original
    assert git_dir_hash(project) == git_before

