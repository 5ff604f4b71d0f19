"""A watched project (inotify) skips ``git status`` only when the tree is known unchanged (issue 26).

Judged from outside: the git processes the app starts (a logging ``git`` first on ``PATH``) and the
trees compared with a snapshot taken from scratch in a second, unwatched shadow.
"""

from __future__ import annotations

import gc
import os
import shutil
from pathlib import Path

import pytest

from core.checkpoints import inotify
from core.checkpoints.shadow import ShadowRepo
from tests.checkpoints.conftest import project  # noqa: F401 - the fixture
from tests.checkpoints.test_snapshot_incremental import _lines, _mutations, _ran, git_log  # noqa: F401 - fixture

pytestmark = pytest.mark.skipif(inotify._LIBC is None, reason="no inotify")


def _scratch(project: Path, tmp_path: Path, name: str) -> str:
    return ShadowRepo(project, git_dir=tmp_path / f"scratch-{name}").snapshot_all()


def test_an_unchanged_watched_tree_runs_no_git(project: Path, git_log: Path) -> None:
    repo = ShadowRepo(project, watch=True)
    first = repo.snapshot_all()
    since = _lines(git_log)
    assert repo.snapshot_all() == first
    assert repo.snapshot_all() == first
    assert _ran(git_log, since) == []
    assert repo.watch is not None and repo.watch.disabled is None and repo.watch.directories >= 2


def test_a_file_changed_outside_the_app_between_two_checkpoints_is_caught(project: Path, git_log: Path,
                                                                            tmp_path: Path) -> None:
    repo = ShadowRepo(project, watch=True)
    first = repo.snapshot_all()
    before = os.stat(project / "pkg" / "mod.py")
    (project / "pkg" / "mod.py").write_text("X = 9\n")  # same size
    os.utime(project / "pkg" / "mod.py", ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same mtime
    since = _lines(git_log)
    second = repo.snapshot_all()
    assert "status" in _ran(git_log, since)
    assert second != first and second == _scratch(project, tmp_path, "a")


def test_every_watched_snapshot_is_the_tree_a_snapshot_from_scratch_makes(project: Path, tmp_path: Path,
                                                                            git_log: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = ShadowRepo(project, watch=True)
    repo.snapshot_all()
    for number, (name, change) in enumerate(_mutations(project, outside)):
        change()
        tree = repo.snapshot_all()
        assert tree == _scratch(project, tmp_path, str(number)), f"after '{name}' the watched snapshot is wrong"
        since = _lines(git_log)
        assert repo.snapshot_all() == tree
        assert _ran(git_log, since) == [], f"after '{name}' an unchanged tree ran git"
    (outside / "through-the-link.txt").write_text("outside the project: not in any snapshot\n")
    assert repo.snapshot_all() == _scratch(project, tmp_path, "last")


def test_a_file_written_later_in_a_new_directory_is_caught(project: Path, tmp_path: Path) -> None:
    repo = ShadowRepo(project, watch=True)
    repo.snapshot_all()
    (project / "fresh" / "deeper").mkdir(parents=True)
    repo.snapshot_all()  # the new directories are watched from here on
    (project / "fresh" / "deeper" / "late.txt").write_text("written after the checkpoint\n")
    tree = repo.snapshot_all()
    assert "fresh/deeper/late.txt" in repo.git("ls-tree", "-r", "--name-only", tree).decode().split()
    assert tree == _scratch(project, tmp_path, "fresh")


def test_an_event_overflow_falls_back_to_a_full_status_and_a_new_watch(project: Path, tmp_path: Path,
                                                                        git_log: Path) -> None:
    repo = ShadowRepo(project, watch=True)
    repo.snapshot_all()
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip(f"the kernel queues {limit} events: too many to overflow in a test")
    a, b = project / "pkg" / "mod.py", project / "pkg" / "util.py"
    with a.open("ab") as first, b.open("ab") as second:
        for _ in range(limit // 2 + 10):  # alternating files: consecutive events differ, so none merge
            first.write(b"#")
            first.flush()
            second.write(b"#")
            second.flush()
    (project / "lost").mkdir()  # its event is dropped: the queue is full
    since = _lines(git_log)
    tree = repo.snapshot_all()
    assert "status" in _ran(git_log, since) and tree == _scratch(project, tmp_path, "overflow")
    (project / "lost" / "inside.txt").write_text("only a new watch sees this\n")
    after = repo.snapshot_all()
    assert "lost/inside.txt" in repo.git("ls-tree", "-r", "--name-only", after).decode().split()


def test_an_ignored_directory_is_not_watched_until_the_ignore_rules_change(project: Path, tmp_path: Path,
                                                                            git_log: Path) -> None:
    repo = ShadowRepo(project, watch=True)
    first = repo.snapshot_all()
    (project / "build" / "more.bin").write_bytes(b"ignored")  # build/ is ignored: no event, nothing to store
    since = _lines(git_log)
    assert repo.snapshot_all() == first and _ran(git_log, since) == []
    (project / ".gitignore").write_text("")  # build/ is stored from now on
    assert repo.snapshot_all() == _scratch(project, tmp_path, "unignored")
    (project / "build" / "out.bin").write_bytes(b"changed in a directory watched since the rules changed")
    assert repo.snapshot_all() == _scratch(project, tmp_path, "unignored-changed")


@pytest.mark.parametrize("watch", [False, True])
def test_files_the_users_git_directory_no_longer_excludes_are_seen(project: Path, tmp_path: Path, watch: bool) -> None:
    """The user's ``.git/info/exclude`` is outside the watched tree: a change to it is noticed all the same."""
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("notes.md\nextra/\n")
    (project / "extra").mkdir()
    (project / "extra" / "data.txt").write_text("excluded at first\n")
    repo = ShadowRepo(project, watch=watch)
    first = repo.snapshot_all()
    (project / ".git" / "info" / "exclude").write_text("")
    second = repo.snapshot_all()
    assert second != first and second == _scratch(project, tmp_path, "included")
    (project / "extra" / "data.txt").write_text("changed in a directory watched since\n")
    assert repo.snapshot_all() == _scratch(project, tmp_path, "included-changed")


def test_a_project_on_a_file_system_not_known_local_is_not_watched(project: Path, git_log: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inotify, "LOCAL_FILE_SYSTEMS", frozenset({"not-this-one"}))
    repo = ShadowRepo(project, watch=True)
    first = repo.snapshot_all()
    since = _lines(git_log)
    assert repo.snapshot_all() == first
    assert _ran(git_log, since) == ["status"]
    assert repo.watch is not None and "file system" in (repo.watch.disabled or "")


def test_a_change_made_while_the_status_runs_is_caught_next_time(project: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch is armed before ``git status`` starts: a file changed after git looked at it is seen next time."""
    real = shutil.which("git")
    assert real is not None
    shim = tmp_path / "shim-during" / "git"
    shim.parent.mkdir()
    target = project / "pkg" / "mod.py"
    trigger = tmp_path / "change-during-status"
    # after the real status ends (it has looked at every file), the file changes once
    shim.write_text("#!/bin/sh\n"
                    f"'{real}' \"$@\"; code=$?\n"
                    "for a in \"$@\"; do [ \"$a\" = status ] && [ -e '" + str(trigger) + "' ] && "
                    "rm '" + str(trigger) + "' && echo 'X = 3' > '" + str(target) + "'; done\n"
                    "exit $code\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    repo = ShadowRepo(project, watch=True)
    repo.snapshot_all()
    (project / "keep.txt").write_text("a change, so the next snapshot runs a status\n")
    trigger.touch()
    during = repo.snapshot_all()
    assert not trigger.exists() and target.read_text() == "X = 3\n"
    assert repo.snapshot_all() != during
    assert repo.snapshot_all() == _scratch(project, tmp_path, "during")


def test_a_few_changed_files_are_looked_at_alone_and_stored_exactly(project: Path, tmp_path: Path, git_log: Path) -> None:
    """The status looks only at the paths the events named, each taken literally (``:!calc.py`` is a file's name)."""
    (project / ".gitignore").write_text("build/\n*.log\n")
    repo = ShadowRepo(project, watch=True)
    repo.snapshot_all()
    (project / ":!calc.py").write_text("a name that is pathspec magic\n")
    (project / "calc.py").write_text("changed\n")
    (project / "notes.md").unlink()
    (project / "pkg" / "util.py").chmod(0o755)
    (project / "pkg" / "debug.log").write_text("ignored: never stored\n")
    since = _lines(git_log)
    tree = repo.snapshot_all()
    assert _ran(git_log, since) == ["status", "update-index", "write-tree"]
    assert tree == _scratch(project, tmp_path, "few")
    names = repo.git("ls-tree", "-r", "--name-only", tree).decode().split("\n")
    assert ":!calc.py" in names and "notes.md" not in names and "pkg/debug.log" not in names


def test_a_directory_holding_only_ignored_files_is_watched(project: Path, tmp_path: Path) -> None:
    """``cache/`` is not ignored, only its ``*.pyc`` are: a file made there later is stored."""
    (project / ".gitignore").write_text("build/\n*.pyc\n")
    (project / "cache" / "deep").mkdir(parents=True)
    (project / "cache" / "a.pyc").write_bytes(b"ignored")
    (project / "cache" / "deep" / "b.pyc").write_bytes(b"ignored")
    repo = ShadowRepo(project, watch=True)
    repo.snapshot_all()
    (project / "cache" / "deep" / "new.py").write_text("stored\n")
    tree = repo.snapshot_all()
    assert "cache/deep/new.py" in repo.git("ls-tree", "-r", "--name-only", tree).decode().split("\n")
    assert tree == _scratch(project, tmp_path, "cache")


def _inotify_instances() -> int:
    return sum(1 for fd in os.listdir("/proc/self/fd") if _link(f"/proc/self/fd/{fd}") == "anon_inode:inotify")


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


async def test_closing_the_checkpoints_releases_the_watch_and_a_forgotten_one_is_released_too(project: Path) -> None:
    from core.checkpoints.manager import Checkpoints

    gc.collect()  # the earlier tests' repositories, dropped, release theirs
    before = _inotify_instances()
    checkpoints = Checkpoints(project)
    checkpoints.snapshot(None)
    assert _inotify_instances() == before + 1
    checkpoints.close()
    assert _inotify_instances() == before
    forgotten = Checkpoints(project)
    forgotten.snapshot(None)
    assert _inotify_instances() == before + 1
    del forgotten  # an application dropped without closing: its instance goes with it
    gc.collect()
    assert _inotify_instances() == before
