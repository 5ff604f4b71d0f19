"""Helpers shared by the tool and security tests: real git repos, approvers, process checks."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.types import ApprovalRequest, Decision

GIT_IDENTITY = ("-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false")


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` and return its stdout; fails the test on error."""
    proc = subprocess.run(["git", *GIT_IDENTITY, *args], cwd=root, capture_output=True, text=True, check=True)
    return proc.stdout


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def make_repo(root: Path, files: dict[str, str | bytes], *, commit: bool = True) -> Path:
    """A git repository with ``files``; everything not ignored is committed."""
    root.mkdir(parents=True, exist_ok=True)
    write_files(root, files)
    git(root, "init", "-q", "-b", "main", "--template=")  # no sample hooks: less to copy
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
    return root


class RepoCache:
    """Builds each distinct repository once per test session and hands out copies (git is slow to set up)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.templates: dict[tuple, Path] = {}

    def make(self, dest: Path, files: dict[str, str | bytes]) -> Path:
        """A fresh copy at ``dest`` of a committed repository holding ``files``."""
        key = tuple(sorted(files.items()))
        template = self.templates.get(key)
        if template is None:
            template = make_repo(self.workdir / f"template{len(self.templates)}", files)
            self.templates[key] = template
        shutil.copytree(template, dest, symlinks=True)
        return dest


@dataclass
class RecordingApprover:
    """An approver that answers every request with ``decision`` and remembers the requests."""

    decision: Decision = Decision.DENY
    requests: list[ApprovalRequest] = field(default_factory=list)

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return self.decision


def process_gone(pid: int, timeout: float = 3.0) -> bool:
    """True once ``pid`` no longer runs (gone, or a zombie waiting for its reaper)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state in ("Z", "X"):
                return True
        except (OSError, IndexError):
            pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def tree_snapshot(*roots: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry under ``roots`` (symlinks not followed): kind, size, content digest."""
    snapshot: dict[str, tuple[str, int, str]] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            for name in dirnames + filenames:
                path = Path(dirpath, name)
                if path.is_symlink():
                    snapshot[str(path)] = ("link", 0, os.readlink(path))
                elif path.is_dir():
                    snapshot[str(path)] = ("dir", 0, "")
                else:
                    data = path.read_bytes()
                    snapshot[str(path)] = ("file", len(data), hashlib.sha256(data).hexdigest())
    return snapshot


def tool_sandbox():
    """The file-finding tool's sandbox status; skips without bubblewrap (fails with ASSISTANT_TUI_REQUIRE_SANDBOX=1)."""
    import pytest

    from core.tools.find_sandbox import sandbox_status

    status = sandbox_status()
    if not status.available:
        if os.environ.get("ASSISTANT_TUI_REQUIRE_SANDBOX"):
            pytest.fail(status.problem)
        pytest.skip(status.problem)
    return status


async def stage_output(argv: list[str], root: Path, env: dict[str, str]) -> str:
    """What ``argv`` prints (stdout and stderr) when run as the tool runs a stage: in its sandbox, with its env.

    For programs the policy never runs (``printenv``, ``touch``...), to test the sandbox itself.
    """
    import asyncio

    from core.tools.find_sandbox import CHILD_PATH, sandboxed_env, sandboxed_stages

    status = tool_sandbox()
    program = shutil.which(argv[0], path=CHILD_PATH) or argv[0]
    [full] = sandboxed_stages([[program, *argv[1:]]], status.bwrap, root)
    proc = await asyncio.create_subprocess_exec(*full, cwd=root, env=sandboxed_env(env), stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await proc.communicate()
    return out.decode("utf-8", "replace")
