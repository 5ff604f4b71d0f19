"""Honest answers (issue 11): a response counts as complete only when the provider said so.

Driven through the real SDKs against the fake server, which can end a well-formed SSE
body early with ``Connection: close`` framing and a clean socket close (no chunked
encoding error, nothing for the HTTP client to raise).
"""

from __future__ import annotations

from typing import Any

import pytest

from core import events as ev
from core.handlers.pacing import Pacing
from core.sessions.load import load_session
from core.sessions.recorder import SessionRecorder
from core.sessions.session import StoredSession
from core.sessions.writer import SessionWriter
from tests.core.conftest import assert_history_valid
from tests.fake_llm import CleanClose, HTTPError, Reply, StreamError, Tool

ANSWER = "The answer has several parts, and this is the first of them."


async def collect(handler: Any, query: str) -> list[Any]:
    return [event async for event in handler.stream_query(query)]


def streamed(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, ev.TextDelta))


# -- 1. clean close ------------------------------------------------------------------------


async def test_a_clean_close_mid_answer_keeps_the_partial_and_fails_the_turn(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind, max_retries=2)
    # Anthropic: message_start, content_block_start, two deltas; OpenAI: role chunk, two deltas.
    fake_llm.script(CleanClose(Reply(text=ANSWER, chunk=12), after_events=4 if provider_kind == "anthropic" else 3))
    events = await collect(handler, "explain")
    assert streamed(events) == ANSWER[:24]
    message = next(e for e in events if isinstance(e, ev.AssistantMessage))
    assert (message.content, message.interrupted, message.stop_reason) == (ANSWER[:24], True, "incomplete")
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.reason == "incomplete_response"
    assert failed.message == "The connection closed before the answer finished; 24 characters arrived; send again to retry."
    assert not any(isinstance(e, ev.Warning) for e in events), "text had arrived: never retried silently"
    assert len(fake_llm.requests) == 1
    assert [(m["role"], m.get("interrupted"), m.get("stop_reason")) for m in handler.conversation_history] == [
        ("user", None, None),
        ("assistant", True, "incomplete"),
    ]
    # The next request tells the model its answer was cut off (not "interrupted by the user").
    fake_llm.script(Reply(text="fine"))
    await collect(handler, "go on")
    wire = [m for m in fake_llm.requests[-1].messages if m["role"] != "system"][1]
    text = wire["content"][0]["text"] if provider_kind == "anthropic" else wire["content"]
    assert text.startswith(ANSWER[:24]) and "connection closed before the answer finished" in text


async def test_a_clean_close_before_any_text_is_retried_visibly(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind, max_retries=2)
    fake_llm.script(CleanClose(Reply(text=ANSWER), after_events=1), Reply(text="whole"))
    events = await collect(handler, "explain")
    warnings = [e for e in events if isinstance(e, ev.Warning)]
    assert [w.code for w in warnings] == ["retry"] and "closed before the answer finished" in warnings[0].message
    assert isinstance(events[-1], ev.TurnCompleted) and events[-1].result["content"] == "whole"
    assert len(fake_llm.requests) == 2
    assert fake_llm.requests[0].body["messages"] == fake_llm.requests[1].body["messages"]


async def test_a_clean_close_every_time_ends_within_the_retry_budget(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind, max_retries=2)
    fake_llm.responder = lambda request: CleanClose(Reply(text=ANSWER), after_events=1)
    events = await collect(handler, "explain")
    assert [e.code for e in events if isinstance(e, ev.Warning)] == ["retry", "retry"]
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.reason == "incomplete_response"
    assert "; 0 characters arrived;" in failed.message
    assert len(fake_llm.requests) == 3


async def test_a_tool_call_whose_response_never_finished_never_runs(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind, max_retries=2)
    ran: list[str] = []
    handler.register_tool({"name": "record", "input_schema": {"type": "object"}}, lambda params: ran.append("x") or "done")
    reply = Reply(text="Let me check.", tools=[Tool("record", {"text": "a" * 40})])
    # Everything but the end: the tool call's arguments are complete, the stop never came
    # (Anthropic: no message_delta/message_stop; OpenAI: no finish chunk, usage chunk, [DONE]).
    fake_llm.script(CleanClose(reply, drop_last=2 if provider_kind == "anthropic" else 3))
    events = await collect(handler, "do it")
    assert ran == [] and not any(isinstance(e, (ev.ToolCallStarted, ev.ToolCallFinished)) for e in events)
    assert isinstance(events[-1], ev.TurnFailed) and events[-1].reason == "incomplete_response"
    assert_history_valid(handler.conversation_history)
    assert handler.conversation_history[-1].get("tool_calls") is None


# -- 2. max_tokens, refusal, /continue ------------------------------------------------------


async def test_max_tokens_keeps_the_answer_and_continue_asks_for_more(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind)
    fake_llm.script(Reply(text="Part one of a long", stop_reason="max_tokens" if provider_kind == "anthropic" else "length"))
    events = await collect(handler, "write a lot")
    message = next(e for e in events if isinstance(e, ev.AssistantMessage))
    assert (message.content, message.stop_reason, message.final, message.interrupted) == ("Part one of a long", "max_tokens", True, False)
    done = events[-1]
    assert isinstance(done, ev.TurnCompleted) and done.result["metadata"]["stop_reason"] == "max_tokens"
    assert handler.conversation_history[-1]["stop_reason"] == "max_tokens"
    fake_llm.script(Reply(text=" answer, and the end."))
    events = await collect(handler, "/continue")
    assert isinstance(events[-1], ev.TurnCompleted)
    request = fake_llm.requests[-1]
    assert request.last_user_text() == "/continue" and "/continue means your previous answer was cut off" in request.system
    roles = [m["role"] for m in request.messages if m["role"] != "system"]
    assert roles == ["user", "assistant", "user"]


async def test_a_tool_call_cut_by_max_tokens_is_not_run_and_the_model_is_told(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind)
    ran: list[str] = []
    handler.register_tool({"name": "record", "input_schema": {"type": "object"}}, lambda params: ran.append(params["n"]) or "ok")
    stop = "max_tokens" if provider_kind == "anthropic" else "length"
    fake_llm.script(
        Reply(tools=[Tool("record", {"n": "first"}), Tool("record", {"n": "sec"})], stop_reason=stop),
        Reply(text="I will write it shorter."),
    )
    events = await collect(handler, "record two")
    assert ran == ["first"], "the call the limit cut never runs"
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert [f.status for f in finished] == ["success", "not_run"]
    assert finished[1].metadata == {"reason": "max_tokens"}
    assert isinstance(events[-1], ev.TurnCompleted)
    told = fake_llm.requests[1].messages[-1]
    if provider_kind == "anthropic":
        results = {b["tool_use_id"]: b for b in told["content"]}
        assert results[finished[1].call.id]["is_error"] and "output limit" in results[finished[1].call.id]["content"]
    else:
        assert told["tool_call_id"] == finished[1].call.id and "output limit" in told["content"]
    assert_history_valid(handler.conversation_history)


async def test_a_refusal_is_carried_as_a_refusal(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind)
    if provider_kind == "anthropic":
        fake_llm.script(Reply(text="I can't help with that.", stop_reason="refusal"))
    else:
        fake_llm.script(Reply(refusal="I can't help with that."))
    events = await collect(handler, "something bad")
    message = next(e for e in events if isinstance(e, ev.AssistantMessage))
    assert (message.content, message.stop_reason) == ("I can't help with that.", "refusal")
    assert events[-1].result["metadata"]["stop_reason"] == "refusal"


# -- 3. errors inside a 200 stream ------------------------------------------------------------

STREAM_ERRORS = [
    # (error type, message, expected kind, retried)
    ("invalid_request_error", "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after", "tool_rejected", False),
    ("invalid_request_error", "prompt is too long: 213000 tokens > 200000 maximum", "context_limit", False),
    ("invalid_request_error", "The response was filtered due to the prompt triggering content management policy", "content_filter", False),
    ("overloaded_error", "Overloaded", "overloaded", True),
    ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", "rate_limit", True),
    ("api_error", "Internal server error", "server", True),
]


@pytest.mark.parametrize("etype, message, kind, retried", STREAM_ERRORS, ids=[e[2] for e in STREAM_ERRORS])
async def test_errors_inside_a_200_stream_are_classified_by_what_they_say(make_handler, fake_llm, provider_kind, etype, message, kind, retried):
    handler = make_handler(provider_kind, max_retries=2)
    fake_llm.script(StreamError(error_type=etype, message=message), Reply(text="recovered"))
    events = await collect(handler, "hi")
    warnings = [e for e in events if isinstance(e, ev.Warning)]
    if retried:
        assert [w.code for w in warnings] == ["retry"] and isinstance(events[-1], ev.TurnCompleted)
        assert len(fake_llm.requests) == 2
        return
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.result["metadata"]["error_kind"] == kind
    assert warnings == [] and len(fake_llm.requests) == 1
    assert "internal error" not in failed.message and message in failed.message


async def test_openai_error_codes_in_the_stream(make_handler, fake_llm):
    handler = make_handler("openai", max_retries=2)
    fake_llm.script(StreamError(error_type="invalid_request_error", message="This model's maximum context length is 8192 tokens."))
    events = await collect(handler, "hi")
    assert events[-1].result["metadata"]["error_kind"] == "context_limit"
    assert "too long for the model" in events[-1].message and len(fake_llm.requests) == 1


# -- 4. resend never duplicates ---------------------------------------------------------------


async def test_resending_after_a_failed_call_makes_the_same_request(make_handler, fake_llm, provider_kind, tmp_path):
    # the per-turn time part, fixed so the two sends can be compared
    handler = make_handler(provider_kind, pacing=Pacing(wall_clock=lambda: "2026-01-01 09:00 UTC", retry_base_delay=0.01))
    writer = SessionWriter(StoredSession(id="20260101-000000-abcdef", path=tmp_path / "20260101-000000-abcdef.jsonl", project_root=tmp_path, created=0.0))
    handler.add_observer(SessionRecorder(writer))
    fake_llm.script(Reply(text="first answer"))
    await collect(handler, "earlier question")
    fake_llm.script(HTTPError(400, "bad gateway mood"))
    failed = (await collect(handler, "the question"))[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.result["metadata"]["retracted"] is True
    fake_llm.script(Reply(text="the answer"))
    assert isinstance((await collect(handler, "the question"))[-1], ev.TurnCompleted)
    failed_request, resent = fake_llm.requests[1], fake_llm.requests[2]
    assert resent.body["messages"] == failed_request.body["messages"]
    import json

    assert json.dumps(resent.body["messages"]).count("the question") == 1, "the question is sent once"
    contents = [m["content"] for m in handler.conversation_history]
    assert contents == ["earlier question", "first answer", "the question", "the answer"]
    writer.close()
    loaded = load_session(tmp_path / "20260101-000000-abcdef.jsonl")
    assert [m["content"] for m in loaded.messages] == contents
    from core.sessions.index import summarize

    assert summarize(tmp_path)["20260101-000000-abcdef"]["turns"] == 2, "the resent question is one turn in /sessions"


# -- headless: -p exits 1 on an incomplete answer ---------------------------------------------


@pytest.mark.parametrize("output_format", ["text", "jsonl"])
async def test_print_mode_fails_on_a_clean_close_mid_answer(fake_llm, tmp_path, provider_kind, output_format):
    import json

    from tests.core.test_cli import run_cli

    fake_llm.script(CleanClose(Reply(text=ANSWER, chunk=12), after_events=4 if provider_kind == "anthropic" else 3))
    out = run_cli(["-p", "explain", "--provider", provider_kind, "--output-format", output_format], tmp_path)
    assert out.returncode == 1
    assert out.stderr == "assistant-tui: The connection closed before the answer finished; 24 characters arrived; send again to retry.\n"
    if output_format == "text":
        assert out.stdout == "", "a partial answer is never printed as if it were the answer"
        return
    events = [json.loads(line) for line in out.stdout.splitlines()]
    message = next(e for e in events if e["kind"] == "assistant_message")
    assert (message["content"], message["interrupted"], message["stop_reason"]) == (ANSWER[:24], True, "incomplete")
    assert events[-1]["kind"] == "turn_failed" and events[-1]["reason"] == "incomplete_response"


def test_print_mode_says_when_the_answer_hit_the_output_limit(fake_llm, tmp_path):
    from tests.core.test_cli import run_cli

    fake_llm.script(Reply(text="Cut here", stop_reason="length"))
    out = run_cli(["-p", "long", "--provider", "openai"], tmp_path)
    assert (out.returncode, out.stdout) == (0, "Cut here\n")
    assert out.stderr == (
        "assistant-tui: the answer stopped at the model's output limit (max_tokens); run `assistant-tui -c -p /continue` for the rest\n"
    )
