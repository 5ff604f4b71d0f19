"""The aider tools: file choice from explicit, picked and remembered context, and real edits through them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from core.config import Settings
from core.memory.system import MemorySystem
from core.tools.aider_bridge import AiderBridge, AiderError
from core.tools.aider_tools import (
    AIDER_AUTOMATIC_SPEC,
    AIDER_INTERACTIVE_SPEC,
    MAX_FILES,
    choose_files,
    register_aider_tools,
)
from core.types import TaskResult, is_error
from tests.aider.conftest import whole_file_edit
from tests.fake_llm import FakeLLM, Reply

DOCUMENTED = 'def login(user, password):\n    """Check the credentials."""\n    return user == \'admin\'\n'


@dataclass
class HandlerStandIn:
    """The handler surface the aider tools use (the real handler has the same attributes)."""

    project_root: Path
    memory_system: Any = None
    conversation_history: list[dict[str, Any]] = field(default_factory=list)
    pinned_files: list[str] = field(default_factory=list)
    tools: dict[str, tuple[dict[str, Any], Callable[..., Any]]] = field(default_factory=dict)

    def register_tool(self, spec: dict[str, Any], executor: Callable[..., Any]) -> bool:
        self.tools[spec["name"]] = (spec, executor)
        return True


def file_search_turn(found: str) -> list[dict[str, Any]]:
    """An earlier turn in which the model searched for files and the tool found ``found``."""
    return [
        {"role": "user", "content": "Find the Python files about authentication"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "executeFilePathCommand", "parameters": {"command": "git grep -l auth"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "executeFilePathCommand", "content": found},
        {"role": "assistant", "content": "I found one file."},
    ]


def test_specs_need_approval_and_name_their_parameters() -> None:
    for spec, first in ((AIDER_AUTOMATIC_SPEC, "prompt"), (AIDER_INTERACTIVE_SPEC, "query")):
        assert spec["requires_approval"] is True
        assert spec["input_schema"]["required"] == [first]
        assert spec["input_schema"]["properties"]["file_context"]["type"] == "array"


async def test_aider_tool_edits_the_file_named_earlier_in_the_conversation(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM
) -> None:
    handler = HandlerStandIn(
        git_repo,
        memory_system=MemorySystem(git_repo),
        conversation_history=file_search_turn(f"{git_repo}/auth/login.py"),
    )
    assert register_aider_tools(handler, AiderBridge(aider_settings)) is True
    fake_llm.script(Reply(text=whole_file_edit("auth/login.py", DOCUMENTED)))

    _, automatic = handler.tools["aiderAutomatic"]
    result: TaskResult = await automatic({"prompt": "Add a docstring to the first file found"})

    assert result["status"] == "success", result
    assert result["metadata"]["file_context"][0] == str(git_repo / "auth" / "login.py")
    assert (git_repo / "auth" / "login.py").read_text() == DOCUMENTED
    # aider was given the file: its content was in aider's request
    assert any("return user == 'admin'" in str(m.get("content")) for m in fake_llm.requests[0].messages)


async def test_without_a_memory_system_files_named_in_the_conversation_are_still_found(git_repo: Path) -> None:
    handler = HandlerStandIn(git_repo, conversation_history=file_search_turn("auth/login.py"))
    files = await choose_files(handler, "Add a docstring to the first file found")
    assert files == [str(git_repo / "auth" / "login.py")]


async def test_explicit_then_picked_first_deduplicated_and_capped(git_repo: Path) -> None:
    for n in range(12):
        (git_repo / f"mod{n}.py").write_text(f"def f{n}():\n    pass\n")
    handler = HandlerStandIn(
        git_repo,
        memory_system=MemorySystem(git_repo),
        pinned_files=[str(git_repo / "README.md"), str(git_repo / "calc.py")],
    )
    mentions = " ".join(f"mod{n}.py" for n in range(12))
    files = await choose_files(handler, f"Rename things in {mentions}", ["calc.py", "./calc.py"])
    assert files[:2] == [str(git_repo / "calc.py"), str(git_repo / "README.md")]
    assert len(files) == MAX_FILES == len(set(files))
    assert all(Path(f).is_relative_to(git_repo) for f in files)


async def test_instruction_weighs_more_than_the_conversation(git_repo: Path) -> None:
    handler = HandlerStandIn(git_repo, memory_system=MemorySystem(git_repo), conversation_history=file_search_turn("auth/login.py"))
    files = await choose_files(handler, "Add type hints to calc.py")
    assert files[0] == str(git_repo / "calc.py")
    assert str(git_repo / "auth" / "login.py") in files


@pytest.mark.parametrize(
    ("file_context", "expected"),
    [(["../../etc/passwd"], "outside the project"), (["nope.py"], "nope.py does not exist"), ("calc.py", None)],
)
async def test_bad_explicit_paths_are_named_and_nothing_runs(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, file_context: Any, expected: str | None
) -> None:
    handler = HandlerStandIn(git_repo)
    register_aider_tools(handler, AiderBridge(aider_settings))
    fake_llm.script(Reply(text="No changes needed."))
    result = await handler.tools["aiderAutomatic"][1]({"prompt": "Edit", "file_context": file_context})
    if expected is None:  # a bare string is taken as one path
        assert result["metadata"]["file_context"] == [str(git_repo / "calc.py")]
        return
    assert is_error(result) and expected in result["content"]
    assert fake_llm.requests == []


async def test_secret_files_need_the_users_pick(aider_settings: Settings, git_repo: Path) -> None:
    (git_repo / ".env").write_text("TOKEN=abc\n")
    handler = HandlerStandIn(git_repo)
    with pytest.raises(AiderError, match="environment file"):
        await choose_files(handler, "Edit it", [".env"])
    handler.pinned_files = [str(git_repo / ".env")]
    assert await choose_files(handler, "Edit it", [".env"]) == [str(git_repo / ".env")]  # given to aider to read only
    # never inferred from a mention
    assert await choose_files(HandlerStandIn(git_repo), "look at .env") == []


async def test_interactive_tool_goes_through_the_bridges_runner(aider_settings: Settings, git_repo: Path) -> None:
    handler = HandlerStandIn(git_repo)
    calls: list[Callable[[], TaskResult]] = []

    async def suspend_and_run(session: Callable[[], TaskResult]) -> TaskResult:
        calls.append(session)  # the TUI would run session() inside app.suspend()
        return {"status": "success", "content": "session over", "metadata": {}}

    register_aider_tools(handler, AiderBridge(aider_settings, interactive_runner=suspend_and_run))
    result = await handler.tools["aiderInteractive"][1]({"query": "Refactor calc.py"})
    assert len(calls) == 1 and callable(calls[0])
    assert result["content"] == "session over"
    assert result["metadata"]["file_context"] == [str(git_repo / "calc.py")]
    missing = await handler.tools["aiderInteractive"][1]({"query": "  "})
    assert is_error(missing) and "query" in missing["content"] and len(calls) == 1


async def test_read_only_files_reach_aider_as_read_only(fake_llm, aider_settings, git_repo):
    """Files the user marked read-only are shown to aider but not edited, even if its model tries."""
    from core.handlers.passthrough import PassthroughHandler
    from core.providers.openai import OpenAICompatibleProvider
    from core.tools.aider_bridge import AiderBridge
    from core.tools.aider_tools import register_aider_tools
    from tests.aider.conftest import whole_file_edit
    from tests.fake_llm import Reply

    handler = PassthroughHandler(None, None, OpenAICompatibleProvider("fake-model", base_url=fake_llm.openai_url, api_key="k"), aider_settings)
    register_aider_tools(handler, AiderBridge(aider_settings))
    login = git_repo / "auth" / "login.py"
    handler.file_context.replace([str(login)], [str(login)])
    original = login.read_text()
    fake_llm.script(Reply(text=whole_file_edit("auth/login.py", "def login(user, password):\n    return True\n") + "\n" + whole_file_edit("calc.py", "def add(a, b):\n    return b + a\n")))
    result = await handler._execute_tool("aiderAutomatic", {"prompt": "Use login in calc", "file_context": ["calc.py"]})
    assert result["metadata"]["read_only_files"] == [str(login)]
    assert login.read_text() == original
    assert (git_repo / "calc.py").read_text() == "def add(a, b):\n    return b + a\n"
    sent = "\n".join(str(m.get("content")) for m in fake_llm.requests[-1].messages)
    assert "return user == 'admin'" in sent, "aider did not show the read-only file to its model"


def test_aider_imports_under_a_stdout_without_encoding():
    """Inside the TUI, sys.stdout is Textual's capture object (no ``encoding``); aider must still import."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "class Capture:\n"
        "    def write(self, text): pass\n"
        "    def flush(self): pass\n"
        "sys.stdout = sys.stderr = Capture()\n"
        "from core.tools.aider_bridge import prepare_aider\n"
        "prepare_aider()\n"
        "import aider.coders\n"
        "sys.__stdout__.write('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout == "ok", out.stderr[-2000:]


async def test_approval_shows_the_files_aider_will_get(fake_llm, aider_settings, git_repo):
    """The approval request names the instruction and the final file list (explicit, pinned, read-only)."""
    from core.compat import PassthroughHandler  # the engine's, with the SPEC's handle_query
    from core.providers.openai import OpenAICompatibleProvider
    from core.tools.aider_bridge import AiderBridge
    from core.tools.aider_tools import register_aider_tools
    from core.types import Decision
    from tests.fake_llm import Reply, Tool

    handler = PassthroughHandler(None, None, OpenAICompatibleProvider("fake-model", base_url=fake_llm.openai_url, api_key="k"), aider_settings)
    register_aider_tools(handler, AiderBridge(aider_settings))
    handler.file_context.replace([str(git_repo / "README.md")], [str(git_repo / "README.md")])
    asked = []

    async def deny(request):
        asked.append(request)
        return Decision.DENY

    handler.approvals.set_approver(deny)
    fake_llm.script(Reply(tools=[Tool("aiderAutomatic", {"prompt": "Add hints", "file_context": ["calc.py"]})]), Reply(text="ok"))
    await handler.handle_query("edit")
    detail = asked[0].detail
    assert "Add hints" in detail
    assert detail.index("calc.py") < detail.index("may only read") < detail.index("README.md")
    assert (git_repo / "calc.py").read_text().startswith("def add(a, b)")
