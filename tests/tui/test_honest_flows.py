"""Issue 11 in the app: the trace's states follow what really happens, answers say how they ended.

The real engine against the fake server where the engine decides (approvals, counts,
turns, resume); a scripted handler where only the rendering is under test.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.text import Text

from core import events as ev
from core.config import Settings
from core.types import ToolCall, ok_result
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.tui.conftest import ECHO_SPEC, SIZE, TOUCH_SPEC, FixedClock, Gate, ScriptedHandler, finish_turn, send, started, text_reply, wait_for, widgets
from tui.app import AssistantApp, make_app
from tui.widgets.chat import AssistantMessage, ThinkingBlock, ToolCallLine
from tui.widgets.trace import ToolCallView, TurnHeader


async def test_trace_moves_to_running_the_moment_the_user_answers(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    release = asyncio.Event()

    async def slow_touch(params: dict[str, Any]) -> Any:
        await release.wait()
        return ok_result(f"created {params['path']}")

    real_app.handler.register_tool(TOUCH_SPEC, slow_touch)
    fake_llm.script(Reply(tools=[Tool("touch", {"path": "a.txt"})]), Reply(text="Done."))
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, "create a.txt")
        await wait_for(pilot, lambda: type(real_app.screen).__name__ == "ApprovalScreen", timeout=30)
        (record,) = real_app.trace.records.values()
        line = widgets(real_app, ToolCallLine)[-1]
        await wait_for(pilot, lambda: (record.status, line.status) == ("pending", "pending"))  # the chat line follows the event
        assert real_app.status.metrics["tool_calls_this_turn"] == 1  # counted when it started, not when it ends
        await pilot.press("y")
        await wait_for(pilot, lambda: record.status == "running")  # the tool is still blocked here
        assert line.status == "running" and record.waited is not None
        release.set()
        await finish_turn(pilot)
        assert record.status == "success" and record.decision == "allow once"


async def test_calls_are_grouped_under_user_turns(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    """Two user turns, four model responses: the status line says turn 2, the trace has two headers."""
    fake_llm.script(
        Reply(tools=[Tool("echo", {"text": "a"})]),
        Reply(text="A"),
        Reply(tools=[Tool("echo", {"text": "b"})]),
        Reply(text="B"),
    )
    async with real_app.run_test(size=SIZE) as pilot:
        for query in ("first", "second"):
            await send(pilot, query)
            await finish_turn(pilot)
        headers = list(real_app.trace.query(TurnHeader))
        assert [h.number for h in headers] == [1, 2]
        assert [r.turn for r in real_app.trace.records.values()] == [1, 2]
        order = [type(child).__name__ for child in real_app.trace.children]
        assert order == ["TurnHeader", "ToolCallView", "TurnHeader", "ToolCallView"]
        assert real_app.status.metrics["user_turns"] == 2 and real_app.status.metrics["turns"] == 4
        assert " turn 2 " in str(real_app.status.render())


async def test_new_calls_come_into_view_after_one_was_expanded(settings: Settings, project: Path) -> None:
    calls = [ToolCall(id=f"c{i}", name="echo", parameters={"text": f"{i}" * 40}) for i in range(14)]
    gate = Gate()
    script: list[Any] = [ev.TurnStarted(query="", subtask_id="s")]
    for index, call in enumerate(calls):
        if index == 8:
            script.append(gate)
        script += [ev.ToolCallStarted(call=call, started_at=0), ev.ToolCallFinished(call=call, status="success", result="x\n" * 30, duration=0.1)]
    script += text_reply("done")[1:]
    app = make_app(settings, handler=ScriptedHandler(script, project_root=project, settings=settings), clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await wait_for(pilot, lambda: len(app.trace.records) == 8)
        await pilot.press("ctrl+t")
        first = next(iter(app.trace.query(ToolCallView)))
        first.focus()
        await pilot.press("enter")  # expanded: the trace scrolls to it, away from the bottom
        await wait_for(pilot, lambda: first.expanded and app.trace.scroll_y < app.trace.max_scroll_y)
        gate.open()
        await finish_turn(pilot)
        await wait_for(pilot, lambda: app.trace.scroll_y >= app.trace.max_scroll_y, what="the trace follows the new calls")
        newest = list(app.trace.query(ToolCallView))[-1]
        assert newest.record.call.id == "c13" and newest.region.y >= app.trace.region.y
        newest.focus()
        await pilot.press("k", "up")  # the previous calls, from the newest one
        assert app.focused is not None and app.focused.record.call.id == "c11"
        await pilot.press("j", "down", "j")  # the next ones, stopping at the newest
        assert app.focused.record.call.id == "c13"


async def test_continue_is_sent_to_the_model(settings: Settings, project: Path) -> None:
    handler = ScriptedHandler(lambda query: text_reply("…and the rest."), project_root=project, settings=settings)
    app = make_app(settings, handler=handler, clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/continue")
        await finish_turn(pilot)
        assert handler.queries == ["/continue"]
        assert widgets(app, AssistantMessage)[-1].text == "…and the rest."


async def test_thinking_expands_with_f3_and_a_click(settings: Settings, project: Path) -> None:
    script = [
        ev.TurnStarted(query="", subtask_id="s"),
        ev.ThinkingDelta(text="Check src/auth.py first."),
        *[ev.AssistantMessage(content=step.content, final=True, thinking=({"type": "thinking", "thinking": "Check src/auth.py first."},))
          if isinstance(step, ev.AssistantMessage) else step for step in text_reply("It is in src/auth.py.")[1:]],
    ]
    app = make_app(settings, handler=ScriptedHandler(script, project_root=project, settings=settings), clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "where?")
        await finish_turn(pilot)
        (block,) = widgets(app, ThinkingBlock)
        assert block.collapsed and block.text == "Check src/auth.py first." and block.finished
        assert "Check src/auth.py first." in app.engine.session.transcript_markdown()  # f2 and /export have it
        await pilot.press("f3")
        assert not block.collapsed
        await pilot.click(block.query_one("CollapsibleTitle"))
        assert block.collapsed


async def test_refusal_and_incomplete_are_labelled_apart_from_interruption(settings: Settings, project: Path) -> None:
    def script(query: str) -> list[Any]:
        stop = {"refuse": "refusal", "cut": "incomplete"}[query]
        failed = ev.TurnFailed(reason="incomplete_response", message="The connection closed…", result={"status": "FAILED", "content": "", "metadata": {}})
        return [
            ev.TurnStarted(query="", subtask_id="s"),
            ev.TextDelta(text="Partial"),
            ev.AssistantMessage(content="Partial", interrupted=stop == "incomplete", stop_reason=stop),
            failed if stop == "incomplete" else text_reply("")[-1],
        ]

    app = make_app(settings, handler=ScriptedHandler(script, project_root=project, settings=settings), clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        for query in ("refuse", "cut"):
            await send(pilot, query)
            await finish_turn(pilot)
        refused, cut = widgets(app, AssistantMessage)
        assert refused.stop_label.startswith("⊘ refused") and not refused.interrupted
        assert cut.stop_label.startswith("■ incomplete") and cut.interrupted
        assert app.prompt.text == "cut"  # sent again with Enter


async def test_resume_shows_the_wait_and_the_turns(project: Path, fake_llm: FakeLLM) -> None:
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0)
    fake_llm.script(Reply(tools=[Tool("touch", {"path": "n.txt"})]), Reply(text="Made."), Reply(tools=[Tool("echo", {"text": "b"})]), Reply(text="B"))
    from core.app import Application
    from core.handlers.pacing import Pacing

    clock = FixedClock()
    first = make_app(settings, application=Application(settings, pacing=Pacing(clock=clock)), clock=FixedClock())

    def touch(params: dict[str, Any]) -> Any:
        clock.advance(1.6)
        return ok_result("made")

    first.handler.register_tool(TOUCH_SPEC, touch)
    first.handler.register_tool(ECHO_SPEC, lambda params: params["text"].upper())
    async with first.run_test(size=SIZE) as pilot:
        await send(pilot, "make n.txt")
        await wait_for(pilot, lambda: type(first.screen).__name__ == "ApprovalScreen", timeout=30)
        clock.advance(4.1)
        await pilot.press("y")
        await finish_turn(pilot)
        await send(pilot, "shout b")
        await finish_turn(pilot)

    second = make_app(settings, clock=FixedClock(), continue_session=True)
    async with second.run_test(size=SIZE) as pilot:
        await started(pilot)
        touch_record, echo_record = second.trace.records.values()
        assert (touch_record.turn, echo_record.turn) == (1, 2)
        assert touch_record.waited == 4.1 and touch_record.duration == 1.6
        assert [h.number for h in second.trace.query(TurnHeader)] == [1, 2]
        assert second.status.metrics["user_turns"] == 2


async def test_esc_while_awaiting_approval_shows_the_wait_not_a_run(settings: Settings, project: Path) -> None:
    call = ToolCall(id="t1", name="touch", parameters={"path": "x"})
    script = [ev.TurnStarted(query="", subtask_id="s"), ev.ToolCallStarted(call=call, started_at=0), ev.ApprovalRequested(call=call), Gate()]
    clock = FixedClock()
    app = make_app(settings, handler=ScriptedHandler(script, project_root=project, settings=settings), clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "touch x")
        await wait_for(pilot, lambda: app.trace.records.get("t1") is not None and app.trace.records["t1"].status == "pending")
        clock.advance(3.0)
        await pilot.press("escape")
        await finish_turn(pilot)
        record = app.trace.records["t1"]
        assert (record.status, record.duration, record.waited, record.decision) == ("interrupted", None, 3.0, "no answer")


async def test_a_read_answered_with_a_pointer_says_so_in_the_trace(settings: Settings, project: Path) -> None:
    fresh, again = ToolCall(id="r1", name="readFile", parameters={"path": "app.py"}), ToolCall(id="r2", name="readFile", parameters={"path": "app.py"})
    pointer = "[Not sent again: app.py lines 1-80 are unchanged since the result of readFile call r1 earlier in this conversation]"
    script: list[Any] = [ev.TurnStarted(query="", subtask_id="s")]
    for call, result, meta in ((fresh, "     1\tdef f0", {}), (again, pointer, {"unchanged_since": "r1"})):
        script += [ev.ToolCallStarted(call=call, started_at=0), ev.ToolCallFinished(call=call, status="success", result=result, duration=0.1, metadata=meta)]
    script += text_reply("read")[1:]
    app = make_app(settings, handler=ScriptedHandler(script, project_root=project, settings=settings), clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "read twice")
        await finish_turn(pilot)
        first, second = (" ".join(part.plain for part in view.render().renderables if isinstance(part, Text)) for view in app.trace.query(ToolCallView))
        assert "not resent" not in first and "unchanged: not resent" in second
