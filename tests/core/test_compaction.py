"""Compaction through the real tool loop, the real SDKs and the scripted model server (issue 27).

The scripted session (:mod:`tests.scripted_session`) reads large files, answers at length
and is asked late for facts planted at its start; its model answers only from what each
request holds, and checks each request the way the vendor's API would.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from core import events as ev
from core.compaction.summary import SUMMARY_SYSTEM
from core.config import Settings
from core.handlers.pacing import Pacing
from core.handlers.passthrough import PassthroughHandler
from core.session import Session
from core.tools.files import READ_FILE_SPEC, read_file_tool
from tests.core.conftest import assert_history_valid, make_provider
from tests.fake_llm import FakeLLM, Raw, Reply, Tool
from tests.scripted_session import FACTS, PLANT, PROMPT_TOO_LONG, WINDOW, ScriptedModel, project, request_text, request_tokens, session_script


def handler_for(kind: str, fake: FakeLLM, root: Path, **settings: Any) -> PassthroughHandler:
    settings.setdefault("max_retries", 0)
    handler = PassthroughHandler(None, None, make_provider(kind, fake, max_retries=0), Settings(project_root=root, **settings), pacing=Pacing(retry_base_delay=0.01))
    handler.register_tool(READ_FILE_SPEC, lambda params: read_file_tool(params, project_root=root))
    return handler


async def run(session: Session, query: str) -> list[ev.Event]:
    return [event async for event in session.stream_query(query)]


async def test_sixty_turns_in_a_16k_window_compact_and_keep_the_early_facts(fake_llm: FakeLLM, tmp_path: Path) -> None:
    model = ScriptedModel()
    fake_llm.responder = model
    root = project(tmp_path)
    session = Session(handler_for("anthropic", fake_llm, root, context_window=WINDOW))
    await asyncio.to_thread(session.start)
    answers: dict[int, str] = {}
    compactions = []
    for turn in range(1, 61):
        events = await run(session, session_script(turn))
        assert isinstance(events[-1], ev.TurnCompleted), (turn, events[-1])
        answers[turn] = events[-1].result["content"]
        compactions += [e for e in events if isinstance(e, ev.Warning) and e.code == "compacted"]

    sizes = [request_tokens(r) for r in fake_llm.requests]
    assert max(sizes) <= WINDOW, f"a request passed the window: {max(sizes)} tokens"
    assert compactions and model.summaries, "the session never compacted"
    assert all(all(v in s for v in FACTS.values()) for s in model.summaries), "a summary lost a planted fact"
    assert answers[30] == "The launch code is AZURE-7741." and answers[60] == "The launch code is AZURE-7741."
    assert answers[45] == "The owner is Priya Natarajan."
    assert not model.problems, model.problems[:3]
    assert_history_valid(session.handler.conversation_history)
    assert re.match(r"Compacted [\d,]+ messages into a summary of [\d,]+ tokens", compactions[-1].message)
    assert compactions[-1].message.endswith("f2 shows them all.")
    # the whole conversation is still there (f2, /export): every turn's question, and markers where it was compacted
    whole = session.history
    assert [m["content"] for m in whole if m["role"] == "user" and m.get("turn")] == [session_script(t) for t in range(1, 61)]
    markdown = session.transcript_markdown()
    assert PLANT in markdown and markdown.count("Compacted ") >= len(compactions)
    view = [dict(m) for m in session.handler.conversation_history]
    session.close()

    # --continue: a new process resumes the compacted conversation, not the whole one
    fake_llm.requests.clear()
    resumed = Session(handler_for("anthropic", fake_llm, root, context_window=WINDOW))
    await asyncio.to_thread(resumed.start, continue_latest=True)
    assert [(m["role"], m.get("content")) for m in resumed.handler.conversation_history] == [(m["role"], m.get("content")) for m in view]
    assert len(resumed.history) == len(whole)
    events = await run(resumed, "what is the deadline?")
    assert events[-1].result["content"] == "The deadline is March 3rd."
    assert request_tokens(fake_llm.requests[0]) <= WINDOW and not model.problems
    resumed.close()


async def test_a_replayed_prompt_too_long_compacts_and_retries_once(fake_llm: FakeLLM, tmp_path: Path) -> None:
    model = ScriptedModel()
    fake_llm.responder = model
    handler = handler_for("anthropic", fake_llm, project(tmp_path))
    session = Session(handler)
    for turn in range(1, 9):
        events = await run(session, session_script(turn))
        assert isinstance(events[-1], ev.TurnCompleted)
    assert not model.summaries  # a 200k window: no compaction so far
    before = len(fake_llm.requests)
    fake_llm.script(Raw(PROMPT_TOO_LONG, status=400, content_type="application/json", framing="length"))
    events = await run(session, "what is the launch code?")

    assert isinstance(events[-1], ev.TurnCompleted), events[-1]
    assert events[-1].result["content"] == "The launch code is AZURE-7741."
    refused, summary, retry = fake_llm.requests[before:]
    assert SUMMARY_SYSTEM[:40] in summary.system and "AZURE-7741" in request_text(summary)
    assert request_tokens(retry) < request_tokens(refused)
    assert [e.code for e in events if isinstance(e, ev.Warning)] == ["compacted"]
    assert handler.compactor.window.source == "server" and handler.compactor.window.tokens < 200_000
    assert_history_valid(handler.conversation_history)


async def test_a_second_prompt_too_long_fails_the_turn(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """Compact and retry once: a second refusal is the user's error to see, not a loop."""
    model = ScriptedModel()
    fake_llm.responder = model
    session = Session(handler_for("anthropic", fake_llm, project(tmp_path)))
    for turn in range(1, 6):
        await run(session, session_script(turn))
    refusal = Raw(PROMPT_TOO_LONG, status=400, content_type="application/json", framing="length")
    fake_llm.script(refusal, Reply(text="summary of it all"), refusal)
    events = await run(session, "what is the launch code?")
    assert isinstance(events[-1], ev.TurnFailed) and "prompt is too long" in events[-1].message
    assert fake_llm.pending == 0


async def test_pruning_alone_costs_no_model_call_and_rereads_send_again(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """Old large reads are pruned first; a read of the same lines afterwards is sent whole, not as a pointer."""
    fake_llm.responder = ScriptedModel()
    root = project(tmp_path)
    handler = handler_for("anthropic", fake_llm, root, context_window=WINDOW)
    session = Session(handler)
    for name in ("big_1.py", "big_2.py"):
        await run(session, f"read {name}")
    assert "[Not sent again" in (await _reread(session, fake_llm, "big_1.py"))  # before: a pointer to the first read
    requests = len(fake_llm.requests)
    await handler.compactor.ensure_window()
    outcome = await handler.compactor.compact(handler.system_prompt(), handler.get_tool_specs(), trigger="threshold")
    assert outcome is not None and outcome.pruned >= 2 and outcome.messages == 0 and outcome.usage is None
    assert len(fake_llm.requests) == requests, "pruning made a model call"
    pruned = [m for m in handler.conversation_history if m.get("pruned")]
    assert pruned and all("Call readFile again" in m["content"] for m in pruned)
    assert all("[Not sent again" not in str(m.get("content")) for m in handler.conversation_history), "a pointer outlived its target"
    assert "def helper_1_0" in await _reread(session, fake_llm, "big_1.py")  # after: the content again
    whole = session.history  # f2 and /export: the pruned results whole
    assert sum("def helper_1_0" in str(m.get("content")) for m in whole if m["role"] == "tool") >= 2


async def _reread(session: Session, fake: FakeLLM, name: str) -> str:
    await run(session, f"read {name}")
    return str(session.handler.conversation_history[-2]["content"])


@pytest.mark.parametrize("focus", ["", "the launch"])
async def test_compact_command_between_turns(fake_llm: FakeLLM, tmp_path: Path, focus: str) -> None:
    model = ScriptedModel()
    fake_llm.responder = model
    handler = handler_for("anthropic", fake_llm, project(tmp_path))
    session = Session(handler)
    for turn in range(1, 7):
        await run(session, session_script(turn))
    responses = handler.usage.summary()["responses"]
    line = await session.compact(focus)
    assert line.startswith("Compacted ") and "the summary cost" in line
    assert (f"focus on: {focus}" in request_text(fake_llm.requests[-1])) == bool(focus)
    assert handler.conversation_history[0].get("compaction") and handler.usage.summary()["responses"] == responses + 1
    assert [i["code"] for i in session.incidents] == ["compacted"]
    events = await run(session, "what is the owner?")
    assert events[-1].result["content"] == "The owner is Priya Natarajan."
    assert not model.problems


async def test_compacting_inside_a_tool_loop_keeps_the_signed_thinking_the_api_checks(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """With extended thinking on, the assistant message of the running tool loop keeps its thinking blocks as sent
    (the fake server answers 400 otherwise, as Anthropic does), and no tool result loses its call."""
    model = ScriptedModel()
    steps = [
        Reply(thinking="Read the first file.", tools=[Tool("readFile", {"path": "big_1.py"})]),
        Reply(thinking="Now the second.", tools=[Tool("readFile", {"path": "big_2.py"})]),
        Reply(thinking="And the third.", tools=[Tool("readFile", {"path": "big_3.py"})]),
        Reply(text="Read all three."),
    ]

    started: list[bool] = []

    def respond(request: Any) -> Any:
        if SUMMARY_SYSTEM[:40] in request.system or not (started or request.last_user_text().startswith("read three")):
            return model(request)
        started.append(True)  # the turn's user message may be summarised away after this
        return steps.pop(0)

    fake_llm.responder = respond
    handler = handler_for("anthropic", fake_llm, project(tmp_path), context_window=9_000, thinking="1024", max_tool_calls=5)
    session = Session(handler)
    for turn in range(1, 4):
        await run(session, session_script(turn))
    events = await run(session, "read three files please")
    assert isinstance(events[-1], ev.TurnCompleted), events[-1]
    assert events[-1].result["content"] == "Read all three."
    assert [e for e in events if isinstance(e, ev.Warning) and e.code == "compacted"], "no compaction inside the tool loop"
    assert not fake_llm.rejected and not model.problems, (fake_llm.rejected, model.problems)
    assert max(request_tokens(r) for r in fake_llm.requests) <= 9_000
    assert_history_valid(handler.conversation_history)
