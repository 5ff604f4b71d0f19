"""Issue 23 items 4, 5 and 8 through the real Application, its Session and the real SDKs (fake server).

- One turn number (``core.turns``): live events and metrics, the ledger, the transcript, a resume,
  and an older transcript without stored numbers all agree.
- A provider error mid-answer is kept and told as what it was (not "interrupted"), in the history,
  the transcript, the export and what the model is told next.
- A response that ended before its usage report is counted with what the provider reported, as a
  lower bound ("at least"), live and after a resume.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from core import events as ev
from core.sessions import SessionStore, load_session
from tests.fake_llm import Drop, FakeLLM, HTTPError, Reply, StreamError, Tool
from tests.reliability.support import make_application


@pytest.fixture(params=["anthropic", "openai"])
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


async def turn(state: Any, query: str) -> list[ev.Event]:
    async with contextlib.aclosing(state.stream_query(query)) as events:
        return [event async for event in events]


def records(state: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in state.stored.path.read_text().splitlines()]


# -- item 4: one turn number ---------------------------------------------------------------


async def test_one_turn_number_live_in_the_ledger_the_transcript_and_after_a_resume(kind: str, fake_llm: FakeLLM, project: Path) -> None:
    """q1 (a tool call), a /run note, q2 that fails unanswered and is sent again, /aider q3 (a tool call)."""
    app = make_application(kind, fake_llm, project)
    state = app.session_state
    fake_llm.script(
        Reply(tools=[Tool("readFile", {"path": "a.txt"})]), Reply(text="A"),
        HTTPError(400, "bad request"),
        Reply(text="B"),
        Reply(tools=[Tool("readFile", {"path": "a.txt"})]), Reply(text="C"),
    )
    numbers: list[int] = []
    shown: list[int] = []
    for query in ("first", None, "second", "second", "/aider third"):
        if query is None:
            await state.add_note("I ran a command, `ls`; its output:\n```\na.txt\n```")  # what /run adds: not a turn
            continue
        events = await turn(state, query)
        numbers += [getattr(e, "turn", None) for e in events if isinstance(e, ev.TurnStarted)]
        shown.append(state.metrics()["user_turns"])
    assert shown == [1, 1, 2, 3], "the status line's number is the turn's: notes are not turns, a resend is the same turn"
    assert numbers == [1, 2, 2, 3], "the resend of a turn that failed unanswered is that turn again"
    assert state.usage.turns() == [1, 2, 3]
    live_per_turn = state.usage.summary()["per_turn"]
    headings = [line for line in state.transcript_markdown().splitlines() if line.startswith("## User")]
    assert headings == [
        "## User · turn 1", "## User", "## User · turn 2 (not answered: the turn failed, and the message went back to the prompt)",
        "## User · turn 2", "## User · turn 3",
    ], "the export (and f2) number the turns as the trace and /cost do; the /run note is not a turn"

    users = [r for r in records(state) if r["kind"] == "user"]
    assert [(r.get("turn"), bool(r.get("note"))) for r in users] == [(1, False), (None, True), (2, False), (2, False), (3, False)]
    usage_turns = [r["usage"]["turn"] for r in records(state) if r["kind"] == "assistant"]
    assert usage_turns == [1, 1, 2, 3, 3]
    trace_turns = sorted({_turn_of(r["ts"], users) for r in records(state) if r["kind"] == "trace"})
    assert trace_turns == [1, 3]
    state.close()
    (listed,) = SessionStore().list(project)
    assert listed.turn_count == 3, "the session picker counts the same turns (not the note, not the retracted send)"

    again = make_application(kind, fake_llm, project, record=False).session_state
    again.start(continue_latest=True)
    assert again.metrics()["user_turns"] == 3
    assert again.usage.summary()["per_turn"] == live_per_turn
    loaded = again.take_loaded()
    assert [r.get("turn") for r in loaded.records if r["kind"] == "user" and not r.get("note")] == [1, 2, 2, 3]
    fake_llm.script(Reply(text="D"))
    events = await turn(again, "fourth")
    assert [e.turn for e in events if isinstance(e, ev.TurnStarted)] == [4]
    again.close()


def _turn_of(ts: float, users: list[dict[str, Any]]) -> int:
    numbered = [r for r in users if not r.get("note") and r["ts"] <= ts]
    return numbered[-1]["turn"]


async def test_an_older_transcript_without_numbers_is_numbered_the_same_way(fake_llm: FakeLLM, project: Path) -> None:
    app = make_application("anthropic", fake_llm, project)
    state = app.session_state
    fake_llm.script(Reply(text="A"), HTTPError(400, "bad request"), Reply(text="B"), Reply(text="C"))
    await turn(state, "first")
    await state.run_task("/task list")  # a /task result: a note
    for query in ("second", "second", "third"):
        await turn(state, query)
    state.close()
    path = state.stored.path
    lines = []
    for record in (json.loads(line) for line in path.read_text().splitlines()):
        record.pop("turn", None)
        record.pop("note", None)
        if isinstance(record.get("usage"), dict):
            record["usage"]["turn"] = 7  # what an older build may have stored: not trusted
        lines.append(json.dumps(record))
    old = path.with_name("20250101-000000-abcdef.jsonl")
    old.write_text("\n".join(lines) + "\n")

    loaded = load_session(old)
    assert [m.get("turn") for m in loaded.messages if m["role"] == "user"] == [1, None, 2, 3]
    assert [u["turn"] for u in loaded.usage] == [1, 2, 3]


# -- item 5: a provider error is told as itself ----------------------------------------------


async def test_a_provider_error_mid_answer_is_kept_marked_and_told_as_itself(kind: str, fake_llm: FakeLLM, project: Path) -> None:
    app = make_application(kind, fake_llm, project)
    state = app.session_state
    fake_llm.script(StreamError(text="The answer is forty-two, because", after_chunks=2, input_tokens=1200), Reply(text="fine"))
    events = await turn(state, "why?")

    (message,) = [e for e in events if isinstance(e, ev.AssistantMessage)]
    assert message.content and message.interrupted and message.stop_reason == "error"
    assert message.error["kind"] == "overloaded" and "overloaded" in message.error["message"].lower()
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.reason == "llm_error"
    assert failed.result["metadata"]["characters"] == len(message.content), "the UI gives the query back when an answer was cut"
    assert "overloaded" in failed.message.lower()

    last = state.history[-1]
    assert (last["stop_reason"], last["error"]["kind"]) == ("error", "overloaded")
    (saved,) = [r for r in records(state) if r["kind"] == "assistant"]
    assert saved["interrupted"] and saved["stop_reason"] == "error"
    assert saved["error"]["kind"] == "overloaded" and "overloaded" in saved["error"]["message"].lower()

    markdown = state.transcript_markdown()
    assert "## Assistant (cut off: the provider failed mid-answer (overloaded" in markdown
    assert "(interrupted)" not in markdown

    await turn(state, "why?")
    sent = json.dumps(fake_llm.requests[-1].body)
    assert "the provider failed before the answer finished" in sent and "interrupted by the user" not in sent
    state.close()
    loaded = load_session(state.stored.path)
    assert loaded.messages[1]["error"]["kind"] == "overloaded"


async def test_the_export_keeps_retry_warnings_under_the_question_that_failed(fake_llm: FakeLLM, project: Path) -> None:
    app = make_application("anthropic", fake_llm, project, max_retries=2)
    state = app.session_state
    fake_llm.script(HTTPError(529, "Overloaded", "overloaded_error"), HTTPError(529, "Overloaded", "overloaded_error"),
                    HTTPError(529, "Overloaded", "overloaded_error"), Reply(text="Here it is."))
    events = await turn(state, "the question")
    assert [e.code for e in events if isinstance(e, ev.Warning)] == ["retry", "retry"]
    assert events[-1].result["metadata"]["retracted"]
    await turn(state, "the question")

    live = state.transcript_markdown()
    state.close()
    again = make_application("anthropic", fake_llm, project, record=False).session_state
    again.start(continue_latest=True)
    resumed = again.transcript_markdown()
    again.close()
    for markdown in (live, resumed):  # f2 and /export, live and after -c
        assert "sent again later" not in markdown
        failed = markdown.index("## User · turn 1 (not answered")
        retries = [i for i in range(len(markdown)) if markdown.startswith("> **Warning**", i)]
        error = markdown.index("> **Error**")
        resent = markdown.index("## User · turn 1\n\nthe question")
        assert len(retries) == 2 and failed < retries[0] < retries[1] < error < resent, markdown
    assert resumed.split("\n", 1)[1] == live.split("\n", 1)[1]


# -- item 8: what a cut response cost -------------------------------------------------------


async def test_a_dropped_answer_counts_the_input_reported_and_says_at_least(kind: str, fake_llm: FakeLLM, project: Path) -> None:
    app = make_application(kind, fake_llm, project)
    state = app.session_state
    fake_llm.script(Drop(Reply(text="A partial answer that never ends", chunk=6, input_tokens=5000), after_events=4))
    events = await turn(state, "go")
    assert isinstance(events[-1], ev.TurnFailed)
    reported = 5000 if kind == "anthropic" else 0  # Anthropic reports the input in message_start; OpenAI only at the end
    assert state.usage.total().input_tokens == reported
    assert state.usage.summary()["unreported"] == 1
    assert state.metrics()["usage"]["unreported"] == 1, "the status line's Σ is a lower bound"
    (saved,) = [r for r in records(state) if r["kind"] == "assistant"]
    assert saved["usage"]["reported"] is False and saved["usage"]["input_tokens"] == reported
    state.close()

    again = make_application(kind, fake_llm, project, record=False).session_state
    again.start(continue_latest=True)
    assert again.usage.total().input_tokens == reported and again.usage.summary()["unreported"] == 1
    again.close()


async def test_esc_mid_answer_counts_the_input_reported(fake_llm: FakeLLM, project: Path) -> None:
    app = make_application("anthropic", fake_llm, project)
    state = app.session_state
    fake_llm.script(Reply(text="word " * 400, chunk=5, tokens_per_second=200, input_tokens=3000))
    async with contextlib.aclosing(state.stream_query("go")) as events:
        async for event in events:
            if isinstance(event, ev.TextDelta):
                break  # the consumer stops: the turn is interrupted as by Esc
    assert state.usage.total().input_tokens == 3000 and state.usage.summary()["unreported"] == 1
    (saved,) = [r for r in records(state) if r["kind"] == "assistant"]
    assert saved["interrupted"] and saved["usage"]["input_tokens"] == 3000 and saved["usage"]["reported"] is False
    assert [r["kind"] for r in records(state)][-1] == "interruption"
    state.close()
    loaded = load_session(state.stored.path)
    assert [u["usage"]["input_tokens"] for u in loaded.usage] == [3000]


async def test_a_retried_attempt_is_counted_and_saved(fake_llm: FakeLLM, project: Path) -> None:
    app = make_application("anthropic", fake_llm, project, max_retries=1)
    state = app.session_state
    fake_llm.script(StreamError(after_chunks=0, input_tokens=2000), Reply(text="ok", input_tokens=100, output_tokens=3))
    events = await turn(state, "go")
    assert isinstance(events[-1], ev.TurnCompleted)
    assert [e.usage["input_tokens"] for e in events if isinstance(e, ev.ResponseAbandoned)] == [2000]
    assert state.usage.total().input_tokens == 2100 and state.usage.summary()["unreported"] == 1
    assert [r["usage"]["input_tokens"] for r in records(state) if r["kind"] == "usage"] == [2000]
    state.close()
    loaded = load_session(state.stored.path)
    assert sorted(u["usage"]["input_tokens"] for u in loaded.usage) == [100, 2000]
    assert not any(m.get("interrupted") for m in loaded.messages), "an abandoned attempt leaves no message"
