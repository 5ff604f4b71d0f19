"""Issue 22 section 3: nothing a sandboxed command writes runs later outside the sandbox.

Judged by the host: after each run, the project on disk holds none of the planted
configuration (git's, aider's, the app's), its existing configuration is unchanged,
no empty mount point is left behind, and ordinary files the command wrote are there.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

import pytest

from core import paths
from core.sandbox import SandboxStatus, run_command

PLANT = (
    "mkdir -p .git/hooks; echo 'touch PWNED' > .git/hooks/pre-commit; echo A=1 > .env.new; echo B=2 > .env; "
    "echo 'export X=1' > .envrc; echo '{\"mcpServers\":{}}' > .mcp.json; echo 'model: x' > .aider.conf.yml; "
    "echo '* filter=evil' > .gitattributes; echo '[submodule \"x\"]' > .gitmodules; "
    "mkdir -p src/.git; echo '[core]' > src/.git/config; echo 'cd ..' > src/.envrc; "
    "echo ok > built.txt; echo finished"
)


def tree(root: Path) -> dict[str, bytes | None]:
    """Every entry under ``root`` (directories as None), relative."""
    found: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            found[os.path.relpath(os.path.join(dirpath, name), root)] = None
        for name in filenames:
            full = os.path.join(dirpath, name)
            found[os.path.relpath(full, root)] = Path(full).read_bytes() if not os.path.islink(full) else b"->"
    return found


async def sandboxed(sandbox: SandboxStatus, root: Path, script: str):
    return await run_command(["sh", "-c", script], project_root=root, bwrap=sandbox.bwrap,
                             rlimit_nproc=sandbox.process_limit == "rlimit")


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """A project with no .git and no configuration files at all."""
    root = tmp_path / "plain"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    return root.resolve()


async def test_a_project_without_configuration_gets_none_planted(sandbox, plain):
    before = tree(plain)
    result = await sandboxed(sandbox, plain, PLANT)
    assert "finished" in result.output
    after = tree(plain)
    assert set(after) - set(before) == {"built.txt"}, "planted files or stray mount points left on the host"
    assert after["built.txt"] == b"ok\n"
    # the writes that can be refused are refused, so the command sees them fail
    assert "‘.git/hooks’: Read-only file system" in result.output
    assert "cannot create .envrc: Read-only file system" in result.output
    assert "cannot create .mcp.json: Read-only file system" in result.output


async def test_git_inside_lists_no_mount_point_as_untracked(sandbox, tmp_path):
    """The empty files bound over missing configuration names (.env, .mcp.json, .aider*...) are
    not the user's: git in the sandbox must not show them to the model as untracked files."""
    root = (tmp_path / "repo").resolve()
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "a.txt").write_text("hi\n")
    result = await sandboxed(sandbox, root, "git status --porcelain --untracked-files=all")
    assert result.returncode == 0, result.output
    assert result.output.splitlines() == ["?? a.txt"]
    assert sorted(os.listdir(root)) == [".git", "a.txt"]


@pytest.mark.parametrize("link", ["exclude", "info"])
async def test_a_linked_exclude_file_shows_no_host_file_inside(sandbox, tmp_path, link):
    """As an attacker: a planted repository whose .git/info/exclude (or .git/info) links to a
    host file outside the project; the sandbox's copy of it must not carry that file in."""
    secret = tmp_path / "outside" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("PRIVATE-KEY-CANARY-7731\n")
    root = (tmp_path / "repo").resolve()
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    info = root / ".git" / "info"
    if link == "exclude":
        (info / "exclude").unlink()
        (info / "exclude").symlink_to(secret)
    else:
        (secret.parent / "exclude").write_text("PRIVATE-KEY-CANARY-7731\n")
        for entry in info.iterdir():
            entry.unlink()
        info.rmdir()
        info.symlink_to(secret.parent)
    result = await sandboxed(sandbox, root, "cat .git/info/exclude; git status --porcelain; echo finished")
    assert "finished" in result.output
    assert "PRIVATE-KEY-CANARY-7731" not in result.output


async def test_existing_configuration_stays_as_it_was(sandbox, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True)
    for name, text in {".gitattributes": "*.py text\n", ".gitmodules": "", ".aider.conf.yml": "model: mine\n",
                       ".mcp.json": "{}\n", ".envrc": "use flake\n", "AGENTS.md": "Be brief.\n"}.items():
        (root / name).write_text(text)
    (root / "lib").mkdir()
    (root / "lib" / ".aider.tags.cache.v4").mkdir()
    (root / "lib" / ".aider.tags.cache.v4" / "cache.db").write_bytes(b"db")
    root = root.resolve()
    before = tree(root)
    script = ("echo '[core] fsmonitor=evil' >> .git/config; echo x >> .gitattributes; echo x >> .aider.conf.yml; "
              "echo x >> AGENTS.md; echo x > .mcp.json; rm -f .envrc; rm -rf lib/.aider.tags.cache.v4; "
              "mv .gitmodules moved; echo finished")
    result = await sandboxed(sandbox, root, script)
    assert "finished" in result.output
    assert tree(root) == before


async def test_a_git_file_and_a_git_symlink_are_protected(sandbox, tmp_path):
    real = tmp_path / "real-gitdir"
    (real / "hooks").mkdir(parents=True)
    (real / "HEAD").write_text("ref: refs/heads/main\n")
    sub = tmp_path / "linked"
    sub.mkdir()
    (sub / ".git").symlink_to(real)
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {real}\n")
    for root in (sub.resolve(), worktree.resolve()):
        before, real_before = tree(root), tree(real)
        result = await sandboxed(sandbox, root, "rm -rf .git; mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit; "
                                 "echo x > .git; echo finished")
        assert "finished" in result.output
        assert tree(root) == before, root
        assert tree(real) == real_before
    assert os.readlink(sub / ".git") == str(real)


async def test_concurrent_runs_leave_no_mount_point_and_stay_protected(sandbox, plain):
    """Two runs at once: the first to end must not uncover the other's protections."""
    marker = plain / "first-started"
    first = asyncio.create_task(sandboxed(sandbox, plain, "touch first-started; while [ ! -e second-done ]; do sleep 0.01; done; "
                                          "echo x > .envrc; echo first-finished"))
    deadline = time.monotonic() + 60
    while not marker.exists():  # the first run is inside its loop: the second starts while it runs
        assert not first.done() and time.monotonic() < deadline, "the first run never started its loop"
        await asyncio.sleep(0.01)
    second = await sandboxed(sandbox, plain, "echo y > .mcp.json; touch second-done; echo second-finished")
    done = await asyncio.wait_for(first, 60)
    assert "first-finished" in done.output and "second-finished" in second.output
    assert sorted(tree(plain)) == ["first-started", "second-done", "src", "src/app.py"]


async def test_the_apps_configuration_is_not_in_the_sandbox(sandbox, plain, isolated_env):
    """A guard (true before issue 22 too): HOME and the XDG directories are never mounted."""
    paths.config_dir().mkdir(parents=True, exist_ok=True)
    (paths.config_dir() / "config.toml").write_text("approval_mode = 'ask'\n")
    (paths.config_dir() / "trusted_projects").write_text("/\n")
    result = await sandboxed(sandbox, plain, f"ls {paths.config_dir()}; echo x > {paths.config_dir()}/trusted_projects; "
                             f"ls {isolated_env}; echo finished")
    assert "finished" in result.output and "config.toml" not in result.output
    assert (paths.config_dir() / "trusted_projects").read_text() == "/\n"


async def test_hooks_and_config_files_the_git_config_points_into_the_tree_are_protected(sandbox, tmp_path):
    """husky's ``core.hooksPath = .husky`` and an ``include.path`` into the tree: git runs and reads them outside."""
    root = tmp_path / "husky"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True)
    (root / ".husky").mkdir()
    (root / ".husky" / "pre-commit").write_text("npm test\n")
    (root / "team.gitconfig").write_text("[alias]\n\tst = status\n")
    subprocess.run(["git", "-C", str(root), "config", "core.hooksPath", ".husky"], check=True)
    subprocess.run(["git", "-C", str(root), "config", "include.path", "../team.gitconfig"], check=True)
    root = root.resolve()
    before = tree(root)
    result = await sandboxed(sandbox, root, "echo 'touch PWNED' >> .husky/pre-commit; echo x > .husky/post-checkout; "
                             "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> team.gitconfig; echo finished")
    assert "finished" in result.output
    assert tree(root) == before


async def test_mount_points_left_by_a_crashed_run_are_removed_by_the_next(sandbox, plain):
    from core.sandbox import protect

    crashed = protect.make_mount_points(plain)  # a run that never released (the app was killed)
    os.close(crashed.fd)
    protect._created.clear()  # and a new process, which never created them
    assert (plain / ".git").is_dir() and (plain / ".envrc").is_file()
    result = await sandboxed(sandbox, plain, "echo x > .envrc; echo finished")
    assert "finished" in result.output and "Read-only file system" in result.output
    assert sorted(tree(plain)) == ["src", "src/app.py"]


async def test_the_apps_configuration_stays_out_of_reach_when_it_lies_in_the_project(sandbox, tmp_path, monkeypatch):
    """A dotfiles repository: ``~/.config`` is a link into the project, so the trusted-projects list is in it."""
    root = (tmp_path / "dotfiles").resolve()
    (root / "config" / "assistant-tui").mkdir(parents=True)
    listed = root / "config" / "assistant-tui" / "trusted_projects"
    listed.write_text("/home/me/work\n")
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / ".config").symlink_to(root / "config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    before = tree(root)
    result = await sandboxed(sandbox, root, "cat config/assistant-tui/trusted_projects; "
                             "echo / >> config/assistant-tui/trusted_projects; rm -rf config/assistant-tui; echo finished")
    assert "finished" in result.output and "/home/me/work" not in result.output
    assert tree(root) == before


async def test_a_forged_mount_point_mark_does_not_keep_a_planted_git(sandbox, plain, python_inside):
    from core.sandbox import protect

    python, read_only = python_inside
    code = (f"import os\nos.makedirs('src/.git/hooks')\nopen('src/.git/config', 'w').write('[core]\\n')\n"
            f"os.setxattr('src/.git', {protect.MARK_XATTR!r}, b'1')\nprint('planted')")
    result = await run_command([*python, "-c", code], project_root=plain, bwrap=sandbox.bwrap, read_only=read_only)
    assert "planted" in result.output, result.output
    assert sorted(tree(plain)) == ["src", "src/app.py"]


async def test_a_bare_repository_planted_in_the_tree_keeps_no_config(sandbox, tmp_path, plain):
    """git in a directory shaped like a git directory (HEAD, objects/, refs/) uses its config: core.fsmonitor runs."""
    script = ("mkdir -p src/objects src/refs; echo 'ref: refs/heads/main' > src/HEAD; "
              "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > src/config; mkdir src/hooks; echo finished")
    result = await sandboxed(sandbox, plain, script)
    assert "finished" in result.output
    assert not (plain / "src" / "config").exists() and not (plain / "src" / "hooks").exists()
    done = subprocess.run(["git", "-c", "safe.bareRepository=all", "status"], cwd=plain / "src", capture_output=True, text=True)
    assert not (plain / "src" / "PWNED").exists(), done.stderr
    # an existing bare repository in the project: its config and hooks are read-only inside
    existing = tmp_path / "fixture.git"
    subprocess.run(["git", "init", "-q", "--bare", "--template=", str(existing)], check=True)
    (existing / "hooks").mkdir(exist_ok=True)
    moved = plain / "fixture.git"
    existing.rename(moved)
    config = (moved / "config").read_text()
    result = await sandboxed(sandbox, plain, "echo '[core] fsmonitor = touch PWNED' >> fixture.git/config; "
                             "echo x > fixture.git/hooks/post-checkout; echo finished")
    assert "finished" in result.output
    assert (moved / "config").read_text() == config and not (moved / "hooks" / "post-checkout").exists()
