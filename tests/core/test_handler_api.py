"""SPEC.md section 3: the handler's API beyond the loop."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from core import events as ev
from core.config import Settings
from core.compat import MemorySystem, PassthroughHandler
from core.providers.anthropic import ClaudeProvider
from tests.fake_llm import Reply, Tool


def project(tmp_path: Path) -> Path:
    (tmp_path / "auth.py").write_text("def login():\n    pass\n")
    (tmp_path / "billing.py").write_text("def charge():\n    pass\n")
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2" * 100)
    return tmp_path


def handler_for(root: Path, fake: Any = None, memory: Any = None, tasks: Any = None, **settings: Any) -> PassthroughHandler:
    provider = ClaudeProvider("claude-test", base_url=fake.anthropic_url if fake else "http://127.0.0.1:9", api_key="k", max_retries=0)
    return PassthroughHandler(tasks, memory, provider, Settings(project_root=root, **settings))


def test_system_prompt_is_hierarchical(tmp_path):
    root = project(tmp_path)
    handler = handler_for(root, base_system_prompt="BASE PROMPT")
    handler.prime_data_context(initial_files=["auth.py"])
    handler.data_context.summary = "SUMMARY"
    prompt = handler._build_system_prompt("MODE INSTRUCTIONS")
    assert prompt.index("BASE PROMPT") < prompt.index("MODE INSTRUCTIONS") < prompt.index('<file path="') < prompt.index("SUMMARY")
    assert f'<file path="{root / "auth.py"}">\ndef login():' in prompt


def test_prime_data_context_unions_explicit_files_first(tmp_path):
    root = project(tmp_path)
    memory = MemorySystem(root)
    memory.ensure_index(timeout=10)
    handler = handler_for(root, memory=memory)
    context = handler.prime_data_context(query="billing charge", initial_files=["auth.py"])
    sources = [item.source_path for item in context.items]
    assert sources[0] == str(root / "auth.py") and str(root / "billing.py") in sources
    assert all(item.content_type == "file_content" for item in context.items)
    assert context.source_query == "billing charge" and context.retrieved_at > 0
    handler.clear_data_context()
    assert handler.data_context is None


def test_relevant_files_and_file_context(tmp_path):
    root = project(tmp_path)
    memory = MemorySystem(root)
    memory.ensure_index(timeout=10)
    handler = handler_for(root, memory=memory)
    assert str(root / "billing.py") in handler._get_relevant_files("billing")
    text = handler._create_file_context([str(root / "auth.py"), str(root / "missing.py"), str(root / "blob.bin")])
    assert f"{root / 'auth.py'}:\n```\ndef login():" in text
    assert f"{root / 'missing.py'}: (could not be read: it does not exist)" in text
    assert f"{root / 'blob.bin'}: (could not be read: it is a binary file" in text


async def test_execute_file_path_command(tmp_path):
    root = project(tmp_path)
    handler = handler_for(root)
    assert sorted(await handler.execute_file_path_command("find . -name '*.py'")) == [str(root / "auth.py"), str(root / "billing.py")]
    assert await handler.execute_file_path_command("find . -name '*.py' -delete") == []
    assert await handler.execute_file_path_command("ls; rm -rf /") == []
    assert (root / "auth.py").exists()


async def test_direct_and_subtask_tools(tmp_path, fake_llm):
    root = project(tmp_path)

    class Tasks:
        async def execute_subtask(self, request: dict[str, Any]) -> dict[str, Any]:
            return {"status": "COMPLETE", "content": f"subtask ran: {request['prompt']}", "notes": {}}

    handler = handler_for(root, fake_llm, tasks=Tasks())
    calls: list[Any] = []
    assert handler.registerDirectTool("summarise", lambda query, files: calls.append((query, files)) or f"summary of {files}")
    assert handler.registerSubtaskTool(
        "delegate", lambda prompt, files: {"status": "CONTINUATION", "content": "", "notes": {"subtask_request": {"prompt": prompt}}}
    )
    assert "summarise" in handler.direct_tools and "delegate" in handler.subtask_tools
    schema = handler.registered_tools["summarise"]["input_schema"]
    assert schema["required"] == ["query"] and "file_context" in schema["properties"]
    fake_llm.script(
        Reply(tools=[Tool("summarise", {"query": "q", "file_context": ["auth.py"]}), Tool("delegate", {"prompt": "split it"})]),
        Reply(text="done"),
    )
    events = [e async for e in handler.stream_query("go")]
    results = [e.result for e in events if isinstance(e, ev.ToolCallFinished)]
    assert results == ["summary of ['auth.py']", "subtask ran: split it"]
    assert calls == [("q", ["auth.py"])]


async def test_user_input_tool(tmp_path, fake_llm):
    handler = handler_for(project(tmp_path), fake_llm)
    questions: list[str] = []

    async def ask(question: str) -> str:
        questions.append(question)
        return "use tabs"

    assert handler.register_user_input_tool(ask)
    fake_llm.script(Reply(tools=[Tool("askUser", {"question": "tabs or spaces?"})]), Reply(text="tabs it is"))
    result = await handler.handle_query("format it")
    assert questions == ["tabs or spaces?"] and result["content"] == "tabs it is"
    assert handler.conversation_history[2]["content"] == "use tabs"


def test_debug_mode_and_identifier(tmp_path, caplog):
    handler = handler_for(project(tmp_path))
    assert handler.debug_mode is False
    handler.set_debug_mode(True)
    with caplog.at_level(logging.INFO):
        handler.log_debug("looking at things")
    assert "looking at things" in caplog.text
    assert handler.get_provider_identifier() == "anthropic:claude-test"
    assert handler.active_subtask_id is None
