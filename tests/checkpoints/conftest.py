"""Fixtures of the checkpoint tests: the machine's sandbox (commands run in it) and a project with history."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.sandbox.conftest import sandbox  # noqa: F401 - the fixture


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project: tracked files, an untracked file, an ignored directory, one commit."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (root / "keep.txt").write_text("keep me\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("X = 1\n")
    (root / "pkg" / "util.py").write_text("Y = 2\n")
    (root / ".gitignore").write_text("build/\n")
    (root / ".gitattributes").write_text("*.txt text eol=lf\n")
    (root / "build").mkdir()
    (root / "build" / "out.bin").write_bytes(b"\0\1\2")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for argv in (["git", "init", "-q"], ["git", "add", "calc.py", "crlf.txt", "pkg", ".gitignore", ".gitattributes"],
                 ["git", "commit", "-qm", "init"]):
        subprocess.run(argv, cwd=root, env=env, check=True)
    (root / "notes.md").write_text("untracked notes\n")  # untracked, not ignored
    return root
