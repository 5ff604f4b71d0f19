"""Fixtures for the sandbox tests: the preflight's verdict, a project, and a Python that works inside."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from core.sandbox import SandboxStatus, check_sandbox


@pytest.fixture(scope="session")
def sandbox() -> SandboxStatus:
    """The machine's sandbox; skips when bubblewrap cannot run here (CI sets ASSISTANT_TUI_REQUIRE_SANDBOX=1 to fail instead)."""
    status = check_sandbox(Path.cwd())
    if not status.available:
        if os.environ.get("ASSISTANT_TUI_REQUIRE_SANDBOX"):
            pytest.fail(f"the sandbox is required here: {status.problem}")
        pytest.skip(status.problem)
    return status


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a .env, a private key and a git directory, and a file outside it."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".env").write_text("API_TOKEN=project-dotenv-secret\n")
    (root / "keys").mkdir()
    (root / "keys" / "deploy.pem").write_text("-----BEGIN PRIVATE KEY-----\nproject-pem-secret\n")
    (root / "app.py").write_text("print('hello')\n")
    (tmp_path / "outside.txt").write_text("untouched\n")
    return root.resolve()


@pytest.fixture
def python_inside() -> tuple[list[str], list[str]]:
    """(argv prefix running this Python, read-only paths that make it resolve in the sandbox)."""
    return [sys.executable, "-I", "-S"], sorted({sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))})
