"""core.session.Session: one owner for the conversation, the file context, approvals, /task results and the transcript.

Through the real Application, its handler and the real Anthropic SDK against the fake server.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from core import events as ev
from core.app import Application
from core.config import Settings
from core.sessions import load_session
from core.types import ApprovalRequest, Decision
from tests.fake_llm import FakeLLM, Reply, Tool


def make_application(fake_llm: FakeLLM, root: Path, **values: Any) -> Application:
    settings = Settings(
        **values,
        provider="anthropic",
        model="claude-test",
        anthropic_base_url=fake_llm.anthropic_url,
        anthropic_api_key="sk-ant-test",
        project_root=root,
        mcp_enabled=False,
        max_retries=0,
    )
    return Application(settings)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("def a():\n    return 1\n")
    (root / "src" / "b.py").write_text("def b():\n    return 2\n")
    (root / "README.md").write_text("A project.\n")
    return root


async def turn(state: Any, query: str) -> list[ev.Event]:
    async with contextlib.aclosing(state.stream_query(query)) as events:
        return [event async for event in events]


async def test_file_context_is_sent_recorded_and_restored_whole(fake_llm: FakeLLM, project: Path) -> None:
    application = make_application(fake_llm, project)
    state = application.session_state
    state.start()
    outcome = await state.plan_add("src/*.py")
    await state.commit_add(outcome)
    a, b = (str(project / "src" / name) for name in ("a.py", "b.py"))
    assert [str(p) for p in outcome.added] == [a, b]
    application.handler.file_context.replace(application.handler.file_context.picked, [b])  # recorded with the next change
    assert application.handler.pinned_files == [a, b] and application.handler.read_only_files == [b]
    rows = state.entries()
    assert [(r.display, r.source, r.read_only) for r in rows] == [("src/a.py", "picked", False), ("src/b.py", "picked", True)]
    assert all(r.tokens > 0 for r in rows)

    await turn(state, "what do these do?")
    [request] = fake_llm.requests
    assert "def a():" in request.last_user_context() and "def b():" in request.last_user_context()
    assert await state.drop_files("src/a.py") == [a]
    session_id = state.id
    state.close()

    records = load_session(application.session).records
    contexts = [r["files"] for r in records if r["kind"] == "context"]
    assert contexts == [
        [{"path": a, "read_only": False}, {"path": b, "read_only": False}],
        [{"path": b, "read_only": True}],
    ]

    resumed = make_application(fake_llm, project).session_state
    resumed.start(resume=session_id)
    assert resumed.context.picked == [b] and resumed.context.read_only == [b]  # both halves, one place
    assert [m["role"] for m in resumed.history] == ["user", "assistant"]
    resumed.close()


async def test_always_allow_is_forgotten_by_new_and_switch_and_the_call_id_is_passed(fake_llm: FakeLLM, project: Path) -> None:
    application = make_application(fake_llm, project)
    state = application.session_state
    state.start()
    first_id = state.id
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision.ALLOW_SESSION

    application.handler.approvals.set_approver(approve)
    command = Tool("executeFilePathCommand", {"command": "ls | cat README.md"}, id="toolu_cut1")  # asked
    fake_llm.script(Reply(tools=[command]), Reply(text="done"), Reply(tools=[Tool(command.name, command.input, id="toolu_cut2")]), Reply(text="done"))
    await turn(state, "read it")
    await turn(state, "again")
    assert [r.tool_call.id for r in asked] == ["toolu_cut1"]  # the call's own id, not shared state
    assert state.approvals == {"cat:files"}

    state.new()
    assert state.approvals == frozenset() and state.id != first_id and state.history == []
    fake_llm.script(Reply(tools=[Tool(command.name, command.input, id="toolu_cut3")]), Reply(text="done"))
    await turn(state, "after /new")
    assert [r.tool_call.id for r in asked] == ["toolu_cut1", "toolu_cut3"]  # asked again

    state.switch(first_id)
    assert state.approvals == frozenset() and state.id == first_id
    assert [m["content"] for m in state.history if m["role"] == "user"][:2] == ["read it", "again"]
    state.close()


async def test_task_results_are_in_the_transcript_export_and_resume(fake_llm: FakeLLM, project: Path) -> None:
    state = make_application(fake_llm, project).session_state
    state.start()
    result = await state.run_task("/task list")
    assert "aider:automatic" in result["content"]
    assert "/task list" in state.transcript_markdown() and "aider:automatic" in state.transcript_markdown()
    session_id = state.id
    state.close()

    resumed = make_application(fake_llm, project).session_state
    resumed.start(resume=session_id)
    [note] = resumed.history
    assert note["role"] == "user" and "aider:automatic" in note["content"]
    resumed.close()


async def test_a_consumer_that_raises_mid_stream_leaves_the_session_free(fake_llm: FakeLLM, project: Path) -> None:
    state = make_application(fake_llm, project).session_state
    state.start()
    fake_llm.script(Reply(text="a long answer " * 20, chunk=8), Reply(text="second"))

    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        async with contextlib.aclosing(state.stream_query("first")) as events:
            async for event in events:
                if isinstance(event, ev.TextDelta):
                    raise Boom

    events = await turn(state, "second")
    assert isinstance(events[-1], ev.TurnCompleted), events[-1]
    assert events[-1].result["content"] == "second"
    assert state.metrics()["user_turns"] == 2
    state.close()


async def test_the_session_weighs_files_against_the_window_before_they_are_added(fake_llm: FakeLLM, project: Path) -> None:
    """Issue 24: the over-budget question of /add is answered in core, from the session's figures,
    not by the context pane; nothing is picked by planning."""
    (project / "big.txt").write_text("word " * 4000)
    probe = make_application(fake_llm, project).session_state
    base = probe.metrics()["estimated_tokens"]  # the system prompt and tools, before any file
    state = make_application(fake_llm, project, context_window=base + 1000).session_state
    state.start()
    big, small = await state.plan_add("big.txt"), await state.plan_add("README.md")
    assert big.over_budget and big.budget == base + 1000 and big.context_after == base + big.tokens
    assert not small.over_budget and small.context_after == base + small.tokens
    assert state.context.picked == []
    state.close()
