"""AiderBridge automatic edits: real aider, in-process, against the fake server's OpenAI side."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

import pytest

from core.config import Settings
from core.tools.aider_bridge import (
    AiderBridge,
    AiderEndpoint,
    aider_endpoint,
    aider_model_name,
    child_environment,
    prepare_aider,
    unified_diff,
)
from core.types import is_error
from tests.aider.conftest import CALC, git, search_replace_edit, whole_file_edit
from tests.fake_llm import FakeLLM, HTTPError, Reply

TYPED = "def add(a: int, b: int) -> int:\n    return a + b\n"


def aider_requests(fake_llm: FakeLLM) -> list:
    """Requests that carry aider's own system prompt (and no tools)."""
    return [r for r in fake_llm.requests if "expert software developer" in r.system and not r.body.get("tools")]


async def test_automatic_task_edits_the_file_and_returns_the_diff(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, capfd: pytest.CaptureFixture[str]
) -> None:
    fake_llm.script(Reply(text=whole_file_edit("calc.py", TYPED)))
    bridge = AiderBridge(aider_settings)
    started = time.perf_counter()

    result = await bridge.execute_automatic_task("Add type hints", ["calc.py"])

    elapsed = time.perf_counter() - started
    assert result["status"] == "success", result
    assert (git_repo / "calc.py").read_text() == TYPED
    meta = result["metadata"]
    assert meta["edited_files"] == ["calc.py"]
    assert "-def add(a, b):\n+def add(a: int, b: int) -> int:\n" in meta["diff"]
    assert meta["diff"] in result["content"]
    assert "Applied edit to calc.py" in meta["aider_output"]
    # aider saw the file and the prompt, through the configured endpoint and model
    (request,) = fake_llm.requests
    assert request.body["model"] == "fake-model"
    assert "Add type hints" in request.last_user_text()
    assert any("def add(a, b)" in str(m.get("content")) for m in request.messages)
    # nothing reached the real terminal: the TUI owns it
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    # not committed (auto-commit is off by default), and aider left nothing else behind (no history, no tag cache)
    assert git(git_repo, "status", "--porcelain", "--untracked-files=all", "--ignored") == " M calc.py\n"
    print(f"automatic round trip (first, with imports): {elapsed:.2f}s")


async def test_search_replace_edit_format_and_second_round_trip(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM
) -> None:
    bridge = AiderBridge(aider_settings, edit_format="diff")
    fake_llm.script(Reply(text=search_replace_edit("calc.py", "def add(a, b):\n", "def add(a: int, b: int) -> int:\n")))
    await bridge.execute_automatic_task("Add type hints", ["calc.py"])
    fake_llm.script(
        Reply(text=search_replace_edit("calc.py", "    return a + b\n", '    """Add two numbers."""\n    return a + b\n'))
    )
    started = time.perf_counter()
    result = await bridge.execute_automatic_task("Add a docstring", [str(git_repo / "calc.py")])
    elapsed = time.perf_counter() - started
    assert result["status"] == "success", result
    assert (git_repo / "calc.py").read_text() == 'def add(a: int, b: int) -> int:\n    """Add two numbers."""\n    return a + b\n'
    added = [line for line in result["metadata"]["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ['+    """Add two numbers."""']  # only the second edit, diffed against the first
    assert "SEARCH" in fake_llm.requests[0].system  # the diff edit format's instructions were sent
    print(f"automatic round trip (warm): {elapsed:.3f}s")


async def test_reply_without_edits_changes_nothing_and_says_so(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(Reply(text="Which function should get type hints?"))
    result = await AiderBridge(aider_settings).execute_automatic_task("Add type hints", ["calc.py"])
    assert result["status"] == "success"
    assert result["content"].startswith("aider made no changes")
    assert "Which function should get type hints?" in result["content"]
    assert result["metadata"]["edited_files"] == []
    assert (git_repo / "calc.py").read_text() == CALC


async def test_endpoint_error_is_reported_and_nothing_changes(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, capfd: pytest.CaptureFixture[str]
) -> None:
    fake_llm.script(HTTPError(401, "invalid api key"))
    result = await AiderBridge(aider_settings).execute_automatic_task("Add type hints", ["calc.py"])
    assert is_error(result)
    assert "aider made no changes" in result["content"]
    assert "invalid api key" in result["content"].lower() or "auth" in result["content"].lower()
    assert (git_repo / "calc.py").read_text() == CALC
    assert capfd.readouterr() == ("", "")  # litellm's error chatter stayed off the terminal


async def test_unreachable_endpoint_fails_after_the_configured_retries(git_repo: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = Settings(
        provider="openai", model="fake-model", openai_base_url=f"http://127.0.0.1:{port}/v1", project_root=git_repo, max_retries=1
    )
    bridge = AiderBridge(settings)
    await asyncio.to_thread(prepare_aider)  # aider's import is not part of the retry budget
    # aider alone backs off for about a minute: the configured single retry ends it well before
    result = await asyncio.wait_for(bridge.execute_automatic_task("Add type hints", ["calc.py"]), 30)
    assert is_error(result)
    assert "gave up after 1 retries" in result["content"] and "down or overloaded" in result["content"]
    assert (git_repo / "calc.py").read_text() == CALC


@pytest.mark.parametrize(
    ("path", "message"),
    [("../outside.py", "outside the project"), ("missing.py", "does not exist"), ("auth", "not a regular file")],
)
async def test_bad_paths_are_refused_before_aider_runs(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, path: str, message: str
) -> None:
    (git_repo.parent / "outside.py").write_text("x = 1\n")
    result = await AiderBridge(aider_settings).execute_automatic_task("Edit it", [path])
    assert is_error(result)
    assert message in result["content"] and path in result["content"]
    assert fake_llm.requests == []
    assert (git_repo.parent / "outside.py").read_text() == "x = 1\n"


async def test_symlink_out_of_the_project_is_refused(aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM) -> None:
    secret = git_repo.parent / "elsewhere.py"
    secret.write_text("y = 2\n")
    (git_repo / "link.py").symlink_to(secret)
    result = await AiderBridge(aider_settings).execute_automatic_task("Edit it", ["link.py"])
    assert is_error(result) and "symbolic link" in result["content"]
    assert fake_llm.requests == []


async def test_aider_writes_only_the_files_the_approval_named(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM
) -> None:
    reply = (
        whole_file_edit("calc.py", TYPED)
        + whole_file_edit("helpers.py", "def double(x):\n    return 2 * x\n")
        + whole_file_edit("README.md", "Rewritten.\n")
        + whole_file_edit("../escaped.py", "print('escaped')\n")
    )
    fake_llm.script(Reply(text=reply))
    result = await AiderBridge(aider_settings).execute_automatic_task("Add a helpers module", ["calc.py"])
    assert (git_repo / "calc.py").read_text() == TYPED  # the named file was edited
    assert not (git_repo / "helpers.py").exists()  # a file nobody approved was not created
    assert (git_repo / "README.md").read_text() == "A small project.\n"  # nor another file rewritten
    assert not (git_repo.parent / "escaped.py").exists()
    assert result["metadata"]["edited_files"] == ["calc.py"]
    refused = result["metadata"]["refused_files"]
    assert set(refused) >= {"helpers.py", "README.md"}
    assert "helpers.py: it is not among the files the approval named" in result["content"]


async def test_auto_commit_when_configured(aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM) -> None:
    settings = Settings(**{**aider_settings.__dict__, "aider_auto_commit": True})
    fake_llm.script(Reply(text=whole_file_edit("calc.py", TYPED)), Reply(text="feat: add type hints to add"))
    result = await AiderBridge(settings).execute_automatic_task("Add type hints", ["calc.py"])
    assert result["status"] == "success"
    assert git(git_repo, "status", "--porcelain", "calc.py") == ""
    assert "add type hints" in git(git_repo, "log", "-1", "--format=%s")


async def test_cancelling_the_task_keeps_late_edits_off_disk(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM
) -> None:
    cancelled = threading.Event()

    def late_reply(request: object) -> Reply:
        assert cancelled.wait(timeout=120), "the test never cancelled the task"  # a hang guard, far above need
        return Reply(text=whole_file_edit("calc.py", TYPED))  # the edit arrives after the user has cancelled

    fake_llm.responder = late_reply
    bridge = AiderBridge(aider_settings)
    task = asyncio.create_task(bridge.execute_automatic_task("Add type hints", ["calc.py"]))
    while not fake_llm.requests:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    cancelled.set()
    await asyncio.to_thread(bridge._lock.acquire)  # wait for aider's thread to finish
    bridge._lock.release()
    assert (git_repo / "calc.py").read_text() == CALC
    assert len(fake_llm.requests) == 1  # no retries or reflections after the cancel


def test_model_name_and_endpoint_follow_the_settings(tmp_path: Path) -> None:
    openai = Settings(provider="openai", model="gpt-4o", openai_base_url="http://h/v1", openai_api_key="sk-o", project_root=tmp_path)
    assert aider_model_name(openai) == "openai/gpt-4o"
    assert aider_endpoint(openai, "openai/gpt-4o") == AiderEndpoint("openai", "http://h/v1", "sk-o")
    claude = Settings(anthropic_api_key="sk-a", anthropic_base_url="http://a", project_root=tmp_path)
    assert aider_model_name(claude) == "anthropic/claude-sonnet-4-5"
    assert aider_endpoint(claude, "claude-3-5-haiku-20241022").api_key == "sk-a"
    assert aider_model_name(Settings(aider_model="ollama/qwen", project_root=tmp_path)) == "ollama/qwen"
    local = Settings(provider="openai", openai_base_url="http://localhost:8080/v1", project_root=tmp_path)
    assert aider_endpoint(local, "openai/x").api_key == "not-needed"  # OpenAI's client insists on a key


def test_child_environment_carries_only_aiders_own_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-other")
    monkeypatch.setenv("SOME_SETTING", "kept")
    env = child_environment(AiderEndpoint("openai", "http://127.0.0.1:9/v1", "sk-aider"), ["sk-ant-other"])
    assert env["OPENAI_API_KEY"] == "sk-aider"
    assert env["OPENAI_API_BASE"] == env["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"
    assert "GITHUB_TOKEN" not in env and "ANTHROPIC_API_KEY" not in env
    assert env["SOME_SETTING"] == "kept"
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


def test_unified_diff_marks_new_files_and_missing_newlines() -> None:
    assert unified_diff("a\n", "a\n", "x.py") == ""
    assert unified_diff(None, "b\n", "x.py").startswith("--- /dev/null\n+++ b/x.py\n")
    assert "\\ No newline at end of file" in unified_diff("a\n", "a", "x.py")


async def test_projects_without_git_are_edited_too(fake_llm: FakeLLM, tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "calc.py").write_text(CALC)
    settings = Settings(provider="openai", model="fake-model", openai_base_url=fake_llm.openai_url, project_root=root)
    fake_llm.script(Reply(text=whole_file_edit("pkg/calc.py", TYPED)))
    result = await AiderBridge(settings).execute_automatic_task("Add type hints", ["pkg/calc.py"])
    assert result["status"] == "success", result
    assert result["metadata"]["edited_files"] == ["pkg/calc.py"]
    assert (root / "pkg" / "calc.py").read_text() == TYPED
    assert sorted(p.name for p in root.iterdir()) == ["pkg"]  # nothing of aider's left behind
