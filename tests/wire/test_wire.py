"""Wire compatibility: recorded and documented streams replayed byte for byte through the real SDKs.

Each file in ``streams/`` starts with ``KEY: value`` header lines (``SOURCE`` names where
the bytes come from; ``API``; optionally ``STATUS``, ``CONTENT-TYPE``, ``FRAMING``), a
blank line, then the response body exactly as the server sent it. The fake server
replays the body (:class:`tests.fake_llm.Raw`) to a real handler on the real
``anthropic``/``openai`` SDK; every stream must end in the right answer, the right tool
calls with a valid follow-up request (ids matching, and whatever the provider asks to
get back, as received: thinking blocks, reasoning fields, OpenRouter's
``reasoning_details``, Gemini's ``extra_content``, server tools' blocks), or a precise
error in the provider's own words: never a traceback, never a silent truncation.
Each stream is also run through ``assistant-tui -p`` in both output forms, plain text
and jsonl.

Where the bytes come from: recordings of live services (most from charmbracelet/fantasy's
go-vcr cassettes, see ``streams/NOTICE``), SDK fixtures, streams quoted in public
repositories, and, where no recording was found, streams written from the service's
documentation; each SOURCE line says which.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from core import events as ev
from core.config import Settings
from core.handlers.pacing import Pacing
from core.handlers.passthrough import PassthroughHandler
from tests.core.conftest import assert_history_valid, make_provider
from tests.fake_llm import FakeLLM, Raw, Reply

STREAMS = Path(__file__).parent / "streams"
TOOL_NAMES = (
    "get_weather", "get_current_weather", "read_file", "list_files", "write_file", "make_file",
    "ask_internal_tool", "GetWeatherArgs", "get_stock_price", "weather", "add", "multiply",
)


@dataclass
class Expect:
    """What a stream must end in."""

    text: str | None = None
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    stop: str = "end_turn"
    not_run: int = 0
    failed: tuple[str, str] | None = None  # (TurnFailed.reason, metadata error_kind)
    thinking: str = ""
    retried: bool = False


EXPECT: dict[str, Expect] = {
    "anthropic_basic_ping": Expect(text="Hello there!"),
    "anthropic_tool_use_split_json": Expect(
        text="I'll check the current weather in Paris for you.", calls=[("get_weather", {"location": "Paris"})], stop="tool_use"
    ),
    "anthropic_refusal": Expect(text="", stop="refusal"),
    "anthropic_max_tokens_inside_tool_json": Expect(
        text="I'll create a comprehensive tax guide for someone with multiple W2s and save it in a file called taxes.txt. Let me do that for you now.",
        calls=[("make_file", {"filename": "taxes.txt", "lines_of_text": ["# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s", "", "## INTRODUCTION", ""]})],
        stop="max_tokens",
        not_run=1,
    ),
    "anthropic_server_tool_use": Expect(text="Let me search for that."),
    "anthropic_server_tool_results_and_client_tool": Expect(text="", calls=[("ask_internal_tool", {"query": "test"})], stop="tool_use"),
    "anthropic_unknown_extra_fields": Expect(text="Hello!"),
    "anthropic_thinking_signature": Expect(
        text="27 * 453 = 12,231", thinking="Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3"
    ),
    "anthropic_redacted_thinking_tool_use": Expect(
        text="", calls=[("list_files", {"dir": "src"})], stop="tool_use", thinking="I need the file list first."
    ),
    "anthropic_error_event_mid_stream": Expect(failed=("llm_error", "overloaded")),
    "anthropic_overloaded_before_first_byte": Expect(text="recovered", retried=True),
    "anthropic_parallel_tool_use": Expect(
        text="I'll read both files.", calls=[("read_file", {"path": "a.py"}), ("read_file", {"path": "bé.py"})], stop="tool_use"
    ),
    "anthropic_multiple_text_blocks": Expect(text="The grass is green. The sky is blue."),
    "anthropic_unknown_block_types": Expect(text="Still fine."),
    "anthropic_clean_close_mid_text": Expect(failed=("incomplete_response", "incomplete")),
    "openai_length": Expect(text='{"', stop="max_tokens"),
    "openai_refusal": Expect(text="I'm sorry, but I can't assist with that request.", stop="refusal"),
    "openai_tool_args_many_chunks_usage": Expect(
        text="", calls=[("GetWeatherArgs", {"city": "Edinburgh", "country": "GB", "units": "c"})], stop="tool_use"
    ),
    "openai_parallel_tool_calls": Expect(
        text="",
        calls=[("GetWeatherArgs", {"city": "Edinburgh", "country": "UK", "units": "c"}), ("get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"})],
        stop="tool_use",
    ),
    "openai_strict_tool": Expect(text="", calls=[("get_weather", {"city": "San Francisco", "state": "CA"})], stop="tool_use"),
    "openai_non_strict_tool": Expect(text="", calls=[("get_weather", {"city": "New York City"})], stop="tool_use"),
    "ollama_tool_call_without_index_finish_stop": Expect(text="", calls=[("get_current_weather", {"location": "Boston, MA"})], stop="tool_use"),
    "ollama_parallel_calls_all_index_zero": Expect(
        text="", calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})], stop="tool_use"
    ),
    "ollama_arguments_as_object_no_id": Expect(text="", calls=[("get_weather", {"city": "Oslo"})], stop="tool_use"),
    "llamacpp_repeated_ids_distinct_index": Expect(
        text="", calls=[("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"})], stop="tool_use"
    ),
    "lmstudio_id_repeated_every_chunk": Expect(text="", calls=[("read_file", {"path": "c.py"})], stop="tool_use"),
    "vllm_reasoning_content": Expect(text="9.8 is greater than 9.11.", thinking="The user asks for 9.11 vs 9.8. 9.8 is larger."),
    "vllm_reasoning_field": Expect(text="Done.", thinking="Short thought."),
    "deepseek_reasoning_tool_call": Expect(
        text="", calls=[("get_weather", {"location": "Hangzhou"})], stop="tool_use", thinking="I should check the weather tool."
    ),
    "openai_error_object_mid_stream": Expect(failed=("llm_error", "context_limit")),
    "ollama_error_string_mid_stream": Expect(failed=("llm_error", "server")),
    # [DONE] is the protocol's own end: complete although no choice said why it finished.
    "openai_done_without_finish_reason": Expect(text="Half an answer"),
    # Cut inside a tool call's arguments before any text: retried, and the cut call never runs.
    "openai_clean_close_mid_tool_arguments": Expect(text="recovered", retried=True),
    "stream_options_rejected": Expect(text="recovered"),
    # -- issue 25: the three misses ---------------------------------------------------------------
    "anthropic_pause_turn_web_search": Expect(text="I'll search for the latest release notes.", stop="pause_turn"),
    "snowflake_cortex_usage_then_done_no_finish": Expect(text="Snowflake is a cloud data platform."),
    "openrouter_gemini3_reasoning_details_tool_call": Expect(
        text="", calls=[("get_weather", {"location": "Paris"})], stop="tool_use", thinking="**Checking the weather**\n\nI should call the weather tool for Paris."
    ),
    # -- issue 25: recorded from live services (charmbracelet/fantasy's cassettes); expectations read off the bytes
    'anthropic_claude4_parallel_tools_recorded': Expect(text="I'll add and multiply the numbers 2 and 3 for you.", calls=[('add', {'a': 2, 'b': 3}), ('multiply', {'a': 2, 'b': 3})], stop='tool_use'),
    'anthropic_claude4_thinking_tool_call_recorded': Expect(text='', calls=[('weather', {'location': 'Florence, Italy'})], stop='tool_use', thinking='The user is asking for weather information for Florence, Italy. I have access to a weather function that takes a location parameter. The user has provided the location as "Florence, Italy" which is specific enough for the weather function. I have all the required parameters to make the function call.'),
    'anthropic_web_search_server_tool_recorded': Expect(text="Based on the search results, the current population of Tokyo depends on which definition is used:\n\n**Greater Tokyo Metropolitan Area**: Tokyo's 2026 population is now estimated at 36,953,600 according to World Population Review. The United Nations also estimates the total population at 36,954,512 for the Greater Tokyo Area as of 2026.\n\n**Tokyo Metropolis (Prefecture)**: As of 2025, the total population of Tokyo is 14,195,730 according to Wikipedia.\n\n**Tokyo City Proper (23 Special Wards)**: The population figures vary, with some sources citing around 9,262,046 for the 23 wards that make up the historic city of Tokyo.\n\nThe different population figures reflect different geographic definitions:\n- These estimates represent the Urban agglomeration of Tokyo, which typically includes Tokyo's population in addition to adjacent suburban areas\n- The greater Tokyo metropolitan area, which is spread over 3 prefectures, is much larger and has a population that is estimated to be over 36 million\n\n**Sources**: World Population Review, United Nations World Urbanization Prospects, and Wikipedia Demographics of Tokyo page."),
    'avian_kimi_thinking': Expect(text='   ', calls=[('weather', {'location': 'Florence'})], stop='tool_use', thinking='I need to get the weather information for Florence, Italy. I\'ll call the weather function with "Florence" as the location parameter. '),
    'avian_kimi_tool_call': Expect(text='  ', calls=[('weather', {'location': 'Florence,Italy'})], stop='tool_use', thinking='The user is asking for the weather in Florence, Italy. I have a weather function available that can get weather information for a location. I need to call this function with "Florence,Italy" (or just "Florence" since Italy is implied) as the location parameter.\n\nLet me call the weather function with the location "Florence,Italy". '),
    'azure_openai_gpt5_mini_tool_call': Expect(text='', calls=[('weather', {'location': 'Florence, Italy'})], stop='tool_use'),
    'azure_openai_o4_mini_text': Expect(text='Oi!'),
    'groq_kimi_k2_parallel_tools': Expect(text="I'll perform both addition and multiplication on the numbers 2 and 3 for you.", calls=[('add', {'a': 2, 'b': 3}), ('multiply', {'a': 2, 'b': 3})], stop='tool_use'),
    'huggingface_kimi_k2_parallel_tools': Expect(text="I'll add and multiply the numbers 2 and 3 for you.", calls=[('add', {'a': 2, 'b': 3}), ('multiply', {'a': 2, 'b': 3})], stop='tool_use'),
    'huggingface_kimi_k2_tool_call': Expect(text='', calls=[('weather', {'location': 'Florence,Italy'})], stop='tool_use'),
    'llamacpp_gpt_oss_thinking': Expect(text='', calls=[('weather', {'location': 'Florence, Italy'})], stop='tool_use', thinking='We need to call function \'weather\' with location "Florence, Italy".'),
    'llamacpp_gpt_oss_tool_call': Expect(text='', calls=[('weather', {'location': 'Florence, Italy'})], stop='tool_use', thinking='User wants weather in Florence, Italy. We can use the weather function.'),
    'openai_gpt5_parallel_tools_recorded': Expect(text='', calls=[('add', {'a': 2, 'b': 3}), ('multiply', {'a': 2, 'b': 3})], stop='tool_use'),
    'openrouter_claude_parallel_tools': Expect(text='', calls=[('add', {'a': 2, 'b': 3}), ('multiply', {'a': 2, 'b': 3})], stop='tool_use'),
    'openrouter_claude_thinking_reasoning_details': Expect(text='', calls=[('weather', {'location': 'Florence, Italy'})], stop='tool_use', thinking='The user is asking for weather information in Florence, Italy. I have access to a weather function that takes a location parameter. I should call the weather function with "Florence, Italy" or "Florence" as the location.\n\nLet me call the weather function with the location being Florence, Italy (or I could try just "Florence" - but "Florence, Italy" would be more specific and accurate).'),
    'openrouter_gemini_tool_call': Expect(text='', calls=[('weather', {'location': 'Florence, Italy'})], stop='tool_use'),
    'openrouter_glm_tool_call': Expect(text='', calls=[('weather', {'location': 'Florence, Italy'})], stop='tool_use', thinking='The user wants to know the weather in Florence, Italy. Let me call the weather function.'),
    'openrouter_grok_parallel_tools': Expect(text='', calls=[('add', {'a': 2, 'b': 3}), ('multiply', {'a': 2, 'b': 3})], stop='tool_use', thinking='The user says: "Add and multiply the number 2 and 3". I am a helpful assistant and must always use both add and multiply at the same time. I have tools for add and multiply.\n'),
    'openrouter_kimi_tool_call': Expect(text='', calls=[('weather', {'location': 'Florence,Italy'})], stop='tool_use', thinking=' The user is asking for the weather in Florence, Italy. I have a `weather` function that takes a `location` parameter which is the city name. I should call this function with "Florence" or "Florence,Italy" as the location. Let me use the location provided by the user.'),
    'vercel_gateway_claude_thinking_signature': Expect(text='', calls=[('weather', {'location': 'Florence, Italy'})], stop='tool_use', thinking='The user is asking for weather information for Florence, Italy. I have access to a weather function that takes a location parameter. The user has provided a specific location: "Florence, Italy". I have all the required parameters to make this function call.'),
    'vercel_gateway_claude_tool_call': Expect(text="I'll get the current weather information for Florence, Italy for you.", calls=[('weather', {'location': 'Florence,Italy'})], stop='tool_use'),
    'vercel_gateway_gemini3_parallel_tools': Expect(text='', calls=[('add', {'a': 2, 'b': 3}), ('multiply', {'a': 2, 'b': 3})], stop='tool_use'),
    'vercel_gateway_gpt5_text': Expect(text='Olá!'),
    'vertex_claude_3_7_tool_call': Expect(text="I'll help you check the weather in Florence, Italy. Let me get that information for you right away.", calls=[('weather', {'location': 'Florence,Italy'})], stop='tool_use'),
    'xai_grok_code_fast_tool_call': Expect(text='', calls=[('weather', {'location': 'Florence,Italy'})], stop='tool_use', thinking='The user asked for the weather in Florence, Italy. I have a tool for that: the weather function, which takes a location.\n'),
    'zai_glm_4_7_thinking': Expect(text="I'll check the weather in Florence, Italy for you.", calls=[('weather', {'location': 'Florence'})], stop='tool_use', thinking='The user is asking about the weather in Florence, Italy. I have a weather function available that can get weather information for a location. The required parameter is "location" which should be a city name. The user specified "Florence, Italy" so I should use "Florence" as the location parameter.'),
    'zai_glm_4_7_tool_call': Expect(text="I'll get the current weather information for Florence, Italy for you.", calls=[('weather', {'location': 'Florence,Italy'})], stop='tool_use', thinking='The user is asking for the weather in Florence, Italy. I have access to a weather function that can get weather information for a location. The function requires a "location" parameter, which should be a city. The user has specified "Florence,Italy" as the location, so I should use that exact value.'),

    # -- issue 25: reconstructed from each service's documentation (the SOURCE line says so)
    "mistral_magistral_thinking_chunks": Expect(text="2 + 2 = 4.", thinking="The user wants 2+2. That is 4."),
    "ollama_thinking_reasoning_field": Expect(text="Hello! How can I help?", thinking="Okay, the user greets me."),
    "gemini_openai_compat_thought_signature": Expect(text="", calls=[("get_weather", {"location": "Paris"})], stop="tool_use"),
    "vllm_hermes_tool_parser": Expect(text="", calls=[("get_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})], stop="tool_use"),
    "vllm_mistral_tool_parser": Expect(text="", calls=[("get_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})], stop="tool_use"),
    "vllm_llama3_json_tool_parser": Expect(text="", calls=[("get_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})], stop="tool_use"),
    "cerebras_usage_time_info": Expect(text="Hi there!", thinking="Simple greeting."),
    "fireworks_tool_call_usage_on_finish": Expect(text="", calls=[("get_weather", {"city": "Lisbon"})], stop="tool_use"),
    "sambanova_usage_with_timings": Expect(text="Paris is the capital of France."),
    "litellm_proxy_anthropic_model": Expect(text="Sure, here it is."),
    "lmstudio_reasoning_content": Expect(text="There are 3 r's in strawberry.", thinking="Count the letters."),
    "bedrock_access_gateway_tool_call": Expect(text="Let me check.", calls=[("get_weather", {"city": "Seattle"})], stop="tool_use"),
    # -- mid-stream errors: the provider's words and kind; retried only where it can help
    "groq_tool_use_failed_mid_stream": Expect(text="recovered", retried=True),
    "litellm_rate_limit_mid_stream": Expect(text="recovered", retried=True),
    "openrouter_token_limit_mid_stream": Expect(failed=("llm_error", "context_limit")),
    "openrouter_finish_reason_error_mid_stream": Expect(failed=("llm_error", "server")),
    "vllm_error_object_mid_stream": Expect(failed=("llm_error", "context_limit")),
    "xai_usage_every_chunk_cut": Expect(failed=("incomplete_response", "incomplete")),
}

SHOWN: dict[str, tuple[str, ...]] = {
    # What the user reads (the failure, or the retry warning) keeps the provider's own words and its name for the error.
    "groq_tool_use_failed_mid_stream": ("tool_use_failed", "Failed to call a function"),
    "litellm_rate_limit_mid_stream": ("rate-limiting", "litellm.RateLimitError"),
    "openrouter_token_limit_mid_stream": ("token limit", "maximum context length is 131072 tokens"),
    "openrouter_finish_reason_error_mid_stream": ("server_error", "Provider disconnected unexpectedly", "14 characters"),
    "vllm_error_object_mid_stream": ("BadRequestError", "maximum model length of 40960"),
    "anthropic_error_event_mid_stream": ("overloaded_error", "Overloaded"),
}

def load(name: str) -> tuple[dict[str, str], bytes]:
    """The header fields and the exact body bytes of ``streams/NAME.sse``."""
    data = (STREAMS / f"{name}.sse").read_bytes()
    head, _, body = data.partition(b"\n\n")
    fields = dict(line.split(": ", 1) for line in head.decode().splitlines())
    return fields, body


def test_every_stream_names_its_source_and_has_an_expectation():
    names = sorted(p.stem for p in STREAMS.glob("*.sse"))
    assert names == sorted(EXPECT), "a stream without an expectation, or an expectation without a stream"
    assert len(names) >= 25
    for name in names:
        fields, body = load(name)
        assert fields.get("SOURCE") and fields.get("API") in {"anthropic", "openai"} and body, name


def handler_for(api: str, fake: FakeLLM, tmp_path: Path) -> PassthroughHandler:
    provider = make_provider(api, fake, max_retries=0)
    handler = PassthroughHandler(None, None, provider, Settings(project_root=tmp_path, max_retries=2), pacing=Pacing(retry_base_delay=0.01))
    for name in TOOL_NAMES:
        handler.register_tool({"name": name, "input_schema": {"type": "object"}}, lambda params, name=name: f"ok {name}")
    return handler


@pytest.mark.parametrize("name", sorted(EXPECT))
async def test_replayed_stream(name: str, fake_llm: FakeLLM, tmp_path: Path) -> None:
    fields, body = load(name)
    api, expect = fields["API"], EXPECT[name]
    raw = Raw(
        body,
        status=int(fields.get("STATUS", "200")),
        content_type=fields.get("CONTENT-TYPE", "text/event-stream"),
        framing=fields.get("FRAMING", "chunked"),
    )
    fake_llm.script(raw, Reply(text="recovered"))
    handler = handler_for(api, fake_llm, tmp_path)
    events = [event async for event in handler.stream_query("go")]
    kinds = {e.kind for e in events}
    assert "traceback" not in json.dumps([ev.event_to_dict(e) for e in events], default=str).lower()
    retries = [e for e in events if isinstance(e, ev.Warning) and e.code == "retry"]
    assert bool(retries) == expect.retried, [w.message for w in retries]
    thinking = "".join(e.text for e in events if isinstance(e, ev.ThinkingDelta))
    assert thinking == expect.thinking
    shown = " ".join([w.message for w in retries] + [e.message for e in events if isinstance(e, ev.TurnFailed)])
    for words in SHOWN.get(name, ()):
        assert words in shown, (words, shown)
    if expect.failed:
        failed = events[-1]
        assert isinstance(failed, ev.TurnFailed), kinds
        assert (failed.reason, failed.result["metadata"].get("error_kind")) == expect.failed, failed.message
        assert "\n" not in failed.message and failed.message.strip()
        answered = any(isinstance(e, ev.AssistantMessage) for e in events)
        assert failed.result["metadata"].get("retracted") is not answered, "nothing answered: the query goes back to the prompt"
        if name in FOLLOW_UPS:
            FOLLOW_UPS[name](body, fake_llm, events)
        assert_history_valid(handler.conversation_history)
        return
    first = next(e for e in events if isinstance(e, ev.AssistantMessage))
    assert (first.content, first.stop_reason) == (expect.text, expect.stop)
    assert [(c.name, c.parameters) for c in first.tool_calls] == expect.calls
    assert isinstance(events[-1], ev.TurnCompleted), events[-1]
    ran = [e.call.name for e in events if isinstance(e, ev.ToolCallStarted)]
    assert ran == [name for name, _ in expect.calls][: len(expect.calls) - expect.not_run]
    assert_history_valid(handler.conversation_history)
    not_run = [e for e in events if isinstance(e, ev.ToolCallFinished) and e.status == "not_run"]
    assert len(not_run) == expect.not_run
    if first.tool_calls:
        check_follow_up(api, fake_llm.requests[-1].body, [c.id for c in first.tool_calls], first)
        if api == "openai":
            details_go_back(body, fake_llm.requests[-1].body)
    if name in FOLLOW_UPS:
        FOLLOW_UPS[name](body, fake_llm, events)
    if name == "stream_options_rejected":
        assert "stream_options" in fake_llm.requests[0].body and "stream_options" not in fake_llm.requests[1].body
        fake_llm.script(Reply(text="again"))
        [event async for event in handler.stream_query("once more")]
        assert "stream_options" not in fake_llm.requests[2].body, "remembered: not sent again"


def wire_chunks(body: bytes) -> list[dict[str, Any]]:
    """The JSON of every ``data:`` line of an SSE body."""
    lines = body.decode().splitlines()
    return [json.loads(line[6:]) for line in lines if line.startswith("data: {")]


def paused_turn_continues(body: bytes, fake_llm: FakeLLM, events: list[ev.Event]) -> None:
    """pause_turn: the conversation goes back as it is (the paused content, in order), the model continues, one answer."""
    assert len(fake_llm.requests) == 2, "one continuation request, no retry"
    sent = fake_llm.requests[1].body["messages"]
    assert sent[:-1] == fake_llm.requests[0].body["messages"][:-1] or sent[0]["role"] == "user"
    blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in sent[-1]["content"]]
    received = [c["content_block"] for c in wire_chunks(body) if c["type"] == "content_block_start"]
    received[0] = {"type": "text", "text": "I'll search for the latest release notes."}
    received[1] = {**received[1], "input": {"query": "python 3.14 release notes"}}
    assert sent[-1]["role"] == "assistant" and blocks == received, "the paused answer goes back exactly as received, last"
    done = events[-1]
    assert isinstance(done, ev.TurnCompleted) and done.result["content"] == "I'll search for the latest release notes.recovered"
    messages = [e for e in events if isinstance(e, ev.AssistantMessage)]
    assert [(m.final, m.stop_reason) for m in messages] == [(False, "pause_turn"), (True, "end_turn")]


def signatures_go_back(body: bytes, fake_llm: FakeLLM, events: list[ev.Event]) -> None:
    """Gemini 3 through OpenRouter: the encrypted thought signature goes back verbatim in reasoning_details."""
    encrypted = [d for c in wire_chunks(body) for ch in c["choices"] for d in ch["delta"].get("reasoning_details") or [] if d["type"] == "reasoning.encrypted"]
    assistant = [m for m in fake_llm.requests[-1].body["messages"] if m["role"] == "assistant"][-1]
    assert assistant["reasoning_details"] is not None and encrypted and all(d in assistant["reasoning_details"] for d in encrypted)
    text = [d for d in assistant["reasoning_details"] if d["type"] == "reasoning.text"]
    assert text == [{"type": "reasoning.text", "text": "**Checking the weather**\n\nI should call the weather tool for Paris.", "format": "google-gemini-v1", "index": 0}]


def done_is_complete(body: bytes, fake_llm: FakeLLM, events: list[ev.Event]) -> None:
    """[DONE] without a finish_reason: a complete answer, booked with the usage reported (not a lower bound)."""
    message = next(e for e in events if isinstance(e, ev.AssistantMessage))
    assert not message.interrupted and message.usage.get("reported", True) is not False
    assert (message.usage["input_tokens"], message.usage["output_tokens"]) == (21, 9)


def details_go_back(body: bytes, sent: dict[str, Any]) -> None:
    """Every reasoning_details entry the wire carried goes back: encrypted ones verbatim, signatures kept, text joined by index."""
    received = [d for c in wire_chunks(body) for ch in c.get("choices") or [] for d in (ch.get("delta") or {}).get("reasoning_details") or []]
    if not received:
        return
    assistant = [m for m in sent["messages"] if m["role"] == "assistant"][-1]
    back = assistant.get("reasoning_details") or []
    for entry in received:
        if entry["type"] == "reasoning.encrypted":
            assert entry in back, "an encrypted entry goes back verbatim"
        if entry.get("signature"):
            assert any(b.get("signature") == entry["signature"] for b in back), "a signature goes back"
    for index in {d.get("index") for d in received if d["type"] == "reasoning.text"}:
        text = "".join(d.get("text") or "" for d in received if d["type"] == "reasoning.text" and d.get("index") == index)
        assert [b.get("text") or "" for b in back if b["type"] == "reasoning.text" and b.get("index") == index] == [text]


def extra_content_goes_back(body: bytes, fake_llm: FakeLLM, events: list[ev.Event]) -> None:
    """Gemini's OpenAI-compatible endpoint: the call's extra_content (its thought signature) goes back on that call."""
    received = [t for c in wire_chunks(body) for ch in c["choices"] for t in ch["delta"].get("tool_calls") or []]
    assistant = [m for m in fake_llm.requests[-1].body["messages"] if m["role"] == "assistant"][-1]
    assert [c.get("extra_content") for c in assistant["tool_calls"]] == [t["extra_content"] for t in received]


def cut_counts_the_usage_reported(body: bytes, fake_llm: FakeLLM, events: list[ev.Event]) -> None:
    """A stream that just stops after usage chunks: the partial answer is booked with the last usage reported, as a lower bound."""
    message = next(e for e in events if isinstance(e, ev.AssistantMessage))
    assert message.interrupted and message.stop_reason == "incomplete"
    usage = message.usage
    assert (usage["input_tokens"], usage["output_tokens"], usage["reported"]) == (38, 8, False)


FOLLOW_UPS = {
    "gemini_openai_compat_thought_signature": extra_content_goes_back,
    "xai_usage_every_chunk_cut": cut_counts_the_usage_reported,
    "anthropic_pause_turn_web_search": paused_turn_continues,
    "openrouter_gemini3_reasoning_details_tool_call": signatures_go_back,
    "snowflake_cortex_usage_then_done_no_finish": done_is_complete,
    "openai_done_without_finish_reason": lambda body, fake, events: None,
}


@pytest.mark.parametrize("output_format", ["text", "jsonl"])
@pytest.mark.parametrize("name", sorted(EXPECT))
async def test_headless_plain_and_jsonl(name: str, output_format: str, fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same stream through ``assistant-tui -p`` in both output forms: the answer, or one line saying why not, never a traceback."""
    from core.cli import run_headless
    from core.text import for_terminal

    fields, body = load(name)
    api, expect = fields["API"], EXPECT[name]
    raw = Raw(body, status=int(fields.get("STATUS", "200")), content_type=fields.get("CONTENT-TYPE", "text/event-stream"), framing=fields.get("FRAMING", "chunked"))
    fake_llm.script(raw, Reply(text="recovered"), Reply(text="recovered"))
    settings = Settings(
        project_root=tmp_path, provider=api, anthropic_base_url=fake_llm.anthropic_url, openai_base_url=fake_llm.openai_url,
        anthropic_api_key="sk-ant-test", openai_api_key="sk-test", max_retries=2,
    )
    code = await run_headless(settings, "go", output_format)
    out, err = capsys.readouterr()
    assert "traceback" not in (out + err).lower()
    if expect.failed:
        assert code == 1 and err.startswith("assistant-tui: ") and err.count("\n") == 1, err
    else:
        assert code == 0, err
    if output_format == "jsonl":
        events = [json.loads(line) for line in out.splitlines()]
        assert events[-1]["kind"] == ("turn_failed" if expect.failed else "turn_completed")
        if expect.failed:
            assert (events[-1]["reason"], events[-1]["result"]["metadata"]["error_kind"]) == expect.failed
        return
    if expect.failed:
        assert out == "", "a failed answer is never printed as if it were the answer"
        return
    answer = "recovered" if expect.calls or expect.retried else expect.text
    if expect.stop == "pause_turn":
        answer = (expect.text or "") + "recovered"
    assert out == for_terminal(answer or "").rstrip("\n") + "\n"


def check_follow_up(api: str, body: dict[str, Any], ids: list[str], message: ev.AssistantMessage) -> None:
    """The request after a tool-calling message carries that message and one result per call, ids matching."""
    assert len(set(ids)) == len(ids), f"tool call ids must be unique: {ids}"
    messages = body["messages"]
    if api == "anthropic":
        assistant, results = messages[-2], messages[-1]
        assert [b["id"] for b in assistant["content"] if b["type"] == "tool_use"] == ids
        assert sorted(b["tool_use_id"] for b in results["content"] if b["type"] == "tool_result") == sorted(ids)
        thinking_types = ("thinking", "redacted_thinking")
        blocks = [b for b in assistant["content"] if b["type"] in thinking_types]
        assert blocks == [dict(b) for b in message.thinking if b["type"] in thinking_types], "thinking goes back exactly as received"
        kept = [b["blocks"] for b in message.thinking if b["type"] == "content_blocks"]
        if kept:
            sent = [{k: v for k, v in b.items() if k != "cache_control"} for b in assistant["content"]]
            assert sent == kept[0], "server tools' blocks go back as received, in order"
        return
    position = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    assistant = messages[position]
    assert [c["id"] for c in assistant["tool_calls"]] == ids
    assert [m["tool_call_id"] for m in messages[position + 1 :]] == ids
    reasoning = [b for b in message.thinking if b["type"] == "reasoning"]
    for field in ("reasoning_content", "reasoning"):
        expected = reasoning[0]["text"] if reasoning and reasoning[0]["field"] == field else None
        assert assistant.get(field) == expected, field
    details = [b["details"] for b in message.thinking if b["type"] == "reasoning_details"]
    assert assistant.get("reasoning_details") == (details[0] if details else None), "reasoning_details go back as received"
    extras = {b["id"]: b["extra_content"] for b in message.thinking if b["type"] == "tool_call_extra"}
    assert {c["id"]: c["extra_content"] for c in assistant["tool_calls"] if "extra_content" in c} == extras


async def test_a_paused_turn_counts_against_the_turns_limit(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """pause_turn continues within the turn's limits: with a limit of one response, the continuation is not sent."""
    fields, body = load("anthropic_pause_turn_web_search")
    fake_llm.script(Raw(body), Reply(text="never sent"))
    provider = make_provider("anthropic", fake_llm, max_retries=0)
    handler = PassthroughHandler(None, None, provider, Settings(project_root=tmp_path, max_turns=1))
    events = [event async for event in handler.stream_query("go")]
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.reason == "resource_exhaustion", failed
    assert failed.result["metadata"].get("resource") == "turns" and len(fake_llm.requests) == 1
    assert_history_valid(handler.conversation_history)


@pytest.mark.parametrize("name", ["anthropic_pause_turn_web_search", "openrouter_gemini_tool_call", "gemini_openai_compat_thought_signature"])
async def test_what_goes_back_survives_the_transcript(name: str, fake_llm: FakeLLM, tmp_path: Path) -> None:
    """Resumed from its transcript, the conversation sends back exactly what the live one did."""
    from core.sessions.load import load_session
    from core.sessions.recorder import SessionRecorder
    from core.sessions.session import StoredSession
    from core.sessions.writer import SessionWriter

    fields, body = load(name)
    api = fields["API"]
    handler = handler_for(api, fake_llm, tmp_path)
    writer = SessionWriter(StoredSession(id="20260101-000000-abcdef", path=tmp_path / "s.jsonl", project_root=tmp_path, created=0.0))
    handler.add_observer(SessionRecorder(writer))
    fake_llm.script(Raw(body), Reply(text="recovered"))
    events = [event async for event in handler.stream_query("go")]
    assert isinstance(events[-1], ev.TurnCompleted)
    writer.close()
    loaded = load_session(tmp_path / "s.jsonl")
    assert [m.get("thinking") for m in loaded.messages] == [m.get("thinking") for m in handler.conversation_history]
    resumed = handler_for(api, fake_llm, tmp_path)
    live = handler.model_provider.convert_messages(handler.conversation_history)
    again = resumed.model_provider.convert_messages(loaded.messages)
    assert again == live
