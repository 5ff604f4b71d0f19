"""The ProviderAdapter contract: extraction, tool-result formatting, wire conversion."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.config import Settings
from core.providers import create_provider
from core.providers.anthropic import ClaudeProvider
from core.providers.openai import OpenAICompatibleProvider
from core.types import ToolCall, error_result, ok_result
from tests.fake_llm import Reply, Tool

ADAPTERS = [ClaudeProvider("claude-x"), OpenAICompatibleProvider("gpt-x")]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=["anthropic", "openai"])
def test_plain_strings_and_unknown_shapes_have_no_tool_calls(adapter):
    text = 'I will call executeFilePathCommand with {"command": "ls"} now'
    assert adapter.extract_tool_calls(text) == {"content": text, "tool_calls": [], "awaiting_tool_response": False}
    assert adapter.extract_tool_calls({"weird": 1}) == {"content": "", "tool_calls": [], "awaiting_tool_response": False}
    assert adapter.extract_tool_calls(None)["tool_calls"] == []


def test_anthropic_tool_use_blocks_are_extracted():
    response = {
        "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_1", "name": "readFile", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "toolu_2", "name": "readFile", "input": {"path": "b.py"}},
        ],
        "stop_reason": "tool_use",
    }
    assert ClaudeProvider().extract_tool_calls(response) == {
        "content": "Looking.",
        "tool_calls": [
            {"id": "toolu_1", "name": "readFile", "parameters": {"path": "a.py"}},
            {"id": "toolu_2", "name": "readFile", "parameters": {"path": "b.py"}},
        ],
        "awaiting_tool_response": True,
    }


def test_openai_tool_calls_are_extracted():
    response = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "readFile", "arguments": '{"path": "a.py"}'}}],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    extracted = OpenAICompatibleProvider().extract_tool_calls(response)
    assert extracted == {
        "content": "",
        "tool_calls": [{"id": "call_1", "name": "readFile", "parameters": {"path": "a.py"}}],
        "awaiting_tool_response": True,
    }


def test_format_tool_result_shapes():
    call = ToolCall(id="t1", name="x", parameters={})
    assert ClaudeProvider().format_tool_result(call, ok_result("fine")) == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "fine"}],
    }
    assert ClaudeProvider().format_tool_result(call, error_result("bad"))["content"][0]["is_error"] is True
    assert OpenAICompatibleProvider().format_tool_result(call, ok_result("fine")) == {"role": "tool", "tool_call_id": "t1", "content": "fine"}


def test_tool_specs_are_converted_and_private_keys_dropped():
    spec = {"name": "edit", "description": "d", "input_schema": {"type": "object"}, "requires_approval": True, "describe": print}
    assert ClaudeProvider().convert_tools([spec]) == [{"name": "edit", "description": "d", "input_schema": {"type": "object"}}]
    assert OpenAICompatibleProvider().convert_tools([spec]) == [
        {"type": "function", "function": {"name": "edit", "description": "d", "parameters": {"type": "object"}}}
    ]


async def test_send_message_and_extract_through_the_real_sdks(fake_llm):
    fake_llm.script(Reply(text="hi", tools=[Tool("readFile", {"path": "x"})]), Reply(text="hello", tools=[Tool("readFile", {"path": "y"})]))
    claude = ClaudeProvider("c", base_url=fake_llm.anthropic_url, api_key="k")
    extracted = claude.extract_tool_calls(await claude.send_message([{"role": "user", "content": "q"}], "sys", []))
    assert extracted["content"] == "hi" and extracted["tool_calls"][0]["parameters"] == {"path": "x"} and extracted["awaiting_tool_response"]
    gpt = OpenAICompatibleProvider("g", base_url=fake_llm.openai_url, api_key="k")
    extracted = gpt.extract_tool_calls(await gpt.send_message([{"role": "user", "content": "q"}], "sys", []))
    assert extracted["tool_calls"][0]["parameters"] == {"path": "y"}
    assert fake_llm.requests[0].system == "sys" and fake_llm.requests[1].messages[0] == {"role": "system", "content": "sys"}


def test_provider_identifier_and_factory(tmp_path):
    settings = Settings(provider="openai", model="llama3", project_root=tmp_path)
    assert create_provider(settings).get_provider_identifier() == "openai:llama3"
    assert create_provider(Settings(project_root=tmp_path)).get_provider_identifier() == "anthropic:claude-sonnet-4-5"


def test_interrupted_and_grouped_history_converts_to_valid_anthropic_messages():
    history = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "partial", "interrupted": True},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "name": "x", "parameters": {}}, {"id": "2", "name": "y", "parameters": {}}]},
        {"role": "tool", "content": "r1", "tool_call_id": "1"},
        {"role": "tool", "content": "r2", "tool_call_id": "2", "is_error": True},
        {"role": "user", "content": "c"},
    ]
    wire = ClaudeProvider().convert_messages(history)
    assert [m["role"] for m in wire] == ["user", "assistant", "user", "assistant", "user"]
    assert wire[1]["content"][0]["text"].endswith("[interrupted by the user]")
    assert [b["type"] for b in wire[4]["content"]] == ["tool_result", "tool_result", "text"]


def test_importing_the_engine_does_not_import_the_sdks():
    code = (
        "import sys, core.app, core.cli, core.handlers.passthrough, core.providers;"
        "from core.config import Settings; from core.providers import create_provider; create_provider(Settings());"
        "heavy = [m for m in ('anthropic', 'openai', 'aider', 'litellm', 'textual', 'tui') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"imported at start-up: {out.stdout.strip()}"


async def test_the_sdk_client_is_built_off_the_event_loop(fake_llm):
    """The first request imports the SDK (over a second); that must happen in a worker thread."""
    import threading

    threads: list[str] = []
    for provider in (ClaudeProvider("c", base_url=fake_llm.anthropic_url, api_key="k"), OpenAICompatibleProvider("g", base_url=fake_llm.openai_url, api_key="k")):
        make = provider._make_client
        provider._make_client = lambda make=make: threads.append(threading.current_thread().name) or make()
        fake_llm.script(Reply(text="hi"))
        items = [item async for item in provider.stream_message([{"role": "user", "content": "q"}], "", [])]
        assert items[-1].content == "hi"
    assert len(threads) == 2 and threading.main_thread().name not in threads
