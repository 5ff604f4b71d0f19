"""Whole-tree snapshots compared with the latest one (issue 26's cost): as few git processes as the change needs,
and always the very tree a snapshot from scratch (``git add -A`` into an empty index) would make.

The git processes are counted from outside: a ``git`` first on ``PATH`` that logs its arguments, then runs git.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from core.checkpoints.manager import Checkpoints
from core.checkpoints.shadow import ShadowRepo
from core.types import ok_result


@pytest.fixture
def git_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file that gets one line per git process the app starts (its subcommand)."""
    real = shutil.which("git")
    assert real is not None
    shim_dir = tmp_path / "shim"
    shim_dir.mkdir()
    log = tmp_path / "git.log"
    log.touch()
    shim = shim_dir / "git"
    # the subcommand is the first argument not an option or an option's value (-c key=value)
    shim.write_text("#!/bin/sh\n"
                    "skip=0; for a in \"$@\"; do\n"
                    "  if [ $skip = 1 ]; then skip=0; continue; fi\n"
                    "  case \"$a\" in -c) skip=1;; -*) ;; *) echo \"$a\" >> '" + str(log) + "'; break;; esac\n"
                    "done\n"
                    f"exec '{real}' \"$@\"\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return log


def _ran(log: Path, since: int) -> list[str]:
    return log.read_text().splitlines()[since:]


def _lines(log: Path) -> int:
    return len(log.read_text().splitlines())


def test_an_unchanged_tree_costs_one_git_status(project: Path, git_log: Path) -> None:
    repo = ShadowRepo(project)
    first = repo.snapshot_all()
    since = _lines(git_log)
    assert repo.snapshot_all() == first
    assert _ran(git_log, since) == ["status"]  # no add, no write-tree: the stat and untracked caches say it all


def test_a_changed_file_is_stored_without_adding_the_whole_tree(project: Path, git_log: Path) -> None:
    repo = ShadowRepo(project)
    first = repo.snapshot_all()
    (project / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    since = _lines(git_log)
    second = repo.snapshot_all()
    assert _ran(git_log, since) == ["status", "update-index", "write-tree"]
    [change] = repo.changes(first, second)
    assert change.path == "calc.py"
    assert repo.read_blobs([change.after.sha])[change.after.sha] == (project / "calc.py").read_bytes()


async def test_a_command_that_writes_nothing_runs_no_git_in_a_watched_project(project: Path, git_log: Path) -> None:
    checkpoints = Checkpoints(project)  # watches the project's directories (inotify): no event, no git status
    await checkpoints.around("runCommand", lambda: _value(ok_result("warm")))
    since = _lines(git_log)
    result = await checkpoints.around("runCommand", lambda: _value(ok_result("ran")))
    assert _ran(git_log, since) == []
    assert "files_changed" not in result["metadata"] and checkpoints.log.records == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_file_is_left_out_and_costs_nothing_more(project: Path, git_log: Path, tmp_path: Path) -> None:
    repo = ShadowRepo(project)
    repo.snapshot_all()
    secret = project / "secret.key"
    secret.write_text("nobody reads this\n")
    secret.chmod(0)
    (project / "calc.py").write_text("changed\n")
    tree = repo.snapshot_all()
    since = _lines(git_log)
    assert repo.snapshot_all() == tree
    assert _ran(git_log, since) == ["status"]
    assert tree == ShadowRepo(project, git_dir=tmp_path / "scratch").snapshot_all()
    assert "secret.key" not in repo.git("ls-tree", "-r", "--name-only", tree).decode().split()


def _mutations(root: Path, outside: Path) -> list[tuple[str, object]]:
    """Changes a command could make, each applied in turn (the tree after each is snapshotted)."""

    def rewrite_same_size() -> None:  # right after a snapshot: same size, likely the same timestamp tick
        (root / "keep.txt").write_text("KEEP ME\n")

    def file_to_directory() -> None:
        (root / "calc.py").unlink()
        (root / "calc.py").mkdir()
        (root / "calc.py" / "inner.py").write_text("inside\n")

    def directory_to_file() -> None:
        shutil.rmtree(root / "calc.py")
        (root / "calc.py").write_text("a file again\n")

    def rename_directory() -> None:
        (root / "pkg").rename(root / "lib")

    def link_swapped_for_directory() -> None:  # lib/ becomes a link to a directory outside the project
        shutil.rmtree(root / "lib")
        (root / "lib").symlink_to(outside, target_is_directory=True)

    def link_back_to_directory() -> None:
        (root / "lib").unlink()
        (root / "lib").mkdir()
        (root / "lib" / "mod.py").write_text("X = 2\n")

    def executable_bit() -> None:
        path = root / "lib" / "mod.py"
        path.chmod(path.stat().st_mode | stat.S_IXUSR)

    def new_tree_and_deletions() -> None:
        (root / "new" / "deep").mkdir(parents=True)
        (root / "new" / "deep" / "a.txt").write_bytes(b"\x00\x01binary")
        (root / "new" / "empty.txt").write_text("")
        (root / "notes.md").unlink()
        (root / "build" / "ignored.txt").write_text("never stored\n")

    def crlf_and_odd_names() -> None:
        (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
        (root / "odd name\twith tab.txt").write_text("tab\n")
        (root / "ünïcode.txt").write_text("u\n")

    return [("rewrite same size", rewrite_same_size), ("file to directory", file_to_directory),
            ("directory to file", directory_to_file), ("rename directory", rename_directory),
            ("link swapped for a directory", link_swapped_for_directory), ("link back", link_back_to_directory),
            ("executable bit", executable_bit), ("new tree and deletions", new_tree_and_deletions),
            ("CRLF and odd names", crlf_and_odd_names)]


def test_every_incremental_snapshot_is_the_tree_a_snapshot_from_scratch_makes(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the project's\n")
    # two apps on the same project share the shadow: each reads the other's latest snapshot
    first_app, second_app = ShadowRepo(project), ShadowRepo(project)
    first_app.snapshot_all()
    for number, (name, change) in enumerate(_mutations(project, outside)):
        change()
        repo = (first_app, second_app)[number % 2]
        incremental = repo.snapshot_all()
        scratch = ShadowRepo(project, git_dir=tmp_path / f"scratch-{number}").snapshot_all()
        assert incremental == scratch, f"after '{name}' the snapshot differs from one taken from scratch"
        assert repo.snapshot_all() == incremental  # and an unchanged tree keeps it
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]  # nothing written through the link


def test_a_shadow_without_a_latest_snapshot_adds_the_whole_tree(project: Path, tmp_path: Path) -> None:
    """A shadow whose HEAD names no snapshot (one made before this version, or a broken HEAD) starts over."""
    repo = ShadowRepo(project)
    first = repo.snapshot_all()
    (repo.git_dir / "HEAD").write_text("ref: refs/heads/master\n")
    (project / "calc.py").write_text("changed while no snapshot was known\n")
    again = ShadowRepo(project).snapshot_all()
    assert again == ShadowRepo(project, git_dir=tmp_path / "scratch").snapshot_all() != first


async def _value(value: object) -> object:
    return value


def test_the_shadow_made_without_git_init_is_what_git_init_makes_and_fsck_accepts(project: Path, tmp_path: Path) -> None:
    import subprocess

    repo = ShadowRepo(project, git_dir=tmp_path / "state" / "shadow")
    first = repo.snapshot_all()
    (project / "calc.py").write_text("changed\n")
    assert repo.snapshot_all() != first
    made = tmp_path / "state" / "by-git" / ".git"
    subprocess.run(["git", "-c", "init.templateDir=", "init", "-q", str(made.parent)], check=True,
                   env={"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})

    def core_config(git_dir: Path) -> dict[str, str]:
        out = subprocess.run(["git", "config", "--file", str(git_dir / "config"), "--list"], check=True,
                             capture_output=True, text=True).stdout
        return dict(line.split("=", 1) for line in out.splitlines() if line.startswith("core."))

    assert core_config(repo.git_dir) == core_config(made)
    fsck = subprocess.run(["git", "--git-dir", str(repo.git_dir), "fsck", "--strict", "--no-dangling"],
                          capture_output=True, text=True, env={"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1",
                                                               "GIT_CONFIG_GLOBAL": os.devnull})
    assert fsck.returncode == 0 and not fsck.stderr.strip(), fsck.stderr
    head = subprocess.run(["git", "--git-dir", str(repo.git_dir), "rev-parse", "HEAD^{tree}"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert head == repo.snapshot_all()  # git reads the snapshot commit written directly as the latest snapshot


def test_a_latest_snapshot_git_cannot_read_is_replaced_by_a_whole_snapshot(project: Path, tmp_path: Path) -> None:
    """HEAD names a commit whose tree was lost (a pruned or broken shadow): status fails, git add -A starts over."""
    repo = ShadowRepo(project)
    first = repo.snapshot_all()
    lost = repo.git_dir / "objects" / first[:2] / first[2:]
    lost.chmod(0o644)
    lost.unlink()
    (project / "keep.txt").write_text("changed after the loss\n")
    again = ShadowRepo(project).snapshot_all()
    assert again == ShadowRepo(project, git_dir=tmp_path / "scratch").snapshot_all()
    assert ShadowRepo(project).snapshot_all() == again
