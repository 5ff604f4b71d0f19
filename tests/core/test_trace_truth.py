"""What the trace is told is true: approval waits apart from run time, live approval events, four outcomes.

Issue 11 section 5. The real loop against the fake server; a manual clock measures
durations (no wall-clock assertions).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from core import events as ev
from core.handlers.calls import tool_status
from core.handlers.pacing import Pacing
from core.types import Decision, error_result, ok_result
from tests.fake_llm import Reply, Tool

EDIT_SPEC = {"name": "edit", "requires_approval": True, "input_schema": {"type": "object"}}


class ManualClock:
    """A monotonic clock moved by the approver and the tool (what the handler measures with)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def finished(events: list[Any]) -> list[ev.ToolCallFinished]:
    return [e for e in events if isinstance(e, ev.ToolCallFinished)]


async def test_approval_wait_is_reported_apart_from_the_run(make_handler, fake_llm, provider_kind):
    """The user took 4.1 s to answer, the tool ran 1.6 s: the events say exactly that."""
    clock = ManualClock()
    handler = make_handler(provider_kind, pacing=Pacing(clock=clock, retry_base_delay=0.01))

    def edit(params: dict[str, Any]) -> Any:
        clock.now += 1.6
        return ok_result("edited")

    async def approve(request: Any) -> Decision:
        clock.now += 4.1
        return Decision.ALLOW_ONCE

    handler.register_tool(EDIT_SPEC, edit)
    handler.approvals.set_approver(approve)
    fake_llm.script(Reply(tools=[Tool("edit", {"path": "a.py"})]), Reply(text="done"))
    events = [event async for event in handler.stream_query("edit a.py")]
    kinds = [e.kind for e in events if e.kind in {"tool_call_started", "approval_requested", "approval", "tool_call_finished"}]
    assert kinds == ["tool_call_started", "approval_requested", "approval", "tool_call_finished"]
    recorded = next(e for e in events if isinstance(e, ev.ApprovalRecorded))
    assert recorded.waited == pytest.approx(4.1) and not recorded.automatic
    (call,) = finished(events)
    assert (call.status, call.duration, call.waited) == ("success", pytest.approx(1.6), pytest.approx(4.1))


async def test_approval_events_arrive_while_the_user_decides(make_handler, fake_llm, tmp_path: Path):
    """executeFilePathCommand asks inside the tool: the request reaches the consumer before the
    answer, and the decision before the command's result (they used to come after it)."""
    (tmp_path / "auth.py").write_text("def login(): ...\n")
    handler = make_handler()
    answer = asyncio.Event()
    asked: list[str] = []

    async def approve(request: Any) -> Decision:
        asked.append(request.tool_call.id)
        await answer.wait()  # only the consumer, having seen ApprovalRequested, opens it
        return Decision.ALLOW_ONCE

    handler.approvals.set_approver(approve)
    fake_llm.script(Reply(tools=[Tool("executeFilePathCommand", {"command": "ls | head auth.py"})]), Reply(text="found"))
    seen: list[str] = []

    async def consume() -> None:
        async for event in handler.stream_query("find login"):
            seen.append(event.kind)
            if isinstance(event, ev.ApprovalRequested):
                assert asked == [event.call.id] and not answer.is_set()
                answer.set()

    await asyncio.wait_for(consume(), 20)
    order = [k for k in seen if k in {"approval_requested", "approval", "tool_call_finished"}]
    assert order == ["approval_requested", "approval", "tool_call_finished"]


@pytest.mark.parametrize(
    ("command", "approval_mode", "answer", "status"),
    [
        ("ls | head auth.py", "ask", Decision.DENY, "denied"),  # the user said no
        ("ls | head auth.py", "deny", None, "denied"),  # the approval mode said no
        ("find . -name '*.py'; rm -rf /", "ask", None, "refused"),  # the policy refused it, nobody asked
        ("find . -name '*.py'", "ask", None, "success"),
    ],
)
async def test_command_outcomes_are_told_apart(make_handler, fake_llm, tmp_path: Path, command, approval_mode, answer, status):
    (tmp_path / "auth.py").write_text("def login(): ...\n")
    handler = make_handler(approval_mode=approval_mode)
    asked: list[Any] = []

    async def approve(request: Any) -> Decision:
        asked.append(request)
        return answer or Decision.DENY

    handler.approvals.set_approver(approve)
    fake_llm.script(Reply(tools=[Tool("executeFilePathCommand", {"command": command})]), Reply(text="ok"))
    events = [event async for event in handler.stream_query("look")]
    (call,) = finished(events)
    assert call.status == status, call.result
    assert bool(asked) is (answer is not None)


async def test_guard_stops_calls_as_not_run_and_failures_stay_errors(make_handler, fake_llm):
    handler = make_handler(max_tool_calls=1)

    def broken(params: dict[str, Any]) -> Any:
        raise RuntimeError("disk on fire")

    handler.register_tool({"name": "broken", "input_schema": {"type": "object"}}, broken)
    fake_llm.script(Reply(tools=[Tool("broken", {}), Tool("echo", {"text": "x"})]))
    events = [event async for event in handler.stream_query("go")]
    assert [(c.call.name, c.status) for c in finished(events)] == [("broken", "error"), ("echo", "not_run")]
    assert [e.call.name for e in events if isinstance(e, ev.ToolCallStarted)] == ["broken"]


def test_tool_status_of_results():
    assert tool_status(ok_result("x")) == "success"
    assert tool_status(error_result("boom")) == "error"
    assert tool_status(error_result("Denied: no", reason="denied")) == "denied"
    assert tool_status(error_result("Not run", reason="max_tool_calls")) == "not_run"
    assert tool_status(error_result("Refused: ;", command_status="refused", decision="")) == "refused"
    assert tool_status(error_result("declined", command_status="refused", decision="deny")) == "denied"
    assert tool_status(error_result("exit 1", command_status="error")) == "error"


async def test_user_turns_are_counted_apart_from_model_responses(make_handler, fake_llm):
    """SPEC 4's ``turns`` counts model responses; ``user_turns`` counts what the user sent."""
    handler = make_handler()
    fake_llm.script(Reply(tools=[Tool("echo", {"text": "a"})]), Reply(text="A"), Reply(text="b"))
    await handler.handle_query("first")
    await handler.handle_query("second")
    metrics = handler.get_resource_metrics()
    assert (metrics["user_turns"], metrics["model_responses"], metrics["turns"]) == (2, 3, 3)
