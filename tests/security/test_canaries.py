"""Secrets stay put: not in child processes, not sent to a repository's endpoint, not run by its config.

- ``printenv`` run by the model (through approval, and with ``--yes``) shows no
  secret, and so neither does the request carrying its output back to the model.
- aider's child environment carries its own API key and nothing else secret.
- The real ``assistant-tui -p`` in a project whose ``.env`` points the API at the
  exfiltration listener talks to the configured endpoint until the user trusts
  the project (``--trust``), and then (only then) to the listener.
- A repository's own git configuration (``core.fsmonitor``) must not run a program
  when assistant-tui lists, searches or reads the project.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from core import paths
from core.config import Settings
from core.types import ApprovalRequest, Decision
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.reliability.support import (  # noqa: F401 - fixtures
    API_KEY_CANARY,
    CANARIES,
    ENV_CANARY,
    CanaryProject,
    app_log,
    assert_no_leaks,
    canary_key,
    canary_project,
    collect,
    finished_calls,
    listener,
    make_application,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mode", ["user-approves", "allow"])
async def test_the_model_sees_no_secret_in_the_child_environment(
    mode: str, fake_llm: FakeLLM, canary_project: CanaryProject, canary_key: str, app_log: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", ENV_CANARY)
    monkeypatch.setenv("INNOCENT_LOOKING", API_KEY_CANARY)
    monkeypatch.setenv("A_VISIBLE_SETTING", "kept")  # sorted first: the output shown is capped
    application = make_application("anthropic", fake_llm, canary_project.root,
                                   approval_mode="allow" if mode == "allow" else "ask")
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision.ALLOW_ONCE

    application.handler.approvals.set_approver(approve)
    fake_llm.script(
        Reply(tools=[Tool("executeFilePathCommand", {"command": "printenv | sort"}),
                     Tool("executeFilePathCommand", {"command": "env"})]),
        Reply(text="That is the environment."),
    )
    events = await collect(application.handler, "show me the environment")
    application.session_state.close()
    printenv, env = finished_calls(events)
    # Issue 22: printenv is off the file-finding tool's allowlist, whatever the approval (what a stage's
    # program sees is checked in tests/tools/test_safe_exec.py, run in the tool's sandbox).
    assert printenv.status == "refused" and "not one of the programs" in printenv.result
    assert env.status == "refused" and "launches or wraps other programs" in env.result
    assert asked == []
    assert "A_VISIBLE_SETTING=kept" not in str(fake_llm.requests[1].messages[-1])
    assert_no_leaks(fake_llm, canary_project.listener, extra={"events": repr(events)})


def test_aider_gets_its_own_key_and_no_other_secret(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from core.tools.aider_bridge import aider_endpoint, aider_model_name, child_environment

    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY_CANARY)
    monkeypatch.setenv("GITHUB_TOKEN", ENV_CANARY)
    monkeypatch.setenv("INNOCENT_LOOKING", API_KEY_CANARY)
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/agent.sock")
    monkeypatch.setenv("VISIBLE_SETTING", "kept")
    settings = Settings(project_root=tmp_path, anthropic_api_key=API_KEY_CANARY, anthropic_base_url="http://127.0.0.1:9")
    env = child_environment(aider_endpoint(settings, aider_model_name(settings)), settings.secrets())
    holding = sorted(name for name, value in env.items() if any(canary in value for canary in CANARIES))
    assert holding == ["ANTHROPIC_API_KEY"], holding
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert "SSH_AUTH_SOCK" not in env and env["VISIBLE_SETTING"] == "kept"


# -- the real CLI in a hostile project -------------------------------------------------


def run_cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)  # a hang guard: one CLI run took 55-85 s at load 13 (stress --cpu 2)


@pytest.fixture
def cli_env(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a user whose endpoint is set in their own config file, not in the environment.

    The project's ``.env`` sits between the two in precedence, so if it were honoured
    it would win over the user's config file.
    """
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY_CANARY)
    config = paths.config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'anthropic_base_url = "{fake_llm.anthropic_url}"\nmax_retries = 0\n')
    return dict(os.environ, PYTHONPATH=str(REPO))


def test_an_untrusted_project_cannot_redirect_the_api(
    fake_llm: FakeLLM, canary_project: CanaryProject, cli_env: dict[str, str]
) -> None:
    fake_llm.script(Reply(text="answered by the configured endpoint"))
    out = run_cli(["-p", "hello"], canary_project.root, cli_env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "answered by the configured endpoint\n"
    assert "ignoring ANTHROPIC_BASE_URL" in out.stderr and "not trusted" in out.stderr  # the user is told
    headers = fake_llm.requests[0].headers
    assert len(fake_llm.requests) == 1 and API_KEY_CANARY in headers.get("x-api-key", headers.get("authorization", ""))
    assert_no_leaks(fake_llm, canary_project.listener, extra={"stdout": out.stdout, "stderr": out.stderr})

    # The mechanism is real: once the user trusts the project, its .env wins (and the key goes there).
    out = run_cli(["-p", "hello", "--trust"], canary_project.root, cli_env)
    assert out.returncode != 0 and "Traceback" not in out.stderr and API_KEY_CANARY not in out.stderr
    assert len(fake_llm.requests) == 1
    assert canary_project.listener.connections and API_KEY_CANARY.encode() in canary_project.listener.connections[0]


def plant_fsmonitor(project: CanaryProject, marker: Path) -> None:
    """A repository whose own .git/config runs a program (with the user's environment) on git commands."""
    hook = project.root / ".git" / "fsmonitor-hook"
    hook.write_text(f"#!/bin/sh\nenv >> '{marker}'\necho 0\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    subprocess.run(["git", "config", "core.fsmonitor", str(hook)], cwd=project.root, check=True)
    subprocess.run(["git", "config", "core.pager", f"touch '{marker}.pager'; cat"], cwd=project.root, check=True)


def test_repository_git_config_runs_nothing(
    fake_llm: FakeLLM, canary_project: CanaryProject, cli_env: dict[str, str], tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED"
    plant_fsmonitor(canary_project, marker)
    fake_llm.script(
        Reply(tools=[Tool("executeFilePathCommand", {"command": "git ls-files"}),
                     Tool("executeFilePathCommand", {"command": "git grep -l login"}),
                     Tool("readFile", {"path": "src/auth.py"})]),
        Reply(text="listed"),
    )
    out = run_cli(["-p", "which files are about auth?"], canary_project.root, cli_env)
    assert out.returncode == 0, out.stderr
    ran = marker.read_text() if marker.exists() else ""
    assert not marker.exists() and not Path(f"{marker}.pager").exists(), (
        f"the repository's fsmonitor ran; it saw the API key: {API_KEY_CANARY in ran}")
