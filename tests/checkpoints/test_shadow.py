"""The shadow repository: what a checkpoint stores (and does not), and that the project's git config runs nothing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from core.checkpoints.manager import Checkpoints
from core.checkpoints.shadow import ShadowRepo, checkpoints_root
from core.types import ok_result
from tests.checkpoints.support import git_dir_hash


def objects(repo: ShadowRepo) -> set[str]:
    found = set()
    for folder, _dirs, files in os.walk(repo.git_dir / "objects"):
        found.update(os.path.join(folder, name) for name in files)
    return found


async def test_a_call_that_changes_nothing_stores_nothing(project: Path) -> None:
    checkpoints = Checkpoints(project)
    await checkpoints.around("runCommand", lambda: _async(ok_result("ran")))
    before = objects(checkpoints.repo)
    result = await checkpoints.around("runCommand", lambda: _async(ok_result("ran again")))
    assert objects(checkpoints.repo) == before
    assert checkpoints.log.records == [] and "files_changed" not in result["metadata"]
    assert checkpoints.repo.git_dir.is_relative_to(checkpoints_root()) and not checkpoints.repo.git_dir.is_relative_to(project)


async def test_an_ignored_directory_a_command_changed_is_named(project: Path) -> None:
    checkpoints = Checkpoints(project)

    async def install() -> dict:
        (project / "node_modules" / "left-pad").mkdir(parents=True)
        (project / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
        (project / "calc.py").write_text("changed\n")
        return ok_result("installed")

    result = await checkpoints.around("runCommand", install)
    files = result["metadata"]["files_changed"]
    assert files["ignored_dirs"] == ["node_modules"] and files["changed"] == 1
    assert "changed ignored node_modules/" in result["content"]
    assert not any("left-pad" in item[0] for item in files["items"])  # not copied


def test_the_projects_git_config_and_attributes_run_nothing(project: Path, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    for key, value in (("filter.evil.clean", f"touch {canary}"), ("core.fsmonitor", f"touch {canary}"),
                       ("core.hooksPath", str(tmp_path)), ("diff.external", f"touch {canary}")):
        subprocess.run(["git", "config", key, value], cwd=project, check=True)
    (project / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (tmp_path / "post-index-change").write_text(f"#!/bin/sh\ntouch {canary}\n")
    os.chmod(tmp_path / "post-index-change", 0o755)
    before = git_dir_hash(project)
    repo = ShadowRepo(project)
    first = repo.snapshot_all()
    (project / "calc.py").write_text("x = 1\n")
    second = repo.snapshot_all()
    assert [c.path for c in repo.changes(first, second)] == ["calc.py"]
    assert repo.read_blobs([repo.changes(first, second)[0].after.sha]) == {repo.changes(first, second)[0].after.sha: b"x = 1\n"}
    assert not canary.exists()
    assert git_dir_hash(project) == before


async def _async(value):
    return value


def test_path_snapshots_written_without_git_are_objects_git_reads(project: Path) -> None:
    """The named-path snapshots (no git process) hold blobs and trees git itself reads back and compares the same."""
    repo = ShadowRepo(project)
    paths = ["calc.py", "pkg/mod.py", "pkg/new/deep.txt", "crlf.txt"]
    before = repo.snapshot_paths(paths)
    (project / "calc.py").write_text("def add(a, b):\n    return b + a\n# more\n")
    (project / "pkg" / "new").mkdir()
    (project / "pkg" / "new" / "deep.txt").write_bytes(b"\x00binary")
    (project / "crlf.txt").unlink()
    after = repo.snapshot_paths(paths)
    fast = repo.diff(before, after)
    repo._known.clear()  # now git compares the same two trees
    slow = repo.diff(before, after)
    assert fast == slow
    assert [(c.path, c.kind) for c in fast[0]] == [("calc.py", "changed"), ("crlf.txt", "deleted"), ("pkg/new/deep.txt", "created")]
    assert fast[1]["calc.py"] == (2, 1)
    subprocess.run(["git", "fsck", "--no-dangling", "--strict"], env=repo.env(), cwd=project, check=True, capture_output=True)
