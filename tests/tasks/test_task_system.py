"""TaskSystem execution and ``/task`` end to end: aider edits, the chat model is never asked."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from core.config import Settings
from core.compat import TaskSystem
from core.tasks import TaskParam, TaskTemplate, run_task_command
from core.tools.aider_bridge import AiderBridge
from core.types import TaskResult, is_error
from tests.aider.conftest import CALC, git, whole_file_edit
from tests.fake_llm import FakeLLM, Reply

TYPED = "def add(a: int, b: int) -> int:\n    return a + b\n"
ECHO = TaskTemplate(
    name="echo", type="util", subtype="echo", description="Echo text.", params=(TaskParam(name="text", required=True),)
)


def only_aider_asked(fake_llm: FakeLLM) -> bool:
    """Every request came from aider (its system prompt, no tool definitions): no chat-model turn."""
    return bool(fake_llm.requests) and all(
        "expert software developer" in r.system and not r.body.get("tools") for r in fake_llm.requests
    )


async def test_programmatic_executors_first_and_plain_results_wrapped() -> None:
    tasks = TaskSystem(templates=[ECHO])
    tasks.register_executor("util:echo", lambda inputs: inputs["text"].upper())
    assert await tasks.execute_task("util", "echo", {"text": "hi"}) == {"status": "COMPLETE", "content": "HI", "notes": {}}

    async def structured(inputs: dict[str, Any]) -> TaskResult:
        return {"status": "success", "content": "as is", "metadata": {"k": 1}}

    tasks.register_executor("util:echo", structured)
    assert await tasks.execute_task("util", "echo", {"text": "x"}) == {"status": "success", "content": "as is", "metadata": {"k": 1}}


async def test_executor_errors_become_task_failures() -> None:
    tasks = TaskSystem(templates=[ECHO])

    def broken(inputs: dict[str, Any]) -> str:
        raise RuntimeError("disk full")

    tasks.register_executor("util:echo", broken)
    result = await tasks.execute_task("util", "echo", {"text": "x"})
    assert result["status"] == "failed"
    assert result["content"] == "Task util:echo failed: disk full"
    assert result["metadata"]["error"] == "RuntimeError"


async def test_unknown_missing_and_executorless_tasks_fail_clearly() -> None:
    tasks = TaskSystem(templates=[ECHO])
    unknown = await tasks.execute_task("aider", "automatic", {"prompt": "x"})
    assert unknown["status"] == "failed" and unknown["content"] == "Unknown task aider:automatic. Known tasks: util:echo."
    missing = await tasks.execute_task("util", "echo", {})
    assert missing["status"] == "failed" and "needs text" in missing["content"]
    no_executor = await tasks.execute_task("util", "echo", {"text": "x"})
    assert no_executor["status"] == "failed" and "has no executor" in no_executor["content"]


async def test_subtask_continuations_are_followed_and_bounded() -> None:
    tasks = TaskSystem(templates=[ECHO])
    seen: list[str] = []

    def step(inputs: dict[str, Any]) -> TaskResult:
        seen.append(inputs["text"])
        if len(inputs["text"]) < 3:
            request = {"type": "util", "subtype": "echo", "inputs": {"text": inputs["text"] + "."}}
            return {"status": "CONTINUATION", "content": "", "notes": {"subtask_request": request}}
        return {"status": "COMPLETE", "content": f"done: {inputs['text']}", "notes": {}}

    tasks.register_executor("util:echo", step)
    result = await tasks.execute_subtask({"template": "echo", "inputs": {"text": "a"}})
    assert result["content"] == "done: a.." and seen == ["a", "a.", "a.."]
    assert (await tasks.follow_continuation({"status": "success", "content": "plain"}))["content"] == "plain"

    again = {"template": "util:echo", "inputs": {"text": "x"}}
    tasks.register_executor("util:echo", lambda inputs: {"status": "CONTINUATION", "content": "", "notes": {"subtask_request": again}})
    looping = await tasks.execute_subtask({"template": "util:echo", "inputs": {"text": "x"}})
    assert looping["status"] == "failed" and "Gave up after 5 chained subtasks" in looping["content"]
    invalid = await tasks.execute_subtask({"template": "nope"})
    assert invalid["status"] == "failed" and "Invalid subtask request" in invalid["content"]


async def test_task_list_names_tasks_and_parameters(tmp_path: Path) -> None:
    tasks = TaskSystem(AiderBridge(Settings(project_root=tmp_path)))
    assert sorted(tasks.PROGRAMMATIC_EXECUTORS) == ["aider:automatic", "aider:interactive"]
    result = await run_task_command("/task list", tasks, tmp_path)
    assert result["status"] == "success"
    for text in ("aider:automatic", "aider:interactive", "prompt (string, required)", "file_context (list, optional)"):
        assert text in result["content"]
    assert [t["name"] for t in result["metadata"]["templates"]] == ["aider_automatic", "aider_interactive"]


async def test_task_command_has_aider_edit_without_a_chat_model_turn(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(Reply(text=whole_file_edit("calc.py", TYPED)))
    tasks = TaskSystem(AiderBridge(aider_settings))
    result = await run_task_command("/task aider:automatic prompt='Add type hints' file_context=['calc.py']", tasks, git_repo)
    assert result["status"] == "success", result
    assert (git_repo / "calc.py").read_text() == TYPED
    assert result["metadata"]["edited_files"] == ["calc.py"]
    assert len(fake_llm.requests) == 1 and only_aider_asked(fake_llm)


async def test_bad_task_commands_change_nothing(aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM) -> None:
    tasks = TaskSystem(AiderBridge(aider_settings))
    (git_repo.parent / "outside.py").write_text("x = 1\n")
    for command, message in (
        ("/task aider:automatic prompt='x' file_context=['../outside.py']", "outside the project root"),
        ("/task aider:automatic prompt='x' file_context=['gone.py']", "gone.py does not exist"),
        ("/task aider:automatic file_context=['calc.py']", "needs prompt"),
        ("/task aider:refactor prompt='x'", "unknown task"),
    ):
        result = await run_task_command(command, tasks, git_repo)
        assert is_error(result) and message in result["content"], (command, result)
        assert result["metadata"]["error"] == "invalid_task_command"
    assert fake_llm.requests == []
    assert (git_repo / "calc.py").read_text() == CALC
    assert (git_repo.parent / "outside.py").read_text() == "x = 1\n"
    assert git(git_repo, "status", "--porcelain") == ""


async def test_interactive_task_runs_through_the_bridges_runner(aider_settings: Settings, git_repo: Path) -> None:
    sessions: list[Callable[[], TaskResult]] = []

    async def runner(session: Callable[[], TaskResult]) -> TaskResult:
        sessions.append(session)
        return {"status": "success", "content": "the aider session ended", "metadata": {}}

    tasks = TaskSystem(AiderBridge(aider_settings, interactive_runner=runner))
    result = await run_task_command("/task aider:interactive query='Refactor calc.py' file_context=['calc.py']", tasks, git_repo)
    assert result["content"] == "the aider session ended" and len(sessions) == 1


def test_headless_task_command_edits_through_the_cli(git_repo: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Reply(text=whole_file_edit("calc.py", TYPED)))
    env = {**os.environ, "ASSISTANT_TUI_PROVIDER": "openai", "ASSISTANT_TUI_MODEL": "fake-model"}
    command = [sys.executable, "-m", "core.cli", "-p", "/task aider:automatic prompt='Add type hints' file_context=['calc.py']"]
    done = subprocess.run(command, cwd=git_repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "+def add(a: int, b: int) -> int:" in done.stdout
    assert (git_repo / "calc.py").read_text() == TYPED
    assert len(fake_llm.requests) == 1 and only_aider_asked(fake_llm)
    outside = "/task aider:automatic prompt=x file_context=['/etc/passwd']"
    bad = subprocess.run([*command[:-1], outside], cwd=git_repo, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "outside the project root" in bad.stderr and "Traceback" not in bad.stderr
    assert len(fake_llm.requests) == 1


def test_aider_is_imported_on_first_use_only(tmp_path: Path) -> None:
    code = (
        "import sys, core.app, core.tasks, core.tools.aider_tools\n"
        "print('aider' in sys.modules, 'litellm' in sys.modules)\n"
        "from core.tools.aider_bridge import prepare_aider\n"
        "prepare_aider()\n"
        "print('aider.coders' in sys.modules, 'litellm' in sys.modules)\n"
    )
    # timeout: a hang guard (the import took over 60 s at load 13 under stress --cpu 2)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[2])
    assert done.stdout.split() == ["False", "False", "True", "True"], done.stderr
    assert done.stderr == ""  # no download attempt reported, nothing printed


async def test_concurrent_aider_tasks_run_one_at_a_time(aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM) -> None:
    running: list[str] = []
    overlaps: list[list[str]] = []
    served = threading.Lock()

    def reply(request: Any) -> Reply:  # the fake server answers each request in its own thread
        with served:
            running.append(request.last_user_text())
            overlaps.append(list(running))
        time.sleep(0.3)  # long enough for a concurrent second request to arrive and be seen
        with served:
            running.pop(0)
        name = "calc.py" if "Type calc" in request.last_user_text() else "auth/login.py"
        body = TYPED if name == "calc.py" else "def login(user: str, password: str) -> bool:\n    return user == 'admin'\n"
        return Reply(text=whole_file_edit(name, body))

    fake_llm.responder = reply
    tasks = TaskSystem(AiderBridge(aider_settings))
    first, second = await asyncio.gather(
        tasks.execute_task("aider", "automatic", {"prompt": "Type calc", "file_context": [str(git_repo / "calc.py")]}),
        tasks.execute_task("aider", "automatic", {"prompt": "Type login", "file_context": [str(git_repo / "auth" / "login.py")]}),
    )
    assert first["metadata"]["edited_files"] == ["calc.py"]
    assert second["metadata"]["edited_files"] == ["auth/login.py"]
    assert [len(seen) for seen in overlaps] == [1, 1]  # the second began after the first finished
