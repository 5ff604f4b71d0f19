"""Fixtures for the aider and task tests: a real git repository and settings aimed at the fake server."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import pytest

from core.config import Settings
from tests.fake_llm import FakeLLM

if TYPE_CHECKING:
    from tests.aider.hostile import Listener

CALC = "def add(a, b):\n    return a + b\n"


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` with a fixed identity; returns stdout."""
    command = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", *args]
    return subprocess.run(command, cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A git repository with ``calc.py`` and ``auth/login.py`` committed."""
    root = tmp_path / "project"
    (root / "auth").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "auth" / "login.py").write_text("def login(user, password):\n    return user == 'admin'\n")
    (root / "README.md").write_text("A small project.\n")
    git(root, "init", "-q")
    git(root, "config", "user.name", "Test")  # aider's own commits need an identity
    git(root, "config", "user.email", "test@example.com")
    git(root, "add", ".")
    git(root, "commit", "-qm", "initial")
    return root.resolve()


@pytest.fixture
def aider_settings(fake_llm: FakeLLM, git_repo: Path) -> Settings:
    """Settings whose aider model (``openai/fake-model``) talks to the fake server."""
    return Settings(
        provider="openai",
        model="fake-model",
        openai_base_url=fake_llm.openai_url,
        openai_api_key="sk-test-not-a-real-key",
        project_root=git_repo,
    )


@pytest.fixture
def listener() -> Iterator["Listener"]:
    """A loopback listener standing for the endpoint a hostile repository names."""
    from tests.aider.hostile import Listener

    server = Listener()
    yield server
    server.close()


@pytest.fixture
def canaries(tmp_path: Path) -> Path:
    """Where the programs a hostile repository names leave their mark (outside the project)."""
    return tmp_path / "canaries"


@pytest.fixture
def hostile_repo(git_repo: Path, listener: "Listener", canaries: Path) -> Path:
    """``git_repo`` with :func:`tests.aider.hostile.plant`'s configuration committed and git set to run programs."""
    from tests.aider.hostile import plant

    plant(git_repo, listener, canaries)
    return git_repo


def whole_file_edit(rel_path: str, content: str) -> str:
    """An aider reply in the "whole" edit format (aider's default for unknown openai/ models)."""
    return f"Here is the updated file.\n\n{rel_path}\n```python\n{content}```\n"


def search_replace_edit(rel_path: str, search: str, replace: str) -> str:
    """An aider reply in the "diff" (SEARCH/REPLACE) edit format."""
    return f"{rel_path}\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"
