"""SPEC.md section 6 acceptance cases, through the whole Application with real aider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import events as ev
from core.compat import Application  # the SPEC's: its handler has handle_query
from core.config import Settings
from tests.aider.conftest import git_repo, whole_file_edit  # noqa: F401 - the git_repo fixture
from tests.fake_llm import Reply, Request, Tool

QUERY = "Find all *.py files about 'auth' and then add a docstring to the first one found using Aider"
DOCUMENTED = '"""Log users in."""\n\n\ndef login(user, password):\n    return user == \'admin\'\n'


def settings_for(fake_llm: Any, root: Path, **extra: Any) -> Settings:
    return Settings(
        provider="anthropic",
        model="claude-test",
        anthropic_base_url=fake_llm.anthropic_url,
        anthropic_api_key="sk-ant-test",
        openai_base_url=fake_llm.openai_url,
        openai_api_key="sk-test",
        aider_model="openai/fake-model",
        approval_mode="allow",
        project_root=root,
        **extra,
    )


def scripted_model(found: list[str]) -> Any:
    """The chat model (Anthropic side) and aider's model (OpenAI side) of the acceptance case."""

    def respond(request: Request) -> Reply:
        if request.api == "openai":  # aider asking for the edit
            return Reply(text=whole_file_edit("auth/login.py", DOCUMENTED))
        last = request.messages[-1]["content"]
        results = [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]
        if not results:
            return Reply(text="I'll look for them.", tools=[Tool("executeFilePathCommand", {"command": "find . -name '*.py' -path '*auth*'"})])
        if len(request.messages) == 3:
            first = results[0]["content"].splitlines()[1].strip()
            found.append(first)
            return Reply(text=f"Found {first}; editing it.", tools=[Tool("aiderAutomatic", {"prompt": "Add a module docstring", "file_context": [first]})])
        return Reply(text="Added a docstring to auth/login.py.")

    return respond


async def test_find_then_edit_with_aider_in_one_turn(fake_llm, git_repo):
    found: list[str] = []
    fake_llm.responder = scripted_model(found)
    application = Application(settings_for(fake_llm, git_repo))
    events = [e async for e in application.handler.stream_query(QUERY)]

    assert isinstance(events[-1], ev.TurnCompleted), events[-1]
    calls = [e.call.name for e in events if isinstance(e, ev.ToolCallFinished)]
    assert calls == ["executeFilePathCommand", "aiderAutomatic"]
    assert all(e.status == "success" for e in events if isinstance(e, ev.ToolCallFinished))
    assert found == ["auth/login.py"]
    assert (git_repo / "auth" / "login.py").read_text() == DOCUMENTED
    # the history shows both requests and both results
    roles = [m["role"] for m in application.handler.conversation_history]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    tools = [m for m in application.handler.conversation_history if m["role"] == "tool"]
    assert "auth/login.py" in tools[0]["content"] and "login.py" in tools[1]["content"]
    # aider talked to its own endpoint; the chat model made exactly three calls
    assert len(fake_llm.requests_for("anthropic")) == 3
    assert fake_llm.requests_for("openai"), "aider made no request"


async def test_the_guard_stops_a_runaway_version_of_the_same_turn(fake_llm, git_repo):
    fake_llm.responder = lambda request: Reply(tools=[Tool("executeFilePathCommand", {"command": "find . -name '*.py'"})])
    application = Application(settings_for(fake_llm, git_repo, max_tool_calls=4))
    result = await application.handler.handle_query(QUERY)
    assert result["status"] == "failed" and result["metadata"]["reason"] == "resource_exhaustion"
    assert result["metadata"]["resource_metrics"]["tool_calls_this_turn"] == 4
    assert (git_repo / "auth" / "login.py").read_text().startswith("def login")


async def test_task_command_edits_without_the_chat_model(fake_llm, git_repo):
    fake_llm.responder = lambda request: Reply(text=whole_file_edit("calc.py", "def add(a: int, b: int) -> int:\n    return a + b\n"))
    application = Application(settings_for(fake_llm, git_repo))
    result = await application.run_task_command("/task aider:automatic prompt='Add type hints to calc.py' file_context=['calc.py']")
    assert result["status"] in ("COMPLETE", "success"), result
    assert (git_repo / "calc.py").read_text() == "def add(a: int, b: int) -> int:\n    return a + b\n"
    assert fake_llm.requests_for("anthropic") == []  # the chat model decided nothing
    assert "aider:automatic" in application.describe_tasks()
