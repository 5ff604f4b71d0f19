"""The multi-step tool loop, end to end through the real SDKs and the fake server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core import events as ev
from core.tools.safe_exec import FILE_PATH_COMMAND_SPEC
from core.types import Decision, error_result
from tests.core.conftest import assert_history_valid
from tests.fake_llm import HTTPError, Reply, Tool


async def collect(handler: Any, query: str) -> list[Any]:
    return [event async for event in handler.stream_query(query)]


def kinds(events: list[Any]) -> list[str]:
    return [e.kind for e in events if e.kind not in ("text_delta", "metrics")]


async def test_plain_answer(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind)
    fake_llm.script(Reply(text="Hello! How can I help?"))
    events = await collect(handler, "hi")
    assert kinds(events) == ["turn_started", "assistant_message", "turn_completed"]
    assert "".join(e.text for e in events if isinstance(e, ev.TextDelta)) == "Hello! How can I help?"
    result = events[-1].result
    assert result["status"] == "COMPLETE"
    assert result["content"] == "Hello! How can I help?"
    assert set(result["metadata"]) >= {"subtask_id", "relevant_files", "resource_metrics"}
    assert [m["role"] for m in handler.conversation_history] == ["user", "assistant"]
    assert all("timestamp" in m for m in handler.conversation_history)
    # the request carried the tools and the system prompt
    request = fake_llm.requests[0]
    assert "echo" in request.tool_names and "executeFilePathCommand" in request.tool_names
    assert "cite the file paths" in request.system
    # executeFilePathCommand is described to the model by the executor's own spec (one definition)
    tools = request.body["tools"]
    sent = next(t if provider_kind == "anthropic" else t["function"] for t in tools if (t.get("name") or t["function"]["name"]) == "executeFilePathCommand")
    assert sent["description"] == FILE_PATH_COMMAND_SPEC["description"]


async def test_one_tool_round_trip(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind)
    fake_llm.script(Reply(text="Checking.", tools=[Tool("echo", {"text": "abc"})]), Reply(text="It is ABC."))
    events = await collect(handler, "shout abc")
    assert kinds(events) == [
        "turn_started",
        "assistant_message",
        "tool_call_started",
        "tool_call_finished",
        "assistant_message",
        "turn_completed",
    ]
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert (finished.status, finished.result) == ("success", "ABC")
    assert finished.duration >= 0
    intermediate = [e for e in events if isinstance(e, ev.AssistantMessage)]
    assert [m.final for m in intermediate] == [False, True]
    # the second request carries the tool request and its result in the wire format
    second = fake_llm.requests[1]
    if provider_kind == "anthropic":
        assert second.messages[-2]["content"][-1]["type"] == "tool_use"
        result_block = {k: v for k, v in second.messages[-1]["content"][0].items() if k != "cache_control"}
        assert result_block == {"type": "tool_result", "tool_use_id": finished.call.id, "content": "ABC"}
    else:
        assert second.messages[-2]["tool_calls"][0]["function"]["name"] == "echo"
        assert second.messages[-1] == {"role": "tool", "tool_call_id": finished.call.id, "content": "ABC"}
    assert [m["role"] for m in handler.conversation_history] == ["user", "assistant", "tool", "assistant"]
    assert_history_valid(handler.conversation_history)


async def test_chain_of_tools_over_several_model_calls(make_handler, fake_llm):
    handler = make_handler()
    fake_llm.script(
        Reply(tools=[Tool("echo", {"text": "one"})]),
        Reply(text="next", tools=[Tool("echo", {"text": "two"})]),
        Reply(tools=[Tool("echo", {"text": "three"})]),
        Reply(text="ONE TWO THREE"),
    )
    result = await handler.handle_query("chain")
    assert result["status"] == "COMPLETE" and result["content"] == "ONE TWO THREE"
    assert len(fake_llm.requests) == 4
    tool_results = [m["content"] for m in handler.conversation_history if m["role"] == "tool"]
    assert tool_results == ["ONE", "TWO", "THREE"]
    metrics = result["metadata"]["resource_metrics"]
    assert metrics["turns"] == 4 and metrics["tool_calls_this_turn"] == 3
    assert_history_valid(handler.conversation_history)


async def test_two_tool_calls_in_one_message(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind)
    fake_llm.script(Reply(tools=[Tool("echo", {"text": "a"}), Tool("echo", {"text": "b"})]), Reply(text="A and B"))
    events = await collect(handler, "two")
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert [f.result for f in finished] == ["A", "B"]
    second = fake_llm.requests[1]
    if provider_kind == "anthropic":
        results = second.messages[-1]["content"]
        assert [b["tool_use_id"] for b in results] == [f.call.id for f in finished]
    else:
        assert [m["tool_call_id"] for m in second.messages[-2:]] == [f.call.id for f in finished]
    assert_history_valid(handler.conversation_history)


async def test_max_calls_guard_ends_a_runaway_loop(make_handler, fake_llm):
    handler = make_handler(max_tool_calls=3)
    fake_llm.responder = lambda request: Reply(tools=[Tool("echo", {"text": "again"}), Tool("echo", {"text": "more"})])
    events = await collect(handler, "loop forever")
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.reason == "resource_exhaustion"
    assert "3 tool calls" in failed.message
    assert failed.result["metadata"]["resource_metrics"]["tool_calls_this_turn"] == 3
    assert len(fake_llm.requests) == 2  # the guard stopped the loop
    statuses = [e.status for e in events if isinstance(e, ev.ToolCallFinished)]
    assert statuses == ["success", "success", "success", "not_run"]
    assert_history_valid(handler.conversation_history)
    # the next turn works and its request is valid
    fake_llm.responder = lambda request: Reply(text="fine")
    assert (await handler.handle_query("stop"))["content"] == "fine"


async def test_unknown_tool_goes_back_to_the_model(make_handler, fake_llm):
    handler = make_handler()
    fake_llm.script(Reply(tools=[Tool("deleteEverything", {})]), Reply(text="sorry"))
    events = await collect(handler, "x")
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert finished.status == "error" and "Unknown tool 'deleteEverything'" in finished.result
    block = fake_llm.requests[1].messages[-1]["content"][0]
    assert block["is_error"] is True and "Available tools" in block["content"]
    assert events[-1].kind == "turn_completed"


async def test_bad_arguments_are_reported_to_the_model(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind)
    fake_llm.script(Reply(tools=[Tool("echo", {"txt": 5})]), Reply(text="retrying"))
    events = await collect(handler, "x")
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert finished.status == "error" and "'text' is a required property" in finished.result
    assert events[-1].kind == "turn_completed"


async def test_malformed_argument_json_never_runs_the_tool(make_handler, fake_llm):
    handler = make_handler("openai")
    ran: list[dict[str, Any]] = []
    handler.register_tool({"name": "record", "input_schema": {"type": "object"}}, lambda p: ran.append(p) or "ran")
    fake_llm.script(Reply(tools=[Tool("record", raw_json='{"a": ')]), Reply(text="ok"))
    events = await collect(handler, "x")
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert finished.status == "error" and "not valid JSON" in finished.result
    assert ran == []


async def test_a_tool_that_raises_is_an_error_result(make_handler, fake_llm):
    handler = make_handler()

    def boom(params: dict[str, Any]) -> str:
        raise RuntimeError("disk on fire")

    handler.register_tool({"name": "boom", "input_schema": {"type": "object"}}, boom)
    fake_llm.script(Reply(tools=[Tool("boom", {})]), Reply(text="it failed"))
    events = await collect(handler, "x")
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert finished.status == "error"
    assert finished.result == "Error executing tool boom: disk on fire"
    assert events[-1].kind == "turn_completed"


async def test_a_tool_that_times_out_is_an_error_result(make_handler, fake_llm):
    handler = make_handler(tool_timeout=0.2)

    async def slow(params: dict[str, Any]) -> str:
        await asyncio.sleep(30)
        return "never"

    handler.register_tool({"name": "slow", "input_schema": {"type": "object"}}, slow)
    fake_llm.script(Reply(tools=[Tool("slow", {})]), Reply(text="too slow"))
    events = await collect(handler, "x")
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert finished.status == "error" and "timed out after 0.2" in finished.result
    assert events[-1].kind == "turn_completed"


async def test_execute_tool_directly(make_handler):
    handler = make_handler()
    assert (await handler._execute_tool("echo", {"text": "x"}))["content"] == "X"
    from core.handlers.base import ToolNotFound

    with pytest.raises(ToolNotFound):
        await handler._execute_tool("nope", {})
    assert handler.register_tool({"description": "no name"}, lambda p: p) is False
    handler.register_tool({"name": "fails"}, lambda p: error_result("bad"))
    assert (await handler._execute_tool("fails", {}))["status"] == "error"


async def _cancel_when(handler: Any, query: str, predicate: Any) -> list[Any]:
    seen: list[Any] = []
    reached = asyncio.Event()

    async def consume() -> None:
        async for event in handler.stream_query(query):
            seen.append(event)
            if predicate(event):
                reached.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(reached.wait(), 30)  # a hang detector
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return seen


async def test_cancel_mid_stream_keeps_partial_text(make_handler, fake_llm):
    handler = make_handler()
    fake_llm.script(Reply(text="word " * 400, chunk=5, tokens_per_second=200))
    seen = await _cancel_when(handler, "long answer", lambda e: isinstance(e, ev.TextDelta) and len(e.text) and True)
    partial = "".join(e.text for e in seen if isinstance(e, ev.TextDelta))
    last = handler.conversation_history[-1]
    assert last["role"] == "assistant" and last["interrupted"] is True
    assert last["content"].startswith(partial) and 0 < len(last["content"]) < 2000
    fake_llm.script(Reply(text="next works"))
    assert (await handler.handle_query("again"))["content"] == "next works"
    wire = fake_llm.requests[-1].messages
    assert "[interrupted by the user]" in wire[1]["content"][0]["text"]


async def test_cancel_mid_tool_answers_the_call(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind)
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def hang(params: dict[str, Any]) -> str:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    handler.register_tool({"name": "hang", "input_schema": {"type": "object"}}, hang)
    fake_llm.script(Reply(text="running", tools=[Tool("hang", {})]))
    await _cancel_when(handler, "x", lambda e: isinstance(e, ev.ToolCallStarted))
    assert cancelled.is_set(), "the running tool was not cancelled"
    assert_history_valid(handler.conversation_history)
    synthetic = handler.conversation_history[-1]
    assert synthetic["role"] == "tool" and synthetic["is_error"] and "interrupted" in synthetic["content"]
    fake_llm.script(Reply(text="ready"))
    assert (await handler.handle_query("next"))["content"] == "ready"
    assert_history_valid(handler.conversation_history)


async def test_context_warning_at_80_percent_and_refusal_at_100(make_handler, fake_llm):
    # Settings are read-only after start (issue 24): a first handler with a large window measures
    # what the conversation holds after the first answer (the prompt the provider reported plus the
    # answer); a window of which that is 80 % puts the second request (it adds a question) past 80 %
    # and the first (without the answer) below it.
    probe = make_handler()
    fake_llm.script(Reply(text="ok " * 40))
    await collect(probe, "hello")
    window = int(probe.get_resource_metrics()["estimated_tokens"] / 0.8)

    handler = make_handler(context_window=window)
    fake_llm.script(Reply(text="ok " * 40), Reply(text="ok"))
    first = await collect(handler, "hello")
    assert not [e for e in first if isinstance(e, ev.Warning)]
    # the next request: the prompt the provider reported, plus an estimate of what was added since
    events = await collect(handler, "hello")
    warnings = [e for e in events if isinstance(e, ev.Warning)]
    assert [w.code for w in warnings] == ["context_80"]
    assert events[-1].kind == "turn_completed"

    tiny = make_handler(context_window=100)
    sent = len(fake_llm.requests)
    events = await collect(tiny, "hello again")
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.reason == "resource_exhaustion"
    assert "context window" in failed.message.lower() and "not sent" in failed.message
    assert failed.result["metadata"]["resource"] == "context_window"
    assert len(fake_llm.requests) == sent  # nothing was sent


async def test_turn_limit(make_handler, fake_llm):
    handler = make_handler(max_turns=2)
    fake_llm.responder = lambda request: Reply(tools=[Tool("echo", {"text": "x"})])
    events = await collect(handler, "x")
    assert isinstance(events[-1], ev.TurnFailed)
    assert events[-1].reason == "resource_exhaustion" and "Turn limit" in events[-1].message
    assert len(fake_llm.requests) == 2
    assert_history_valid(handler.conversation_history)


async def test_plan_returns_parsed_steps(make_handler, fake_llm):
    handler = make_handler()
    fake_llm.script(Reply(text="Here is the plan:\n<plan>\n1. Read auth.py\n2. Add a docstring\n3. Run the tests\n</plan>"))
    result = await handler.handle_query("/plan document auth")
    assert result["metadata"]["template"] == "plan"
    assert result["metadata"]["plan_steps"] == ["Read auth.py", "Add a docstring", "Run the tests"]
    assert "<plan>" in fake_llm.requests[0].system
    # the /plan instructions travel with the turn's message, so the system prompt stays the same
    assert "asked for a plan" in fake_llm.requests[0].last_user_context()
    assert "asked for a plan" not in fake_llm.requests[0].system


async def test_provider_errors_end_the_turn_with_a_clear_message(make_handler, fake_llm):
    handler = make_handler()
    fake_llm.script(HTTPError(401, "invalid x-api-key"))
    events = await collect(handler, "hi")
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.reason == "llm_error"
    assert "API key" in failed.message and "sk-ant-test" not in failed.message
    assert failed.result["metadata"]["resource_metrics"]["turns"] == 0


async def test_a_429_with_retry_after_is_retried_once_and_shown(make_handler, fake_llm, provider_kind):
    handler = make_handler(provider_kind, max_retries=2)
    fake_llm.script(HTTPError(429, "slow down", headers={"retry-after": "0"}), Reply(text="after retry"))
    events = await collect(handler, "hi")
    retries = [e for e in events if isinstance(e, ev.Warning) and e.code == "retry"]
    assert len(retries) == 1 and "Rate limited" in retries[0].message and "0.0s" in retries[0].message
    assert events[-1].result["content"] == "after retry"
    assert len(fake_llm.requests) == 2
    assert [m["role"] for m in handler.conversation_history] == ["user", "assistant"]


async def test_overloaded_every_time_gives_up_with_a_clear_error(make_handler, fake_llm):
    handler = make_handler(max_retries=2)
    fake_llm.script(*[HTTPError(529, "Overloaded") for _ in range(5)])
    events = await collect(handler, "hi")
    assert [e.code for e in events if isinstance(e, ev.Warning)] == ["retry", "retry"]
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.reason == "llm_error" and "overloaded" in failed.message
    assert len(fake_llm.requests) == 3
    # nothing was answered: the question is taken back out of the history (the UI puts it back in the prompt)
    assert failed.result["metadata"]["retracted"] is True and handler.conversation_history == []


@pytest.mark.parametrize("status", [400, 401, 413])
async def test_client_errors_are_not_retried(make_handler, fake_llm, status):
    handler = make_handler(max_retries=2)
    fake_llm.script(HTTPError(status, "nope"))
    events = await collect(handler, "hi")
    assert isinstance(events[-1], ev.TurnFailed) and len(fake_llm.requests) == 1
    assert not [e for e in events if isinstance(e, ev.Warning)]


async def test_a_storm_of_429s_spends_one_shared_budget(make_handler, fake_llm):
    from core.handlers.pacing import Pacing
    from core.handlers.retry import RetryBudget

    handler = make_handler(max_retries=3, pacing=Pacing(retry_base_delay=0.01, retry_budget=RetryBudget(capacity=4, tokens=4, refill_per_second=0)))
    fake_llm.responder = lambda request: HTTPError(429, "slow down", headers={"retry-after": "0"})
    for n in range(6):
        events = await collect(handler, f"try {n}")
        assert isinstance(events[-1], ev.TurnFailed) and "Rate limited" in events[-1].message
    assert len(fake_llm.requests) == 6 + 4  # one request per turn plus the shared budget, not 6 * 4
    assert handler.conversation_history == []  # no duplicate turns: each unanswered question was taken back


async def test_approval_flow(make_handler, fake_llm):
    handler = make_handler()
    handler.register_tool({"name": "edit", "requires_approval": True, "input_schema": {"type": "object"}}, lambda p: "edited")
    answers = [Decision.DENY, Decision.ALLOW_SESSION]
    asked: list[Any] = []

    async def approve(request: Any) -> Decision:
        asked.append(request)
        return answers.pop(0)

    handler.approvals.set_approver(approve)
    fake_llm.script(Reply(tools=[Tool("edit", {"file": "a.py"})]), Reply(tools=[Tool("edit", {})]), Reply(tools=[Tool("edit", {})]), Reply(text="done"))
    events = await collect(handler, "edit")
    decisions = [e.decision for e in events if isinstance(e, ev.ApprovalRecorded)]
    assert decisions == [Decision.DENY, Decision.ALLOW_SESSION, Decision.ALLOW_SESSION]
    assert len(asked) == 2 and "file: a.py" in asked[0].detail
    statuses = [e.status for e in events if isinstance(e, ev.ToolCallFinished)]
    assert statuses == ["denied", "success", "success"]


async def test_headless_style_denial_without_approver(make_handler, fake_llm):
    handler = make_handler()
    handler.register_tool({"name": "edit", "requires_approval": True, "input_schema": {"type": "object"}}, lambda p: "edited")
    fake_llm.script(Reply(tools=[Tool("edit", {})]), Reply(text="could not edit"))
    events = await collect(handler, "edit")
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert finished.status == "denied" and "nobody can approve" in finished.result


async def test_reset_clears_history_and_subtask(make_handler, fake_llm):
    handler = make_handler()
    fake_llm.script(Reply(text="a"), Reply(text="b"))
    first = await handler.handle_query("one")
    second = await handler.handle_query("two")
    assert first["metadata"]["subtask_id"] == second["metadata"]["subtask_id"]
    handler.reset_conversation()
    assert handler.conversation_history == [] and handler.active_subtask_id is None and handler.data_context is None


async def test_history_carries_over_to_the_next_turn(make_handler, fake_llm):
    handler = make_handler()
    fake_llm.script(Reply(tools=[Tool("echo", {"text": "x"})]), Reply(text="X"), Reply(text="again"))
    await handler.handle_query("one")
    await handler.handle_query("two")
    wire = fake_llm.requests[-1].messages
    assert [m["role"] for m in wire] == ["user", "assistant", "user", "assistant", "user"]
    assert any(b.get("type") == "tool_use" for b in wire[1]["content"])
    assert wire[2]["content"][0]["type"] == "tool_result"


async def test_huge_tool_results_are_capped_everywhere(make_handler, fake_llm):
    handler = make_handler(max_tool_result_chars=1000)
    handler.register_tool({"name": "flood", "input_schema": {"type": "object"}}, lambda p: "\n".join(f"line {n}" for n in range(100_000)))
    fake_llm.script(Reply(tools=[Tool("flood", {})]), Reply(text="that was a lot"))
    events = await collect(handler, "flood me")
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert len(finished.result) < 1200 and finished.result.startswith("line 0\nline 1\n")
    assert "[output truncated:" in finished.result and "lines) not shown]" in finished.result
    assert finished.metadata["full_chars"] > 600_000
    sent = fake_llm.requests[1].messages[-1]["content"][0]["content"]
    assert sent == finished.result == handler.conversation_history[2]["content"]


async def test_a_consumer_that_raises_mid_stream_leaves_the_handler_free(make_handler, fake_llm):
    """Closing the stream (``contextlib.aclosing``) closes every stage of the turn at once: no 'busy' afterwards."""
    import contextlib

    handler = make_handler()
    fake_llm.script(Reply(text="word " * 200, chunk=5, tokens_per_second=400), Reply(text="next works"))
    with pytest.raises(RuntimeError):
        async with contextlib.aclosing(handler.stream_query("first")) as events:
            async for event in events:
                if isinstance(event, ev.TextDelta):
                    raise RuntimeError("the consumer broke")
    last = handler.conversation_history[-1]
    assert last["role"] == "assistant" and last["interrupted"] is True
    assert (await handler.handle_query("again"))["content"] == "next works"


async def test_observers_record_off_the_event_loop(make_handler, fake_llm):
    """The session recorder's write and fsync of each record never run on the event loop's thread."""
    import threading

    loop_thread = threading.get_ident()
    seen: list[tuple[str, bool]] = []

    class Observer:
        def record(self, event):
            seen.append((event.kind, threading.get_ident() == loop_thread))
            return []

    handler = make_handler()
    handler.add_observer(Observer())
    fake_llm.script(Reply(text="Checking.", tools=[Tool("echo", {"text": "abc"})]), Reply(text="Done."))
    await collect(handler, "shout abc")
    on_loop = {kind for kind, inline in seen if inline}
    assert on_loop == {"text_delta"}, seen
    assert {"turn_started", "assistant_message", "tool_call_finished", "turn_completed"} <= {kind for kind, _ in seen}


async def test_an_interruption_is_recorded_off_the_event_loop(make_handler, fake_llm):
    """Esc: the partial answer and the interruption record are written in a worker thread, like every other record."""
    import threading

    loop_thread = threading.get_ident()
    seen: list[tuple[str, bool]] = []

    class Observer:
        def record(self, event):
            seen.append((event.kind, threading.get_ident() == loop_thread))
            return []

        def interrupted(self):
            seen.append(("interrupted", threading.get_ident() == loop_thread))
            return []

    handler = make_handler()
    handler.add_observer(Observer())
    fake_llm.script(Reply(text="word " * 400, chunk=5, tokens_per_second=200))
    await _cancel_when(handler, "long answer", lambda e: isinstance(e, ev.TextDelta))
    assert ("assistant_message", False) in seen and seen[-1] == ("interrupted", False), seen
