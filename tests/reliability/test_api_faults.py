"""API faults the tool loop must survive, on both wire formats, through the real SDKs.

Complements ``tests/core/test_tool_loop.py`` (429 + retry-after, 529 repeatedly,
400/401/413, a 429 storm, cancellation): here the in-stream errors before and
after text, a connection reset inside a tool call's JSON, the idle watchdog before
any event and mid-stream, Esc during a silent stream, malformed events, UTF-8
split across reads, a missing ``[DONE]`` and 20 tool calls in one message. Every
case also checks that no canary left (requests, log, listener).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from core import events as ev
from tests.conftest import marked_settings
from tests.core.conftest import assert_history_valid
from tests.fake_llm import Drop, FakeLLM, Garbage, HTTPError, Reply, Stall, StreamError, Tool
from tests.reliability.support import API_KEY_CANARY, Engine, assert_no_leaks, collect, finished_calls, make_engine, transcript_text

MULTIBYTE = "héllo wörld — 日本語のテキスト 🎉🚀 ñandú ∑∞ " * 2


@pytest.fixture(params=["anthropic", "openai"])
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def engine(kind: str, fake_llm: FakeLLM, tmp_path: Path, app_log: Path, request: pytest.FixtureRequest) -> Engine:
    return make_engine(kind, fake_llm, tmp_path, **{"max_retries": 2, **marked_settings(request)})


def warnings(events: list[ev.Event]) -> list[str]:
    return [e.code for e in events if isinstance(e, ev.Warning)]


def roles(engine: Engine) -> list[str]:
    return [m["role"] for m in engine.handler.conversation_history]


async def test_overloaded_event_before_any_text_is_retried(engine: Engine, fake_llm: FakeLLM) -> None:
    fake_llm.script(StreamError(after_chunks=0), Reply(text="second try"))
    events = await collect(engine.handler, "hi")
    assert warnings(events) == ["retry"]
    assert events[-1].kind == "turn_completed" and events[-1].result["content"] == "second try"
    assert len(fake_llm.requests) == 2 and roles(engine) == ["user", "assistant"]
    assert_no_leaks(fake_llm)


async def test_error_event_after_text_keeps_the_partial_and_does_not_retry(engine: Engine, fake_llm: FakeLLM) -> None:
    fake_llm.script(StreamError(text="The answer is forty", after_chunks=1))
    events = await collect(engine.handler, "hi")
    assert isinstance(events[-1], ev.TurnFailed) and events[-1].reason == "llm_error"
    assert len(fake_llm.requests) == 1 and warnings(events) == []
    last = engine.handler.conversation_history[-1]
    assert last["interrupted"] and last["content"] == "The answer i"
    assert any(isinstance(e, ev.AssistantMessage) and e.interrupted for e in events)
    assert_no_leaks(fake_llm)


def _events_until_tool_json(kind: str) -> int:
    """SSE events of ``Reply(text=..., tools=[record])`` sent before the cut: inside the tool's JSON."""
    # anthropic: message_start, block_start, 2 text deltas, block_stop, tool block_start, 3 JSON deltas
    # openai: role chunk, 2 text chunks, tool start, 3 argument chunks
    return 9 if kind == "anthropic" else 7


async def test_connection_reset_inside_a_tool_calls_json(engine: Engine, fake_llm: FakeLLM, kind: str) -> None:
    """After text: the partial call never runs, the partial text is kept, and the history stays valid."""
    reply = Reply(text="Let me record.", tools=[Tool("record", {"value": "x" * 300})])
    fake_llm.script(Drop(reply, after_events=_events_until_tool_json(kind)))
    events = await collect(engine.handler, "record it")
    assert engine.recorded == [] and finished_calls(events) == []
    assert isinstance(events[-1], ev.TurnFailed) and events[-1].result["metadata"]["error_kind"] == "network"
    assert len(fake_llm.requests) == 1, "text was shown, so no silent retry"
    last = engine.handler.conversation_history[-1]
    assert last["role"] == "assistant" and last["interrupted"] and not last.get("tool_calls")
    assert last["content"] == "Let me record."
    assert_history_valid(engine.handler.conversation_history)
    assert "Let me record." in transcript_text(), "the partial text is kept in the transcript too"
    fake_llm.script(Reply(text="fine now"))
    assert (await engine.handler.handle_query("again"))["content"] == "fine now"
    assert_no_leaks(fake_llm)


async def test_connection_reset_inside_json_before_any_text_is_retried_once(
    engine: Engine, fake_llm: FakeLLM, kind: str
) -> None:
    """No text yet: one bounded retry; the tool then runs exactly once."""
    call = Tool("record", {"value": "y" * 300})
    fake_llm.script(Drop(Reply(tools=[call]), after_events=_events_until_tool_json(kind) - 2),
                    Reply(tools=[call]), Reply(text="recorded"))
    events = await collect(engine.handler, "record it")
    assert warnings(events) == ["retry"]
    assert engine.recorded == ["y" * 300]
    assert events[-1].kind == "turn_completed" and len(fake_llm.requests) == 3
    assert_history_valid(engine.handler.conversation_history)
    assert_no_leaks(fake_llm)


@pytest.mark.settings(idle_timeout=60)
async def test_headers_then_silence_esc_ends_it(engine: Engine, fake_llm: FakeLLM) -> None:
    """The idle watchdog is long (60 s); Esc (cancelling the turn) must not wait for it."""
    fake_llm.script(Stall(before=0, seconds=30), Reply(text="back"))
    seen: list[ev.Event] = []

    async def consume() -> None:
        async for event in engine.handler.stream_query("hello?"):
            seen.append(event)

    task = asyncio.create_task(consume())
    deadline = time.monotonic() + 30
    while not (fake_llm.requests and seen):  # the request is at the server, which answered its headers only
        assert not task.done() and time.monotonic() < deadline, "the request never reached the server"
        await asyncio.sleep(0.01)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=20)  # the server stalls 30 s, the watchdog waits 60 s
    assert task in done and task.cancelled()
    assert [e.kind for e in seen] == ["turn_started"]
    assert roles(engine) == ["user", "assistant"] and engine.handler.conversation_history[-1]["interrupted"]
    assert_history_valid(engine.handler.conversation_history)
    assert (await engine.handler.handle_query("still there?"))["content"] == "back"
    assert_no_leaks(fake_llm)


@pytest.mark.parametrize("stall", [Stall(before=0, seconds=120), Stall(reply=Reply(text="hello there"), before=2, seconds=120)], ids=["before-any-event", "mid-stream"])
@pytest.mark.settings(idle_timeout=0.5, max_retries=0)
async def test_silence_the_watchdog_ends_it(engine: Engine, fake_llm: FakeLLM, stall: Stall) -> None:
    fake_llm.script(stall)
    # The server stalls for 120 s (the server's stop ends it sooner): only the 0.5 s watchdog ends the turn
    # within the 60 s cap, however loaded the machine.
    events = await asyncio.wait_for(collect(engine.handler, "hello?"), 60)
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.result["metadata"]["error_kind"] in {"timeout", "network"}
    assert "Traceback" not in failed.message
    assert_no_leaks(fake_llm)


async def test_malformed_event_is_handled(engine: Engine, fake_llm: FakeLLM, kind: str) -> None:
    """A garbage ``data:`` line before any text: no crash; the stream is retried or the event skipped."""
    garbage = b"event: content_block_delta\ndata: {this is not json\n\n" if kind == "anthropic" else b"data: {this is not json\n\n"
    before_text = 2 if kind == "anthropic" else 1  # message_start + block start / the role chunk
    fake_llm.script(Garbage(Reply(text="hello world"), after_events=before_text, line=garbage), Reply(text="clean answer"))
    events = await collect(engine.handler, "hi")
    assert events[-1].kind == "turn_completed", getattr(events[-1], "message", "")
    assert events[-1].result["content"] == "clean answer"
    assert warnings(events) == ["retry"] and "Malformed response" in next(
        e.message for e in events if isinstance(e, ev.Warning))
    assert_history_valid(engine.handler.conversation_history)
    assert_no_leaks(fake_llm)


async def test_malformed_event_after_text_fails_cleanly(engine: Engine, fake_llm: FakeLLM, kind: str) -> None:
    garbage = b"event: content_block_delta\ndata: {this is not json\n\n" if kind == "anthropic" else b"data: {this is not json\n\n"
    fake_llm.script(Garbage(Reply(text="hello world", chunk=5), after_events=4, line=garbage))
    events = await collect(engine.handler, "hi")
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and "Malformed response" in failed.message
    assert "Traceback" not in failed.message and len(fake_llm.requests) == 1
    assert engine.handler.conversation_history[-1]["interrupted"]
    assert_no_leaks(fake_llm)


@pytest.mark.parametrize("split", [2, 5])
async def test_utf8_split_across_reads(engine: Engine, fake_llm: FakeLLM, split: int) -> None:
    call = Tool("record", {"value": MULTIBYTE[:60]})
    fake_llm.script(Reply(text=MULTIBYTE, chunk=7, tools=[call], split_bytes=split), Reply(text=MULTIBYTE, split_bytes=split))
    events = await collect(engine.handler, "unicode please")
    deltas = "".join(e.text for e in events if isinstance(e, ev.TextDelta))
    assert deltas == MULTIBYTE * 2
    assert "\ufffd" not in deltas
    assert engine.recorded == [MULTIBYTE[:60]]
    assert events[-1].result["content"] == MULTIBYTE
    assert_no_leaks(fake_llm)


async def test_missing_done_on_the_openai_side(fake_llm: FakeLLM, tmp_path: Path, app_log: Path) -> None:
    engine = make_engine("openai", fake_llm, tmp_path)
    fake_llm.script(Reply(text="calling", tools=[Tool("record", {"value": "v"})], omit_done=True),
                    Reply(text="complete without DONE", omit_done=True))
    events = await collect(engine.handler, "hi")
    assert events[-1].kind == "turn_completed" and events[-1].result["content"] == "complete without DONE"
    assert engine.recorded == ["v"]
    assert_history_valid(engine.handler.conversation_history)
    assert_no_leaks(fake_llm)


async def test_twenty_tool_calls_in_one_message_with_the_default_guard(engine: Engine, fake_llm: FakeLLM) -> None:
    """Default max_tool_calls (10): ten run, ten are answered 'not run', the turn stops cleanly."""
    assert engine.handler.config.max_tool_calls == 10
    fake_llm.script(Reply(tools=[Tool("record", {"value": f"v{n}"}) for n in range(20)]))
    events = await collect(engine.handler, "twenty")
    calls = finished_calls(events)
    assert len(calls) == 20 and [c.status for c in calls] == ["success"] * 10 + ["not_run"] * 10
    assert engine.recorded == [f"v{n}" for n in range(10)]
    assert all("limit of 10 tool calls" in c.result for c in calls[10:])
    assert isinstance(events[-1], ev.TurnFailed) and events[-1].reason == "resource_exhaustion"
    assert len(fake_llm.requests) == 1
    tool_messages = [m for m in engine.handler.conversation_history if m["role"] == "tool"]
    assert len(tool_messages) == 20
    assert_history_valid(engine.handler.conversation_history)
    fake_llm.script(Reply(text="ok"))
    assert (await engine.handler.handle_query("next"))["content"] == "ok"
    assert len(fake_llm.requests[-1].messages) >= 3  # the 20 results went out with the next request
    assert_no_leaks(fake_llm)


@pytest.mark.settings(max_tool_calls=20)
async def test_twenty_tool_calls_in_one_message_all_answered(engine: Engine, fake_llm: FakeLLM, kind: str) -> None:
    fake_llm.script(Reply(tools=[Tool("record", {"value": f"v{n}"}) for n in range(20)]), Reply(text="all done"))
    events = await collect(engine.handler, "twenty")
    assert [c.status for c in finished_calls(events)] == ["success"] * 20
    assert events[-1].kind == "turn_completed" and len(engine.recorded) == 20
    second = fake_llm.requests[1]
    if kind == "anthropic":
        results = [b for b in second.messages[-1]["content"] if b["type"] == "tool_result"]
    else:
        results = [m for m in second.messages if m["role"] == "tool"]
    assert len(results) == 20
    assert_history_valid(engine.handler.conversation_history)
    assert_no_leaks(fake_llm)


@pytest.mark.parametrize("status", [400, 401, 413])
async def test_client_errors_never_echo_the_key(engine: Engine, fake_llm: FakeLLM, status: int) -> None:
    """Some gateways echo the key in their error message: it must not reach the UI, log or transcript."""
    fake_llm.script(HTTPError(status, f"bad request for key {API_KEY_CANARY}: fix it"))
    events = await collect(engine.handler, "hi")
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.reason == "llm_error" and len(fake_llm.requests) == 1
    assert warnings(events) == [] and failed.message and "Traceback" not in failed.message
    assert_no_leaks(fake_llm, extra={"events": repr(events)})
