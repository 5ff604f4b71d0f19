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



def test_a_run_tests_turn_is_rewound(fake_llm, project: Path, sandbox, monkeypatch) -> None:
    """runTests (the project's test command, here one that writes a report and a cache) is covered like runCommand."""
    original = tree_state(project)
    monkeypatch.setenv("ASSISTANT_TUI_TEST_COMMAND", "sh -c 'echo ok > report.txt; mkdir -p .pytest_cache; echo 1 > .pytest_cache/x'")
    fake_llm.script(Reply(tools=[Tool("runTests", {})]), Reply(text="Tests ran."))
    out = run_cli(["-p", "run the tests", "--output-format", "jsonl", "--sandbox-auto"], project)
    assert out.returncode == 0, out.stderr
    finished = next(json.loads(line) for line in out.stdout.splitlines() if '"tool_call_finished"' in line)
    assert finished["metadata"]["files_changed"]["items"] == [["report.txt", "created", 1, 0]], finished["result"]
    done = run_cli(["rewind", "1", "--yes"], project)
    assert done.returncode == 0, done.stderr
    assert not (project / "report.txt").exists()
    assert {k: v for k, v in tree_state(project).items() if not k.startswith(".pytest_cache")} == original


def test_a_link_a_command_planted_leads_no_rewind_outside_the_project(fake_llm, project: Path, sandbox, tmp_path: Path) -> None:
    """A hostile command swaps a directory for a link to a directory outside the project; rewinding writes nothing there.

    Judged on the host: the outside directory holds only what it held, and the project is as before.
    """
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "own.txt").write_text("the user's\n")
    original = tree_state(project)
    script = f"rm -rf pkg && ln -s {victim} pkg"
    fake_llm.script(Reply(tools=[Tool("runCommand", {"command": ["sh", "-c", script]})]), Reply(text="Done."))
    out = run_cli(["-p", "relink it", "--output-format", "jsonl", "--sandbox-auto"], project)
    assert out.returncode == 0, out.stderr
    assert (project / "pkg").is_symlink()

    done = run_cli(["rewind", "1", "--yes"], project)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in victim.iterdir()) == ["own.txt"]
    assert (victim / "own.txt").read_text() == "the user's\n"
    assert tree_state(project) == original


def test_a_link_planted_after_the_turn_is_not_written_through(fake_llm, project: Path, sandbox, tmp_path: Path) -> None:
    """The turn deleted pkg/mod.py; afterwards pkg became a link to a directory outside the project.

    Rewinding must not restore mod.py through that link (judged on the host: the outside directory stays as it was).
    """
    victim = tmp_path / "victim"
    victim.mkdir()
    fake_llm.script(Reply(tools=[Tool("runCommand", {"command": ["rm", "pkg/mod.py"]})]), Reply(text="Done."))
    out = run_cli(["-p", "drop mod", "--output-format", "jsonl", "--sandbox-auto"], project)
    assert out.returncode == 0, out.stderr
    assert not (project / "pkg" / "mod.py").exists()
    moved = tmp_path / "pkg-moved"
    (project / "pkg").rename(moved)
    (project / "pkg").symlink_to(victim)

    run_cli(["rewind", "1", "--files", "--yes", "--force"], project)
    assert list(victim.iterdir()) == []
