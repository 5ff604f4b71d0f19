"""Fixtures for memory tests: small real project trees, with or without git."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Create files (relative path -> text) under root."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def git(root: Path, *args: str) -> str:
    """Run git in root (real git, isolated identity)."""
    import os

    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def make_tree(tmp_path: Path) -> Callable[..., Path]:
    """make_tree(files, git_tracked=None): a project dir; with git_tracked, a git repo where those files are committed."""

    def make(files: dict[str, str], git_tracked: list[str] | None = None) -> Path:
        root = tmp_path / "project"
        root.mkdir()
        write_tree(root, files)
        if git_tracked is not None:
            git(root, "init", "-q")
            if git_tracked:
                git(root, "add", "--", *git_tracked)
                git(root, "commit", "-q", "-m", "init")
        return root

    return make
