"""editFile's "always" answers, per file or for the project, through a real turn (fake LLM server, real SDK).

The approver stands for the user: it records what it was asked and answers as scripted. What
landed is judged on disk; what was asked, by the approver's own record (issue 26, part 3).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from core import events as ev
from core.app import Application
from core.config import Settings
from core.types import ApprovalRequest, Decision
from tests.fake_llm import Reply, Tool

CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    (root / "other.py").write_text("Y = 1\n")
    (root / ".env").write_text("API_KEY=secret\n")
    return root


def edit(path: str, old: str, new: str) -> Tool:
    return Tool("editFile", {"path": path, "edits": [{"old_text": old, "new_text": new}]})


TWO_ON_CALC_THEN_OTHER = (
    Reply(tools=[edit("calc.py", "a + b", "b + a")]),
    Reply(tools=[edit("calc.py", "a - b", "-(b - a)")]),
    Reply(tools=[edit("other.py", "Y = 1", "Y = 2")]),
    Reply(text="Done."),
)


class User:
    """Answers each approval with the next scripted decision (then "once"), and remembers the requests."""

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else Decision.ALLOW_ONCE

    @property
    def paths(self) -> list[str]:
        return [str(request.tool_call.parameters.get("path")) for request in self.asked]


async def turn(fake_llm: Any, project: Path, user: User, *replies: Reply, mode: str = "ask",
               application: Application | None = None) -> tuple[Application, list[ev.ToolCallFinished]]:
    fake_llm.script(*replies)
    if application is None:
        settings = Settings(provider="anthropic", model="claude-test", anthropic_base_url=fake_llm.anthropic_url,
                            anthropic_api_key="sk-ant-test", approval_mode="ask", project_root=project, max_retries=0)
        application = Application(settings)
        application.session_state.start()
    session = application.session_state
    session.handler.approvals.set_approver(user)
    session.set_approval_mode(mode)
    async with contextlib.aclosing(session.stream_query("edit them")) as events:
        finished = [e async for e in events if isinstance(e, ev.ToolCallFinished)]
    return application, finished


async def test_always_for_this_file_covers_that_file_only(fake_llm, project: Path) -> None:
    user = User(Decision.ALLOW_SESSION)
    application, finished = await turn(fake_llm, project, user, *TWO_ON_CALC_THEN_OTHER)
    await application.aclose()
    assert [c.status for c in finished] == ["success"] * 3, [c.result for c in finished]
    assert user.paths == ["calc.py", "other.py"]  # the second edit of calc.py was not asked about
    assert user.asked[0].session_key == "editFile:calc.py" and user.asked[0].project_key == "editFile:*"
    assert (project / "calc.py").read_text() == CALC.replace("a + b", "b + a").replace("a - b", "-(b - a)")
    assert (project / "other.py").read_text() == "Y = 2\n"


async def test_always_for_the_project_covers_every_file_but_not_secrets_or_read_only(fake_llm, project: Path) -> None:
    user = User(Decision.ALLOW_PROJECT)
    application, finished = await turn(fake_llm, project, user, *TWO_ON_CALC_THEN_OTHER)
    assert [c.status for c in finished] == ["success"] * 3, [c.result for c in finished]
    assert user.paths == ["calc.py"]  # asked once, for the first edit
    assert (project / "other.py").read_text() == "Y = 2\n"

    # Granted for the project: a secret file and a protected one are still refused, unasked and unwritten.
    _, refused = await turn(fake_llm, project, user, Reply(tools=[edit(".env", "secret", "stolen")]),
                            Reply(tools=[edit(".git/hooks/post-checkout", "", "#!/bin/sh\ncurl evil\n")]),
                            Reply(text="Could not."), application=application)
    assert [c.status for c in refused] == ["error", "error"], [c.result for c in refused]
    assert (project / ".env").read_text() == "API_KEY=secret\n"
    assert not (project / ".git").exists()

    # Read-only mode refuses the edit whatever was granted (and asks nobody).
    _, read_only = await turn(fake_llm, project, user, Reply(tools=[edit("other.py", "Y = 2", "Y = 3")]),
                              Reply(text="Read-only."), mode="deny", application=application)
    await application.aclose()
    assert [c.status for c in read_only] == ["denied"], [c.result for c in read_only]
    assert (project / "other.py").read_text() == "Y = 2\n"
    assert user.paths == ["calc.py"]


async def test_a_new_conversation_forgets_the_project_answer(fake_llm, project: Path) -> None:
    user = User(Decision.ALLOW_PROJECT, Decision.DENY)
    application, _ = await turn(fake_llm, project, user, Reply(tools=[edit("calc.py", "a + b", "b + a")]), Reply(text="ok"))
    application.session_state.new()
    _, finished = await turn(fake_llm, project, user, Reply(tools=[edit("other.py", "Y = 1", "Y = 2")]), Reply(text="no"),
                             application=application)
    await application.aclose()
    assert user.paths == ["calc.py", "other.py"]
    assert [c.status for c in finished] == ["denied"] and (project / "other.py").read_text() == "Y = 1\n"
