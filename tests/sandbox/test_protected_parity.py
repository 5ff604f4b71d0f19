"""One list of the project's configuration files: the sandbox protects exactly what aider may not write.

A probe list of paths (generated from :data:`core.protected.CONFIG_NAMES`, and hand-picked
variants: case, Unicode, nested, hooksPath, includes, a bare repository's shape, ordinary
files) is judged twice: by the sandbox, from the host (a command inside tries to overwrite
or create each; protected = the host still has the old content, or nothing), and by the
aider guard (:func:`core.tools.aider_guard.protected_reason`). Both must agree on every
probe, so a name added to one side only fails here.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from core.protected import CONFIG_NAMES, MOUNT_DIRS, MOUNT_FILES, is_config_name
from core.sandbox import SandboxStatus, run_command
from core.tools.aider_guard import protected_reason


def _name(glob: str) -> str:
    return glob.replace("*", ".probe")


def _table_probes() -> list[str]:
    """Each protected name at the top and one level down (a file in it for the directories)."""
    probes: list[str] = []
    for entry in CONFIG_NAMES:
        names = {_name(entry.glob), _name(entry.glob).upper(), *entry.mount_files}
        for name in sorted(names):
            leaf = f"{name}/config" if name in MOUNT_DIRS else name
            probes += [leaf, f"sub/{leaf}"]
    return probes


EXISTING = sorted({*_table_probes(), ".Env.Local", ".env.example", ".ＥＮＶ", ".GitAttributes", "lib/.ｇｉｔ/HEAD",
                   ".husky/pre-commit", "team.gitconfig", "fixture.git/config", "fixture.git/hooks/post-checkout",
                   "fixture.git/description", ".gitignore", ".editorconfig", "Makefile", "src/app.py",
                   ".github/workflows/ci.yml", "agents.md.bak", "env", ".aid", "README.md", ".envlocal"})
"""Files present before the run (the command overwrites them)."""
CREATED = sorted({*_table_probes(), ".aider.chat.history.md", "src/.env.new", "lib/.git/HEAD", "new.txt",
                  "src/.husky-like/pre-commit", "Agents.MD", ".ｍｃｐ.json", ".envlocal"} - {"src/app.py"})
"""Files absent before the run (the command creates them, and their directories)."""


def _content(path: Path) -> str | None:
    return path.read_text() if path.is_file() and not path.is_symlink() else None


async def _sandbox_protects(sandbox: SandboxStatus, root: Path, probes: list[str]) -> set[str]:
    """The probes a command in the sandbox could not change (as seen on the host afterwards)."""
    before = {probe: _content(root / probe) for probe in probes}
    steps = []
    for probe in probes:
        quoted = shlex.quote(probe)
        steps.append(f"mkdir -p \"$(dirname {quoted})\" 2>/dev/null; printf changed > {quoted} 2>/dev/null")
    result = await run_command(["sh", "-c", "; ".join(steps) + "; echo finished"], project_root=root,
                               bwrap=sandbox.bwrap, rlimit_nproc=sandbox.process_limit == "rlimit")
    assert "finished" in result.output, result.output
    return {probe for probe in probes if _content(root / probe) == before[probe]}


def _existing_project(root: Path) -> Path:
    root.mkdir()
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "config", "core.hooksPath", ".husky"], check=True)
    subprocess.run(["git", "-C", str(root), "config", "include.path", "../team.gitconfig"], check=True)
    for probe in EXISTING:
        path = root / probe
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(f"was {probe}")
    for mark in ("objects", "refs"):
        (root / "fixture.git" / mark).mkdir()
    (root / "fixture.git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root.resolve()


async def test_the_sandbox_and_the_aider_guard_protect_the_same_existing_files(sandbox, tmp_path):
    root = _existing_project(tmp_path / "existing")
    refused = {probe for probe in EXISTING if protected_reason(probe, root)}
    kept = await _sandbox_protects(sandbox, root, EXISTING)
    assert sorted(kept - refused) == [], "protected in the sandbox, written by aider"
    assert sorted(refused - kept) == [], "refused to aider, written in the sandbox"
    assert {"README.md", "src/app.py", ".gitignore", "sub/agents.md", "sub/.mcp.json"} <= set(EXISTING) - refused
    assert {".husky/pre-commit", "team.gitconfig", "fixture.git/config", ".git/config", ".ＥＮＶ"} <= refused


async def test_the_sandbox_and_the_aider_guard_protect_the_same_new_files(sandbox, tmp_path):
    root = tmp_path / "plain"
    (root / "src").mkdir(parents=True)
    root = root.resolve()
    refused = {probe for probe in CREATED if protected_reason(probe, root)}
    kept = await _sandbox_protects(sandbox, root, CREATED)
    assert sorted(kept - refused) == [], "kept out by the sandbox, created by aider"
    assert sorted(refused - kept) == [], "refused to aider, created in the sandbox"
    assert {"new.txt", "sub/agents.md"} <= set(CREATED) - refused


@pytest.mark.parametrize("entry", CONFIG_NAMES, ids=lambda entry: entry.glob)
def test_every_mount_point_is_a_protected_name(entry):
    """A mount point the sandbox creates for a name the list does not protect would be swept as a plant."""
    for name in (*entry.mount_files, *entry.mount_dirs):
        assert is_config_name(name, top=True), name
    assert entry.source and entry.reason
    assert set(MOUNT_FILES) | set(MOUNT_DIRS) >= {".git", ".env", ".mcp.json", ".gitattributes"}
    assert not os.path.isabs(entry.glob)


def test_aider_cannot_complete_a_git_directory_around_a_config_it_wrote(tmp_path):
    """The sandbox sweeps a planted bare repository after the run, whatever the order of its writes; aider's
    writes are judged one at a time, so the write that would complete the shape is the one refused."""
    root = tmp_path.resolve()
    (root / "src").mkdir()
    (root / "src" / "config").write_text("[core]\n\tfsmonitor = touch PWNED\n")
    (root / "src" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "src" / "objects").mkdir()
    assert protected_reason("src/objects/info", root) is None
    assert protected_reason("src/refs/heads/main", root)
    assert protected_reason("src/config", root) is None  # no shape yet: an ordinary file called config
    assert protected_reason("lib/config", root) is None
