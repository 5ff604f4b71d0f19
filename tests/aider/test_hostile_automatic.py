"""Automatic (in-process) aider in a hostile repository, judged from outside.

Edits the model names outside the approval, protected files named by the model or
picked by the user, git hooks and fsmonitor on aider's commit, and the repository
map's cache: listener hits, canaries and the files on disk decide, never the
result's wording alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import Settings
from core.tools.aider_bridge import AiderBridge
from core.tools.aider_tools import register_aider_tools
from core.types import is_error
from tests.aider.conftest import whole_file_edit
from tests.aider.hostile import Listener, aider_leftovers, hardened_git, plant_foreign_git_dir
from tests.aider.test_tools import HandlerStandIn
from tests.fake_llm import FakeLLM, Reply

TYPED = "def add(a: int, b: int) -> int:\n    return a + b\n"


async def test_model_edits_to_git_config_and_a_new_mcp_json_are_refused_and_reported(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM
) -> None:
    config_before = (git_repo / ".git" / "config").read_bytes()
    reply = (
        whole_file_edit(".git/config", "[core]\n\thooksPath = /tmp\n")
        + whole_file_edit(".mcp.json", '{"mcpServers": {"x": {"command": "touch"}}}\n')
        + whole_file_edit("calc.py", TYPED)
    )
    fake_llm.script(Reply(text=reply))
    result = await AiderBridge(aider_settings).execute_automatic_task("Add type hints", ["calc.py"])
    assert (git_repo / ".git" / "config").read_bytes() == config_before
    assert not (git_repo / ".mcp.json").exists()
    assert (git_repo / "calc.py").read_text() == TYPED  # the approved edit still happened
    assert result["status"] == "success" and result["metadata"]["edited_files"] == ["calc.py"]
    assert ".git/config: git's own files" in result["content"]
    assert ".mcp.json: the project's MCP server list" in result["content"]
    assert len(fake_llm.requests) == 1  # a refusal is not reflected back to the model


@pytest.mark.parametrize("named", [".git/config", ".aider.conf.yml", ".gitmodules", ".env.local"])
async def test_protected_file_in_file_context_is_refused_before_aider_runs(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, named: str
) -> None:
    target = git_repo / named
    if not target.exists():
        target.write_text("# the project's\n")
    before = target.read_bytes()
    fake_llm.script(Reply(text=whole_file_edit(named, "[core]\n\tfsmonitor = /tmp/x\n")))
    result = await AiderBridge(aider_settings).execute_automatic_task("Tidy it", [named])
    assert target.read_bytes() == before
    assert is_error(result) and f"{named} may not be edited by aider" in result["content"]
    assert fake_llm.requests == []


async def test_a_picked_protected_file_is_given_to_aider_read_only(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM
) -> None:
    mcp = git_repo / ".mcp.json"
    mcp.write_text('{"mcpServers": {}}\n')
    handler = HandlerStandIn(git_repo, pinned_files=[str(mcp)])
    register_aider_tools(handler, AiderBridge(aider_settings))
    fake_llm.script(Reply(text=whole_file_edit(".mcp.json", '{"mcpServers": {"x": {"command": "touch"}}}\n')))
    result = await handler.tools["aiderAutomatic"][1]({"prompt": "Add a server", "file_context": ["calc.py"]})
    assert mcp.read_text() == '{"mcpServers": {}}\n'
    assert result["metadata"]["read_only_files"] == [str(mcp)]
    assert any('"mcpServers": {}' in str(m.get("content")) for m in fake_llm.requests[0].messages)  # aider saw it


async def test_aiders_commit_runs_no_hook_fsmonitor_or_pager(
    aider_settings: Settings, hostile_repo: Path, fake_llm: FakeLLM, canaries: Path, listener: Listener
) -> None:
    settings = Settings(**{**aider_settings.__dict__, "aider_auto_commit": True})
    fake_llm.script(Reply(text=whole_file_edit("calc.py", TYPED)), Reply(text="feat: add type hints"))
    result = await AiderBridge(settings).execute_automatic_task("Add type hints", ["calc.py"])
    assert result["status"] == "success", result
    assert "add type hints" in hardened_git(hostile_repo, "log", "-1", "--format=%s"), result["metadata"]["aider_output"]
    assert sorted(p.name for p in canaries.iterdir()) == []
    assert listener.hits == []


async def test_repository_map_cache_stays_out_of_the_project(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM
) -> None:
    before = {p.name for p in git_repo.iterdir()}
    fake_llm.script(Reply(text=whole_file_edit("calc.py", TYPED)))
    result = await AiderBridge(aider_settings, map_tokens=1024).execute_automatic_task("Add type hints", ["calc.py"])
    assert result["status"] == "success", result
    assert "auth/login.py" in json.dumps(fake_llm.requests[0].messages)  # the map was built and sent
    assert aider_leftovers(git_repo, before) == []


async def test_a_git_file_pointing_out_of_the_project_gets_no_git_from_aider(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, canaries: Path, tmp_path: Path
) -> None:
    plant_foreign_git_dir(git_repo, tmp_path / "elsewhere.git", canaries)
    settings = Settings(**{**aider_settings.__dict__, "aider_auto_commit": True})
    fake_llm.script(Reply(text=whole_file_edit("calc.py", TYPED)), Reply(text="feat: add type hints"))
    result = await AiderBridge(settings).execute_automatic_task("Add type hints", ["calc.py"])
    assert (git_repo / "calc.py").read_text() == TYPED, result  # the edit happens, without git
    assert sorted(p.name for p in canaries.iterdir()) == []  # no filter, no fsmonitor
