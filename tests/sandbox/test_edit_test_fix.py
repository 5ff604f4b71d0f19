"""Issue 13, done-when (a): run the tests, see the failure, have aider fix it, run them again, see them pass.

One user turn; the chat model is scripted (Anthropic side of the fake server), aider is
real (OpenAI side), pytest really runs in the sandbox, and its output streams live.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from core import events as ev
from core.app import Application
from tests.aider.conftest import git, whole_file_edit
from tests.fake_llm import Reply, Request, Tool
from tests.test_acceptance import settings_for

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def failing_project(tmp_path: Path) -> Path:
    root = tmp_path / "calcproj"
    root.mkdir()
    (root / "calc.py").write_text(BUGGY)
    (root / "test_calc.py").write_text(TEST)
    git(root, "init", "-q")
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.com")
    git(root, "add", ".")
    git(root, "commit", "-qm", "initial")
    return root.resolve()


def scripted(request: Request) -> Reply:
    if request.api == "openai":  # aider, asked to fix calc.py
        return Reply(text=whole_file_edit("calc.py", FIXED))
    results = [b for m in request.messages if isinstance(m.get("content"), list) for b in m["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        return Reply(text="Running the tests first.", tools=[Tool("runTests", {})])
    last = str(results[-1]["content"])
    if len(results) == 1:
        assert "Tests failed" in last and "assert -1 == 5" in last, last
        return Reply(text="add subtracts; fixing it.", tools=[Tool("aiderAutomatic", {"prompt": "Make add return a + b", "file_context": ["calc.py"]})])
    if len(results) == 2:
        return Reply(text="Checking the fix.", tools=[Tool("runTests", {})])
    return Reply(text="The tests pass now." if "Tests passed" in last else "Still failing.")


async def test_one_turn_runs_the_tests_fixes_the_code_and_sees_them_pass(fake_llm: Any, tmp_path: Path, sandbox: Any) -> None:
    root = failing_project(tmp_path)
    fake_llm.responder = scripted
    toolchain = os.pathsep.join(sorted({sys.prefix, sys.base_prefix}))
    settings = settings_for(fake_llm, root, command_approval="sandbox-auto", sandbox_paths=toolchain,
                            test_command=f"{sys.executable} -m pytest -q -p no:cacheprovider")
    application = Application(settings)
    events = [e async for e in application.handler.stream_query("Run the tests and fix what fails")]

    assert isinstance(events[-1], ev.TurnCompleted), events[-1]
    assert events[-1].result["content"] == "The tests pass now."
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert [(e.call.name, e.status) for e in finished] == [("runTests", "error"), ("aiderAutomatic", "success"), ("runTests", "success")]
    assert (root / "calc.py").read_text() == FIXED
    # both runs streamed their output live, under their own call ids, before they finished
    for run in (finished[0], finished[2]):
        chunks = [e for e in events if isinstance(e, ev.ToolOutputChunk) and e.call_id == run.call.id]
        assert chunks, f"no live output for {run.call.id}"
        assert events.index(chunks[-1]) < events.index(run)
        assert run.metadata["sandboxed"] is True
    first = "".join(e.text for e in events if isinstance(e, ev.ToolOutputChunk) and e.call_id == finished[0].call.id)
    second = "".join(e.text for e in events if isinstance(e, ev.ToolOutputChunk) and e.call_id == finished[2].call.id)
    assert "1 failed" in first and "1 passed" in second
    assert [e.decision.value for e in events if isinstance(e, ev.ApprovalRecorded) and e.call.name == "runTests"] == ["allow_once", "allow_once"]


DOCUMENTED_BUG = '"""Arithmetic."""\n\n\ndef add(a, b):\n    return a - b\n'


def auto_test_scripted(request: Request) -> Reply:
    if request.api == "openai":  # aider: first the asked-for edit (the bug stays), then the fix
        asked_to_fix = "The tests fail after the last change" in str(request.messages)
        return Reply(text=whole_file_edit("calc.py", FIXED if asked_to_fix else DOCUMENTED_BUG))
    answered = [b for m in request.messages if isinstance(m.get("content"), list) for b in m["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not answered:
        return Reply(tools=[Tool("aiderAutomatic", {"prompt": "Add a module docstring", "file_context": ["calc.py"]})])
    return Reply(text="Done.")


async def test_auto_test_hands_a_failure_back_to_aider_until_the_tests_pass(fake_llm: Any, tmp_path: Path, sandbox: Any) -> None:
    """auto_test on: the edit leaves a failing test, aider gets the failure and fixes it; the model sees both runs."""
    root = failing_project(tmp_path)
    fake_llm.responder = auto_test_scripted
    toolchain = os.pathsep.join(sorted({sys.prefix, sys.base_prefix}))
    settings = settings_for(fake_llm, root, sandbox_paths=toolchain, auto_test=True,
                            auto_test_attempts=2, test_command=f"{sys.executable} -m pytest -q -p no:cacheprovider")
    application = Application(settings)
    events = [e async for e in application.handler.stream_query("Document calc.py")]

    assert isinstance(events[-1], ev.TurnCompleted), events[-1]
    (edit,) = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert edit.call.name == "aiderAutomatic" and edit.status == "success", edit.result
    assert edit.metadata["tests"] == "passed"
    assert [run["passed"] for run in edit.metadata["test_runs"]] == [False, True]
    assert "auto_test: tests passed after the edit and 1 fix attempt(s)" in edit.result
    assert (root / "calc.py").read_text() == FIXED
    aider_requests = [r for r in fake_llm.requests if r.api == "openai"]
    assert len(aider_requests) == 2 and "assert -1 == 5" in str(aider_requests[1].messages)
    live = "".join(e.text for e in events if isinstance(e, ev.ToolOutputChunk) and e.call_id == edit.call.id)
    assert "1 failed" in live and "1 passed" in live  # both test runs streamed under the edit's call


async def test_run_output_reaches_the_transcript_and_a_resumed_session(tmp_path: Path, sandbox: Any) -> None:
    """``/run``'s output joins the conversation and the saved session: ``--continue`` still has it."""
    root = failing_project(tmp_path)
    application = Application(settings_for_no_model(root))
    application.session_state.start()
    result = await application.run_user_command(["echo", "marker-4711"])
    assert "marker-4711" in result["content"]
    application.session_state.close()

    resumed = Application(settings_for_no_model(root))
    resumed.session_state.start(continue_latest=True)
    assert any("marker-4711" in str(m.get("content")) and m.get("role") == "user"
               for m in resumed.handler.conversation_history)
    resumed.session_state.close()


def settings_for_no_model(root: Path) -> Any:
    from core.config import Settings

    return Settings(provider="anthropic", model="claude-test", anthropic_api_key="sk-ant-test", project_root=root)
