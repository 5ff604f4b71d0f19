"""A long session resumes to the same chat while building only about what the chat keeps (issue 23, history scaling)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import tui.sessions
from core import events as ev
from core.app import Application
from core.config import Settings
from core.types import ToolCall
from tests.fake_llm import FakeLLM
from tests.tui.conftest import SIZE, FixedClock, started
from tui.app import make_app


def answer(index: int) -> str:
    """Answers of different shapes: one to four paragraphs, a list, a code block."""
    parts = [f"Answer {index}, paragraph {n}." for n in range(1 + index % 4)]
    if index % 3 == 0:
        parts.append(f"- item {index}\n- another")
    if index % 5 == 0:
        parts.append(f"```python\nprint({index})\n```")
    return "\n\n".join(parts)


def write_session(settings: Settings, turns: int) -> None:
    """A transcript of ``turns`` earlier turns, written by the app's own recorder from the events a live turn streams."""
    application = Application(settings)
    application.session_state.start()
    record = application.session_state.recorder.record
    for index in range(turns):
        call = ToolCall(id=f"toolu_{index:04d}", name="readFile", parameters={"path": f"src/{index}.py"})
        for event in (
            ev.TurnStarted(query=f"question {index}", subtask_id=""),
            ev.AssistantMessage(content="Reading it." if index % 2 else "", tool_calls=(call,)),
            ev.ToolCallStarted(call=call, started_at=time.time()),
            ev.ToolCallFinished(call=call, status="success", result=f"line {index}", duration=0.01),
            ev.AssistantMessage(content=answer(index), final=True),
            ev.TurnCompleted(result={"status": "COMPLETE", "content": answer(index), "metadata": {}}),
        ):
            record(event)
    application.session_state.close()


def describe(widget: Any) -> tuple[str, str]:
    """What a chat item shows: its kind and its text (a tool line: its call and status)."""
    call = getattr(widget, "call", None)
    if call is not None:
        return type(widget).__name__, f"{call.name} {call.parameters} {getattr(widget, 'status', '')}"
    return type(widget).__name__, str(getattr(widget, "text", ""))


async def resumed(settings: Settings) -> tuple[list[tuple[str, str]], int]:
    """The chat after ``--continue`` (its items, oldest first) and how many items it built only to prune them."""
    app = make_app(settings, clock=FixedClock(), continue_session=True)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        return [describe(item) for item in app.chat.items], app.chat.pruned


async def test_a_long_session_resumes_to_the_same_chat_building_only_what_it_keeps(
    project: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0)
    write_session(settings, 40)
    shown, built_and_pruned = await resumed(settings)
    monkeypatch.setattr(tui.sessions, "_window", lambda messages, *, nodes, items, limit: limit)  # every record the limit allows
    shown_from_all, built_and_pruned_from_all = await resumed(settings)
    assert shown == shown_from_all
    assert ("UserMessage", "question 39") in shown and ("UserMessage", "question 30") not in shown
    assert built_and_pruned < built_and_pruned_from_all / 2, (built_and_pruned, built_and_pruned_from_all)  # 5 vs 33 when written
