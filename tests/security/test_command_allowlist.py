"""Issue 22 section 2: every command the model runs goes through the sandbox and an allowlist.

Judged by effects seen from outside: a ``PWNED`` file (in the project or next to it),
a canary outside the project, a loopback listener, a file the approval named. Never
by the app's own verdict alone.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from core.approvals import Approvals
from core.tools.safe_exec import execute_command_safely, run_file_path_command
from core.types import ApprovalRequest, Decision, is_error
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.reliability.support import (  # noqa: F401 - fixtures
    app_log,
    canary_key,
    canary_project,
    collect,
    finished_calls,
    listener,
    make_application,
)
from tests.security.test_canaries import cli_env  # noqa: F401 - fixture
from tests.security.battery_cases import LAUNCHERS_ISSUE22
from tests.security.conftest import Hostile, loopback_listener
from tests.tools.support import RecordingApprover, make_repo, stage_output, tool_sandbox, write_files

# What the issue-22 launchers need to find in the project to do their work.
PLANTED = {
    "keep.txt": "keep me\n",
    "Makefile": "pwn:\n\ttouch PWNED\n",
    "CTestTestfile.cmake": 'add_test(pwn "/usr/bin/touch" "PWNED")\n',
    "x.cmake": 'file(WRITE PWNED "")\n',
    "timing": "H 0.000000 START_TIME 2026-11-26 18:42:14+00:00\nH 0.000000 SHELL /bin/bash\n"
              "H 0.000000 COMMAND true\nH 0.000000 TIMING_LOG timing\nH 0.000000 INPUT_LOG in.log\n"
              "H 0.000000 DURATION 0.022512\nH 0.000000 EXIT_CODE 0\n",
    "in.log": 'Script started on 2026-11-26 18:42:14+00:00 [COMMAND="true" <not executed on terminal>]\n\n'
              'Script done on 2026-11-26 18:42:14+00:00 [COMMAND_EXIT_CODE="0"]\n',
}
PROGRAMS = [command for command, _, source in LAUNCHERS_ISSUE22 if source == "issue22"]


def pwned(base: Path) -> list[str]:
    return sorted(str(p) for p in base.rglob("PWNED*"))


@pytest.fixture
def launch_pad(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    make_repo(root, PLANTED)
    (tmp_path / "outside.txt").write_text("OUTSIDE-CANARY-22\n")
    return root


@pytest.mark.parametrize("command", PROGRAMS)
async def test_issue22_launchers_do_nothing_under_yes(launch_pad: Path, command: str) -> None:
    """rbash, capsh, prlimit, setarch, linux64, sg, fakeroot, logsave, perf stat, gcc -wrapper, ctest,
    make-first-existing-target, scriptlive, perl5.36-x86_64-linux-gnu, vim.basic, editor: each would
    create PWNED (checked by hand with the programs installed here); under --yes nothing is created."""
    everyone = RecordingApprover(Decision.ALLOW_SESSION)
    result = await run_file_path_command({"command": command}, project_root=launch_pad, approvals=Approvals("allow", everyone),
                                         timeout=10)
    assert pwned(launch_pad.parent) == [], command
    assert everyone.requests == []
    assert is_error(result) and "Allowed: find, ls, grep" in result["content"], result["content"][:300]
    assert (launch_pad / "keep.txt").read_text() == "keep me\n"


def test_the_launchers_would_work_here(launch_pad: Path) -> None:
    """The cases above can fail: run directly (no app involved), make-first-existing-target creates PWNED."""
    if shutil.which("make-first-existing-target") is None:
        pytest.skip("make-first-existing-target is not installed")
    import subprocess

    subprocess.run(["make-first-existing-target", "pwn", "--"], cwd=launch_pad, capture_output=True, check=False)
    assert pwned(launch_pad) != []


# ---------------------------------------------------------------- the sandbox itself


async def test_file_finding_commands_run_in_the_sandbox(launch_pad: Path) -> None:
    """`ls -l .env` inside shows the mask (mode 000, empty), where the host file is readable and not empty."""
    tool_sandbox()
    write_files(launch_pad, {".env": "TOKEN=CANARY-DOTENV-22\n"})
    result = await execute_command_safely("ls -ln .env", project_root=launch_pad)
    assert result.status == "success", result.reason
    mode, size = result.stdout.split()[0], result.stdout.split()[4]
    assert mode.startswith("----------") and size == "0", result.stdout
    assert os.stat(launch_pad / ".env").st_size > 0


async def test_the_sandbox_is_read_only_with_no_network_and_no_home(hostile: Hostile) -> None:
    """What a stage's program can do, tried with programs the policy would never run."""
    tool_sandbox()
    env = {"PATH": "/usr/bin:/bin"}
    await stage_output(["touch", "PWNED"], hostile.root, env)
    await stage_output(["touch", str(hostile.evil / "PWNED")], hostile.root, env)
    assert pwned(hostile.base) == []
    shown = await stage_output(["cat", str(hostile.home / ".ssh/id_rsa")], hostile.root, env)
    assert "PRIVATE KEY" not in shown
    with loopback_listener(read=False) as (port, received):
        await stage_output(["bash", "-c", f"echo x > /dev/tcp/127.0.0.1/{port}"], hostile.root, env)
        await asyncio.sleep(0.3)  # the listener thread polls every 0.2 s; a connection would be recorded by now
        assert received == []


# ---------------------------------------------------------------- read-only mode


def runs(fake: FakeLLM, *calls: Tool) -> None:
    fake.script(Reply(tools=list(calls)), Reply(text="done"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    make_repo(root, {"keep.txt": "keep me\n", "src/app.py": "def login():\n    pass\n"})
    return root


async def test_read_only_mode_refuses_commands_even_when_the_sandbox_would_run_them(
    fake_llm: FakeLLM, project: Path
) -> None:
    """--approval-mode deny with command_approval=sandbox-auto: runCommand used to run without asking."""
    application = make_application("anthropic", fake_llm, project, approval_mode="deny",
                                   command_approval="sandbox-auto")
    runs(fake_llm, Tool("runCommand", {"command": ["touch", "PWNED"]}), Tool("runTests", {}))
    events = await collect(application.handler, "make a file")
    application.session_state.close()
    assert pwned(project.parent) == []
    assert [c.status for c in finished_calls(events)] == ["denied", "denied"]


async def test_read_only_mode_ignores_an_earlier_always(fake_llm: FakeLLM, project: Path) -> None:
    application = make_application("anthropic", fake_llm, project)
    answers = RecordingApprover(Decision.ALLOW_SESSION)
    application.handler.approvals.set_approver(answers)
    runs(fake_llm, Tool("runCommand", {"command": ["touch", "FIRST"]}))
    await collect(application.handler, "first")
    assert (project / "FIRST").exists() or not (await application.commands.status()).available
    application.session_state.set_approval_mode("deny")
    runs(fake_llm, Tool("runCommand", {"command": ["touch", "PWNED"]}))
    await collect(application.handler, "again")
    application.session_state.close()
    assert pwned(project.parent) == [] and len(answers.requests) == 1


async def test_task_that_edits_files_asks_in_read_only_mode(fake_llm: FakeLLM, project: Path) -> None:
    """/task aider:automatic in read-only mode: asked first; denied, the files stay as they were."""
    application = make_application("anthropic", fake_llm, project, approval_mode="deny")
    edited: list[str] = []

    def stand_in(inputs: dict[str, Any]) -> str:  # what aider would do: edit the file it was given
        (project / "keep.txt").write_text("edited\n")
        edited.append(inputs["prompt"])
        return "edited"

    application.task_system.register_executor("aider:automatic", stand_in)
    answers = RecordingApprover(Decision.DENY)
    application.handler.approvals.set_approver(answers)
    result = await application.session_state.run_task("/task aider:automatic prompt='Rewrite keep.txt'")
    assert (project / "keep.txt").read_text() == "keep me\n" and edited == []
    assert is_error(result) and "not run" in result["content"]
    [request] = answers.requests
    assert not request.offers_session
    answers.decision = Decision.ALLOW_ONCE
    await application.session_state.run_task("/task aider:automatic prompt='Rewrite keep.txt'")
    application.session_state.close()
    assert (project / "keep.txt").read_text() == "edited\n"


# ---------------------------------------------------------------- "always" is keyed by the program


async def test_a_planted_pytest_never_rides_on_an_earlier_always(fake_llm: FakeLLM, project: Path) -> None:
    """The user allowed pytest (the system's) for the session; the model then plants .venv/bin/pytest."""
    tool_sandbox()
    application = make_application("anthropic", fake_llm, project)
    answers = RecordingApprover(Decision.ALLOW_SESSION)
    application.handler.approvals.set_approver(answers)
    runs(fake_llm, Tool("runCommand", {"command": ["pytest", "--version"]}))
    await collect(application.handler, "which pytest")
    assert len(answers.requests) == 1
    planted = project / ".venv/bin/pytest"
    planted.parent.mkdir(parents=True)
    planted.write_text("#!/bin/sh\ntouch PWNED\n")
    planted.chmod(0o755)
    answers.decision = Decision.DENY
    runs(fake_llm, Tool("runCommand", {"command": ["pytest", "-q"]}), Tool("runCommand", {"command": ["./pytest"]}))
    await collect(application.handler, "run the tests")
    application.session_state.close()
    assert len(answers.requests) == 3, [r.session_key for r in answers.requests]  # asked again, both times
    assert pwned(project.parent) == []


async def test_network_commands_never_offer_always(fake_llm: FakeLLM, project: Path) -> None:
    """Issue 23 item 6: "always" for a network command did not stick; now it is not offered."""
    tool_sandbox()
    application = make_application("anthropic", fake_llm, project)
    answers = RecordingApprover(Decision.ALLOW_SESSION)
    application.handler.approvals.set_approver(answers)
    for _ in range(2):
        runs(fake_llm, Tool("runCommand", {"command": ["true"], "network": True}))
        await collect(application.handler, "fetch")
    application.session_state.close()
    assert len(answers.requests) == 2 and not any(r.offers_session for r in answers.requests)
    # Issue 22 s6: the network is said in the title, not below the fold of the detail.
    assert all("WITH NETWORK ACCESS" in r.title for r in answers.requests), [r.title for r in answers.requests]


async def test_the_approval_screen_offers_only_what_is_honoured() -> None:
    from textual.app import App

    from core.types import ToolCall
    from tui.screens.approval import ApprovalScreen

    request = ApprovalRequest(tool_call=ToolCall(id="c1", name="runCommand", parameters={"command": ["curl", "x"]}),
                              title="Allow runCommand WITH NETWORK?", detail="$ curl x")
    answers: list[Decision] = []

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(ApprovalScreen(request), answers.append)

    async with Host().run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, ApprovalScreen)
        assert not screen.query("#allow_session") and screen.query("#allow_once")
        await pilot.press("a")
        await pilot.pause()
        assert answers == [] and pilot.app.screen is screen
        await pilot.press("y")
        await pilot.pause()
    assert answers == [Decision.ALLOW_ONCE]


# ---------------------------------------------------------------- searches skip environment directories


async def test_searches_leave_out_the_virtualenv_unless_asked(project: Path) -> None:
    """Issue 23 item 13: `grep -rl login .` in a project with a .venv returned mostly .venv paths."""
    write_files(project, {f".venv/lib/site-packages/pkg{n}/auth.py": "def login(): ...\n" for n in range(30)})
    write_files(project, {"node_modules/x/index.js": "login()\n", "src/__pycache__/app.py": "login\n"})
    for command in ("grep -rl login .", "find . -name '*.py'"):
        result = await run_file_path_command({"command": command}, project_root=project)
        paths = [Path(p).relative_to(project.resolve()).as_posix() for p in result["metadata"]["paths"]]
        assert paths == ["src/app.py"], (command, paths)
        assert "Left out" in result["content"] and ".venv" in result["content"], result["content"]
    named = await run_file_path_command({"command": "grep -rl login .venv"}, project_root=project)
    assert len(named["metadata"]["paths"]) == 30


def test_cli_read_only_with_yes_changes_nothing(
    fake_llm: FakeLLM, canary_project: Any, cli_env: dict[str, str]
) -> None:
    """`-p --approval-mode deny --yes`: --yes used to turn read-only into allow, and the model deleted a file."""
    from tests.security.test_canaries import run_cli

    root = canary_project.root
    victim = next(p for p in sorted(root.rglob("*.py")) if ".git" not in p.parts)
    before = victim.read_bytes()
    fake_llm.script(
        Reply(tools=[Tool("runCommand", {"command": ["rm", str(victim.relative_to(root))]}),
                     Tool("runCommand", {"command": ["touch", "PWNED"]})]),
        Reply(text="done"),
    )
    out = run_cli(["-p", "tidy up", "--approval-mode", "deny", "--yes", "--sandbox-auto"], root, cli_env)
    assert out.returncode == 0, out.stderr
    assert victim.read_bytes() == before and pwned(root.parent) == []
    assert "read-only" in str(fake_llm.requests[1].messages[-1])  # the model is told why
