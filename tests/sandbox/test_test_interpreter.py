"""Issue 23 item 9: ``runTests`` finds the Python the user's shell would, and never calls "could not run" "failed".

Driven through the real tool (``CommandTools.run_tests_tool``) in the real sandbox.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.config import Settings
from core.sandbox import python_env
from core.tools.commands import CommandTools

PASSING = "def test_ok():\n    assert 1 + 1 == 2\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_ok.py").write_text(PASSING)
    return root.resolve()


@pytest.fixture
def no_other_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the interpreters a test sets up count (not this machine's pyenv or system Python)."""
    for name in ("VIRTUAL_ENV", "PYENV_ROOT", "PYENV_VERSION", "UV_PROJECT_ENVIRONMENT", "POETRY_VIRTUALENVS_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(python_env, "SYSTEM_PYTHONS", ())


def text(result) -> str:
    return "\n".join(block.get("text", "") for block in result["content"]) if isinstance(result.get("content"), list) \
        else str(result.get("content"))


async def test_the_active_virtualenv_outside_the_project_runs_the_tests(sandbox, project, no_other_python, monkeypatch):
    """No .venv in the project; the user's shell has a virtualenv with pytest active (this test's own)."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    tools = CommandTools(Settings(project_root=project, command_approval="sandbox-auto"))
    result = await tools.run_tests_tool({"args": ["-q", "-p", "no:cacheprovider"]})
    shown = text(result)
    assert "1 passed" in shown and "Tests passed" in shown, shown
    assert result["metadata"]["argv"][0] == str(Path(sys.prefix) / "bin" / "python")


async def test_a_venv_without_pytest_is_reported_as_not_run(sandbox, project, no_other_python):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")], check=True)
    tools = CommandTools(Settings(project_root=project, command_approval="sandbox-auto"))
    shown = text(await tools.run_tests_tool({}))
    assert "could not run the tests" in shown.lower() and "failed" not in shown.lower(), shown
    assert ".venv" in shown  # says which interpreter lacks pytest


async def test_a_configured_command_that_finds_no_pytest_could_not_run(sandbox, project, no_other_python):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")], check=True)
    tools = CommandTools(Settings(project_root=project, command_approval="sandbox-auto",
                                  test_command=".venv/bin/python -m pytest -q"))
    result = await tools.run_tests_tool({})
    shown = text(result)
    assert "No module named pytest" in shown  # it really ran, in the sandbox
    assert "Could not run the tests: pytest is not installed" in shown and "Tests failed" not in shown, shown


async def test_real_failures_still_say_failed(sandbox, project, no_other_python, monkeypatch):
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    (project / "tests" / "test_ok.py").write_text("def test_bad():\n    assert 1 == 2\n")
    tools = CommandTools(Settings(project_root=project, command_approval="sandbox-auto"))
    shown = text(await tools.run_tests_tool({"args": ["-q", "-p", "no:cacheprovider"]}))
    assert "1 failed" in shown and "Tests failed" in shown, shown


def test_pyenv_version_names_from_the_project_are_never_paths(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".pyenv" / "versions" / "3.12.1" / "bin").mkdir(parents=True)
    (home / ".pyenv" / "versions" / "3.12.1" / "bin" / "python3").write_text("")
    (tmp_path / "evil" / "bin").mkdir(parents=True)
    (tmp_path / "evil" / "bin" / "python3").write_text("")
    project = tmp_path / "proj"
    project.mkdir()
    env = {"HOME": str(home)}
    (project / ".python-version").write_text("3.12.1\n")
    found = [c for c in python_env.python_candidates(project, env) if c.source.startswith("pyenv")]
    assert found and found[0].mounts == (str(home / ".pyenv" / "versions" / "3.12.1"),)
    (project / ".python-version").write_text("../../../evil\n")
    assert not [c for c in python_env.python_candidates(project, env) if c.source.startswith("pyenv")]


def test_the_home_directory_is_never_mounted(tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    assert not python_env.safe_mount(str(home), str(home))
    assert not python_env.safe_mount(str(tmp_path), str(home))
    assert not python_env.safe_mount(str(home / ".ssh"), str(home))
    (home / ".pyenv" / "versions" / "3.12.1").mkdir(parents=True)
    assert python_env.safe_mount(str(home / ".pyenv" / "versions" / "3.12.1"), str(home))


def test_poetry_environments_are_found_where_poetry_puts_them(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.poetry]\nname = "My App"\n')
    cache = tmp_path / "cache"
    venv = cache / f"{python_env.poetry_env_name('My App', project)}-py3.11"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    found = python_env.python_candidates(project, {"HOME": str(tmp_path), "POETRY_VIRTUALENVS_PATH": str(cache)})
    assert [c.python for c in found if c.source == "poetry's environment"] == [str(venv / "bin" / "python")]
    assert python_env.poetry_env_name("My App", project).startswith("my_app-")
