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


# -- issue 24 s4: one stream vocabulary, one classify_error --------------------------------------


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_providers_stream_the_vocabulary_the_loop_streams(fake_llm, kind):
    """A provider's text and thinking deltas are core.events' own classes, passed on as they are."""
    from core import events as ev
    import core.providers.base as base

    provider = ClaudeProvider("c", base_url=fake_llm.anthropic_url, api_key="k") if kind == "anthropic" else OpenAICompatibleProvider("g", base_url=fake_llm.openai_url, api_key="k")
    fake_llm.script(Reply(text="hello there", thinking="hmm" if kind == "anthropic" else "", reasoning="hmm" if kind == "openai" else ""))
    items = [item async for item in provider.stream_message([{"role": "user", "content": "q"}], "", [])]
    assert [type(i) for i in items if not isinstance(i, (ev.ResponseStarted, ev.ResponseComplete))] == [ev.ThinkingDelta] + [ev.TextDelta] * 1
    assert isinstance(items[-1], ev.ResponseComplete) and items[-1].content == "hello there"
    assert not hasattr(base, "TextChunk") and not hasattr(base, "ThinkingChunk"), "one vocabulary: no parallel delta classes"


@pytest.mark.parametrize(
    ("kind", "status", "error_type", "message", "expected"),
    [
        ("anthropic", 529, "overloaded_error", "Overloaded", ("overloaded", True, "Anthropic is overloaded: Overloaded")),
        ("openai", 529, "", "Overloaded", ("overloaded", True, "127.0.0.1 is overloaded: Overloaded")),
        ("anthropic", 401, "authentication_error", "invalid x-api-key", ("auth", False, "Anthropic rejected the API key")),
        ("openai", 401, "", "Incorrect API key", ("auth", False, "127.0.0.1 rejected the API key")),
        ("openai", 429, "", "slow down", ("rate_limit", True, "Rate limited by 127.0.0.1: slow down")),
        ("openai", 400, "tool_use_failed", "Failed to call a function.", ("tool_generation", True, "127.0.0.1 could not parse the model's tool call: Failed to call a function.")),
        ("anthropic", 400, "invalid_request_error", "messages: bad", ("bad_request", False, "Anthropic rejected the request: messages: bad")),
    ],
)
async def test_one_classify_error_for_both_sdks(fake_llm, kind, status, error_type, message, expected):
    """The same HTTP failure, raised by either SDK, is one kind with one wording (the provider named by its host)."""
    from core.providers.base import ProviderError
    import core.providers.anthropic as anthropic_adapter
    import core.providers.openai as openai_adapter
    from tests.fake_llm import HTTPError

    assert not hasattr(anthropic_adapter, "classify_error") or anthropic_adapter.classify_error is openai_adapter.classify_error
    provider = ClaudeProvider("c", base_url=fake_llm.anthropic_url, api_key="k", max_retries=0) if kind == "anthropic" else OpenAICompatibleProvider("g", base_url=fake_llm.openai_url, api_key="k", max_retries=0)
    fake_llm.script(HTTPError(status, message, error_type))
    with pytest.raises(ProviderError) as caught:
        [item async for item in provider.stream_message([{"role": "user", "content": "q"}], "", [])]
    error = caught.value
    assert (error.kind, error.retryable, str(error)) == expected
    assert error.status == status


def test_reasoning_details_are_kept_as_received():
    """OpenRouter's fragments: readable ones joined by type and index, a later signature kept, encrypted ones verbatim."""
    from types import SimpleNamespace

    from core.providers.openai import ReasoningAccumulator

    acc = ReasoningAccumulator()
    deltas = [
        {"reasoning": "Let me", "reasoning_details": [{"type": "reasoning.text", "text": "Let me", "format": "anthropic-claude-v1", "index": 0}]},
        {"reasoning": " think.", "reasoning_details": [{"type": "reasoning.text", "text": " think.", "signature": "", "format": "anthropic-claude-v1", "index": 0}]},
        {"reasoning_details": [{"type": "reasoning.text", "signature": "EqQBsig==", "format": "anthropic-claude-v1", "index": 0}]},
        {"reasoning_details": [{"type": "reasoning.encrypted", "data": "ENC", "id": "tool_1", "format": "google-gemini-v1", "index": 1}]},
        {"reasoning_details": [{"type": "reasoning.encrypted", "data": "ENC2", "id": "tool_2", "format": "google-gemini-v1", "index": 1}]},
    ]
    shown = [piece for delta in deltas for piece in acc.add(SimpleNamespace(**delta))]
    assert shown == ["Let me", " think."]
    assert acc.blocks() == [
        {"type": "reasoning", "field": "reasoning", "text": "Let me think."},
        {"type": "reasoning_details", "details": [
            {"type": "reasoning.text", "text": "Let me think.", "format": "anthropic-claude-v1", "index": 0, "signature": "EqQBsig=="},
            {"type": "reasoning.encrypted", "data": "ENC", "id": "tool_1", "format": "google-gemini-v1", "index": 1},
            {"type": "reasoning.encrypted", "data": "ENC2", "id": "tool_2", "format": "google-gemini-v1", "index": 1},
        ]},
    ]


async def test_anthropic_usage_reported_in_message_delta_is_booked_when_the_stream_then_stops(fake_llm):
    """message_delta's usage (server tools report their input there) is the lower bound if message_stop never comes."""
    from core import events as ev
    from core.providers.base import ProviderError
    from tests.fake_llm import Raw

    body = (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],'
        '"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}\n\n'
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n'
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
        '"usage":{"input_tokens":2500,"output_tokens":42}}\n\n'
    ).encode()
    fake_llm.script(Raw(body, framing="close"))
    provider = ClaudeProvider("c", base_url=fake_llm.anthropic_url, api_key="k", max_retries=0, prompt_cache=False)
    seen = []
    with pytest.raises(ProviderError) as caught:
        async for item in provider.stream_message([{"role": "user", "content": "q"}], "", []):
            seen.append(item)
    assert caught.value.kind == "incomplete"
    usage = [i.usage for i in seen if isinstance(i, ev.ResponseStarted)]
    assert (usage[0]["input_tokens"], usage[-1]["input_tokens"], usage[-1]["output_tokens"]) == (10, 2500, 42)


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_a_timeout_says_what_it_was_waiting_for(kind):
    """A server that takes the request and never answers: 'timed out while waiting for the reply'."""
    import socket
    import threading

    from core.providers.base import ProviderError

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)  # read nothing back, answer nothing

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    options = {"api_key": "k", "max_retries": 0, "idle_timeout": 0.5}
    provider = ClaudeProvider("c", base_url=url, **options) if kind == "anthropic" else OpenAICompatibleProvider("g", base_url=url + "/v1", **options)
    try:
        with pytest.raises(ProviderError) as caught:
            [item async for item in provider.stream_message([{"role": "user", "content": "q"}], "", [])]
    finally:
        stop.set()
        listener.close()
        for conn in held:
            conn.close()
    named = "Anthropic" if kind == "anthropic" else "127.0.0.1"
    assert caught.value.kind == "timeout" and str(caught.value) == f"The request to {named} timed out while waiting for the reply"
    assert held, "the request reached the server"


def test_each_timeout_phase_is_named():
    import httpx
    import openai

    from core.providers.errors import classify_error

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    for cause, phase in [(httpx.ConnectTimeout("x"), "connecting"), (httpx.PoolTimeout("x"), "waiting for a free connection"), (httpx.WriteTimeout("x"), "sending the request")]:
        try:
            try:
                raise cause
            except httpx.TimeoutException as inner:
                raise openai.APITimeoutError(request) from inner
        except openai.APITimeoutError as exc:
            assert str(classify_error(exc, "127.0.0.1")) == f"The request to 127.0.0.1 timed out while {phase}"
    assert str(classify_error(openai.APITimeoutError(request), "h")) == "The request to h timed out"
