"""Git in a hostile repository: no program the repository names ever runs (issue 12, class 1).

The fixture (:mod:`tests.security.hostile_git`) names a sentinel in every config key,
attribute and hook git documents as running a program. Every allowlisted and
approvable git command runs against it with everything approved, and so do the
app's own gits (the file index, ``git status`` around aider, ``check-ignore`` for
readFile, GitPython under the hardened process environment). The control test
shows the fixture is armed: plain git does run the sentinel.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core.gitutil import FORCED_CONFIG, GitRefused, git_env, harden_git_environment, run_git
from core.tools.files import is_git_ignored, read_file_tool
from core.tools.safe_exec import execute_command_safely
from tests.security.hostile_git import GIT_IDENTITY, HOOKS, PROGRAM_KEYS, build_hostile_repo

# Allowlisted (no approval) and approvable git commands, run with approval_mode="allow".
RUN = [
    "git ls-files", "git ls-files -m", "git ls-files -d", "git ls-files -o", "git ls-files -s", "git ls-files --eol",
    "git ls-files -t -v", "git ls-files -o -i --exclude-standard", "git ls-files --modified --others",
    "git grep -l hello", "git grep -n hello", "git grep -c hello", "git grep -l hello HEAD", "git grep -n -e hello -- a.txt",
    "git grep --cached -l hello", "git grep -p -n hello",
    "git status", "git status -s", "git status --porcelain -uall", "git status -v", "git diff", "git diff HEAD",
    "git diff --stat", "git diff --cached", "git diff other", "git diff -p HEAD~1", "git diff --word-diff",
    "git log", "git log -p", "git log --stat", "git log --show-signature", "git log -1 --format=%G?",
    "git log --oneline --graph --all", "git show", "git show --show-signature HEAD", "git show HEAD~1:a.txt",
    "git show v1", "git whatchanged -1", "git diff-tree -p HEAD",
    "git diff-index -p HEAD", "git diff-files -p", "git format-patch -1 --stdout", "git range-diff HEAD~1 HEAD~1 HEAD",
    "git cat-file -p HEAD", "git cat-file --filters HEAD:a.txt",
    "git ls-tree -r HEAD", "git rev-parse HEAD", "git describe --always", "git shortlog -s HEAD", "git reflog",
    "git branch", "git branch -a -v", "git branch feature", "git tag", "git tag -l", "git tag t1",
    "git tag -a t2 -m x", "git tag -s t3 -m x", "git verify-tag v1", "git verify-commit HEAD",
    "git check-ignore -v a.txt", "git check-attr -a a.txt", "git count-objects -v", "git fsck", "git var -l",
    "git interpret-trailers --trailer evil=x", "git stripspace",
    "git add -A", "git add a.txt b.dat c.inc", "git commit -m msg", "git commit -am msg2 --allow-empty",
    "git commit --amend -m amended", "git commit --allow-empty", "git commit -S -m signed --allow-empty",
    "git commit --allow-empty -m t --trailer evil=x", "git stash", "git stash list", "git stash show -p",
    "git stash pop", "git checkout -b topic", "git checkout main", "git checkout other -- a.txt",
    "git switch -c topic2", "git switch main", "git restore a.txt", "git restore --source=HEAD~1 a.txt",
    "git merge other --no-edit", "git merge --abort", "git cherry-pick other", "git cherry-pick --abort",
    "git revert HEAD --no-edit", "git reset --hard HEAD", "git reset HEAD~1", "git mv a.txt moved.txt",
    "git rm --cached b.dat", "git clean -n", "git worktree list", "git gc", "git gc --auto", "git repack -a -d",
    "git prune", "git pack-refs --all", "git notes list", "git rerere status", "git merge-base HEAD other",
    "git name-rev HEAD", "git show-ref", "git for-each-ref", "git rev-list --all", "git apply --check --stat none.patch",
    "git sparse-checkout list", "git update-index --refresh", "git write-tree", "git read-tree HEAD",
    "git checkout-index -a -f", "git commit-graph write", "git bundle create x.bundle HEAD",
]
# Refused whatever the approval: they would run a repository-named program, a network transport,
# a man viewer, an alias or an external git-* program.
REFUSED = [
    "git help log", "git log --help", "git status --help", "git status --hel", "git --help", "git st", "git lsf",
    "git evil", "git lfs status", "git fetch", "git pull", "git push", "git clone ext::sh x", "git ls-remote origin",
    "git fetch-pack ext::sh", "git send-pack x", "git archive --remote=ext::sh HEAD", "git archive --exec=x HEAD",
    "git hook run pre-commit", "git -c core.pager=x log", "git -C . status", "git --git-dir=.git status",
    "git --work-tree=. status", "git --exec-path=. status", "git difftool", "git mergetool", "git send-email x",
    "git instaweb", "git web--browse x", "git submodule update", "git config --list", "git credential fill",
    "git maintenance start", "git bisect start", "git rebase -i HEAD~1", "git log --ext-diff", "git diff --ext-diff",
    "git log --textconv", "git grep -O hello", "git grep --open-files-in-pager=x hello", "git grep --textconv hello",
    "git ls-files --recurse-submodules", "git grep --recurse-submodules hello", "git remote add x ext::sh",
    "git am x.patch", "git diff --output=x", "git format-patch -o out -1", "git upload-pack .",
    "git daemon", "git update-server-info --x", "git filter-branch", "git p4", "git svn",
    # this repository's blame.ignoreRevsFile names a file outside it (a list no option can reset in git 2.39)
    "git blame a.txt", "git annotate a.txt", "git cat-file --textconv HEAD:a.txt",
]


@pytest.fixture(scope="module")
def hostile_git_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_hostile_repo(tmp_path_factory.mktemp("hostile-git")).parent


@pytest.fixture
def hostile_repo(hostile_git_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the armed repository; HOME holds a hostile global config too."""
    import shutil

    base = tmp_path / "h"
    shutil.copytree(hostile_git_template, base, symlinks=True)
    armed = [base / "sentinel", base / "repo/.git/config", base / "repo/included.cfg",
             *(base / "hostile-hooks").iterdir(), *(base / "repo/.git/hooks").iterdir()]
    for path in armed:  # point every copy at this test's own sentinel log
        path.write_text(path.read_text().replace(str(hostile_git_template), str(base)))
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[core]\n\tpager = {base}/sentinel global-pager\n"
                                     f"[diff \"glob\"]\n\ttextconv = {base}/sentinel global-textconv\n")
    monkeypatch.setenv("HOME", str(home))
    for key, value in GIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    return base / "repo"


def _sentinel(repo: Path) -> str:
    log = repo.parent / "sentinel.log"
    return log.read_text() if log.exists() else ""


def test_the_fixture_covers_every_documented_program_key_and_hook(hostile_repo: Path) -> None:
    listed = subprocess.run(["git", "config", "--list", "--name-only"], cwd=hostile_repo, capture_output=True,
                            text=True, check=True, env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}).stdout.lower()
    for key, _, source in PROGRAM_KEYS:
        assert key.lower() in listed.split("\n"), (key, source)
        assert source.startswith(("git-config(1)", "gitattributes(5)", "githooks(5)", "gitcredentials(7)",
                                  "git-remote-ext(1)", "git-interpret-trailers(1)")), key
    assert len(HOOKS) == 28 and all((hostile_repo / ".git/hooks" / h).exists() for h in HOOKS)
    from core.gitutil import _LISTED_ONLY

    forced = {key.lower() for key, _ in FORCED_CONFIG} | set(_LISTED_ONLY)  # diff.external: pinned when listed
    for key, kind, _ in PROGRAM_KEYS:  # fixed-name keys are pinned; named ones are found by listing
        if key.count(".") == 1 and kind != "include" and not key.lower().startswith(("pager.", "alias.", "sendemail.")):
            assert key.lower() in forced or key.lower() in {"help.format", "remote.origin.url"}, key


@pytest.mark.parametrize("command", [
    ["status"], ["diff"], ["tag", "-s", "signed", "-m", "x"], ["ls-files", "-m"], ["st"], ["commit", "--allow-empty", "-m", "x"],
])
def test_control_plain_git_does_run_the_sentinel(hostile_repo: Path, command: list[str]) -> None:
    """Without the hardening the fixture is armed: each of these runs the sentinel."""
    subprocess.run(["git", *command], cwd=hostile_repo, capture_output=True, check=False,
                   env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_PAGER": ""}, stdin=subprocess.DEVNULL)
    assert _sentinel(hostile_repo), command


def _runnable(command: str) -> bool:
    """On the file-finding tool's allowlist (issue 22): git's read-only subcommands; the others are refused."""
    from core.tools.program_rules import GIT_READ_ONLY

    return command.split()[1] in GIT_READ_ONLY | {"ls-files", "grep"} and command != "git branch feature"


async def test_every_allowlisted_and_approvable_git_command_runs_no_sentinel(hostile_repo: Path) -> None:
    ran, problems = [], []
    for command in RUN:
        result = await execute_command_safely(command, project_root=hostile_repo, approval_mode="allow", timeout=20)
        ran.append((command, result.status))
        if (result.status == "refused") is _runnable(command):
            problems.append((command, result.status, result.reason))
        if _sentinel(hostile_repo):
            problems.append((command, "SENTINEL RAN", _sentinel(hostile_repo)))
            (hostile_repo.parent / "sentinel.log").unlink()
        if "OUTSIDE-CANARY" in result.stdout + result.stderr:
            problems.append((command, "outside file shown", result.stdout + result.stderr))
    assert problems == []
    assert sum(status == "success" for _, status in ran) > sum(map(_runnable, RUN)) * 2 // 3, ran


@pytest.mark.parametrize("command", REFUSED)
async def test_program_running_git_forms_are_refused_even_under_yes(hostile_repo: Path, command: str) -> None:
    result = await execute_command_safely(command, project_root=hostile_repo, approval_mode="allow", timeout=10)
    assert result.status == "refused", (command, result.status, result.stderr)
    assert _sentinel(hostile_repo) == ""


def test_the_apps_own_gits_run_no_sentinel(hostile_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.memory.index import FileIndex
    from core.tools.aider_session import git_status

    index = FileIndex(hostile_repo)
    index.build()
    assert "a.txt" in index.paths and index.uses_git
    assert "a.txt" in git_status(hostile_repo)
    assert is_git_ignored(hostile_repo / "a.txt", hostile_repo) is False
    assert "hello" in str(read_file_tool({"path": "a.txt"}, project_root=hostile_repo)["content"])
    for args in (["status"], ["diff", "--no-ext-diff", "--no-textconv"], ["log", "-p", "--no-ext-diff", "--no-textconv"],
                 ["show", "--no-ext-diff", "--no-textconv", "HEAD"], ["ls-files", "-m"]):
        assert run_git(args, hostile_repo).returncode in (0, 1), args
    env: dict[str, str] = dict(os.environ)
    harden_git_environment(env, cwd=hostile_repo)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    import git  # GitPython, as aider uses it

    repo = git.Repo(hostile_repo)
    repo.git.status()
    repo.git.diff("--stat")
    repo.git.log("-p", "-1", "--no-ext-diff", "--no-textconv")  # with drivers: fails, runs nothing (see below)
    with pytest.raises(git.GitCommandError, match="disabled-by-assistant-tui"):
        repo.git.diff()
    repo.git.add("-A")
    repo.git.commit("-m", "by gitpython")
    assert _sentinel(hostile_repo) == ""


def test_a_gitfile_pointing_outside_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    subprocess.run(["git", "init", "-q", str(elsewhere)], check=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    with pytest.raises(GitRefused, match="outside the project"):
        git_env(project)
    subprocess.run(["git", "init", "-q", str(tmp_path / "wt")], check=True)
    (tmp_path / "wt" / ".git" / "config").write_text("[core]\n\tworktree = /\n")
    with pytest.raises(GitRefused, match="core.worktree"):
        git_env(tmp_path / "wt")


def test_hardened_git_diff_still_works_in_a_plain_repository(tmp_path: Path) -> None:
    """Third-party git (aider's GitPython, mcp-server-git) runs `git diff` without --no-ext-diff:
    the hardening must not break it where the repository names no external diff."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.txt").write_text("hello\n")
    subprocess.run(["git", "add", "a.txt"], cwd=tmp_path, check=True)
    env = dict(os.environ)
    harden_git_environment(env, cwd=tmp_path)
    done = subprocess.run(["git", "diff", "--cached"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "+hello" in done.stdout, done.stderr
