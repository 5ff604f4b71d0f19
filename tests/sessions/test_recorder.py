"""The recorder turns the handler's events into records, and write failures into warnings."""

from __future__ import annotations

from pathlib import Path

from core import events as ev
from core.sessions import INTERRUPTED_RESULT, SessionRecorder, SessionStore, SessionWriter, load_session
from core.types import Decision, ToolCall, ok_result

CALL = ToolCall(id="c1", name="runCommand", parameters={"command": "ls"})


def _turn() -> list[ev.Event]:
    return [
        ev.TurnStarted(query="list files", subtask_id="s1"),
        ev.TextDelta(text="Let me "),
        ev.TextDelta(text="look."),
        ev.AssistantMessage(content="Let me look.", tool_calls=(CALL,)),
        ev.ApprovalRecorded(call=CALL, decision=Decision.ALLOW_ONCE),
        ev.ToolCallStarted(call=CALL, started_at=1.0),
        ev.ToolCallFinished(call=CALL, status="success", result="a.py\n" * 1000, duration=0.5),
        ev.MetricsUpdated(metrics={"turns": 1}),
        ev.TextDelta(text="Two files."),
        ev.AssistantMessage(content="Two files.", final=True),
        ev.TurnCompleted(result=ok_result("Two files.")),
    ]


def test_a_turn_of_events_becomes_history_and_trace(store: SessionStore, project: Path) -> None:
    session = store.create(project)
    writer = store.writer(session)
    recorder = SessionRecorder(writer)
    for event in _turn():
        assert recorder.record(event) == []
    assert recorder.context([{"path": str(project / "a.py"), "read_only": True}]) == []
    writer.close()

    loaded = load_session(session)
    assert loaded.warnings == []
    assert [(m["role"], m["content"][:12]) for m in loaded.messages] == [
        ("user", "list files"), ("assistant", "Let me look."), ("tool", "a.py\na.py\na."), ("assistant", "Two files."),
    ]
    assert loaded.messages[1]["tool_calls"] == [CALL.as_dict()]
    assert loaded.messages[2]["content"] == "a.py\n" * 1000, "the full result is in the history"
    assert [e["kind"] for e in loaded.trace] == ["approval", "tool_call_started", "tool_call_finished"]
    finished = loaded.trace[2]
    assert finished["status"] == "success" and finished["result_truncated"] and len(finished["result"]) == 2000
    assert loaded.trace[0]["decision"] == "allow_once"
    assert loaded.context["files"] == [{"path": str(project / "a.py"), "read_only": True}]


def test_interrupting_keeps_streamed_text_and_closes_running_tools(store: SessionStore, project: Path) -> None:
    session = store.create(project)
    with store.writer(session) as writer:
        recorder = SessionRecorder(writer)
        for event in _turn()[:6]:  # the tool is running
            recorder.record(event)
        recorder.interrupted()
        recorder.record(ev.TurnStarted(query="second", subtask_id="s1"))
        recorder.record(ev.TextDelta(text="Half an ans"))
        recorder.interrupted()

    loaded = load_session(session)
    shape = [(m["role"], m["content"], m.get("interrupted", False)) for m in loaded.messages]
    assert shape == [
        ("user", "list files", False),
        ("assistant", "Let me look.", False),
        ("tool", INTERRUPTED_RESULT, False),
        ("user", "second", False),
        ("assistant", "Half an ans", True),
    ]
    assert [r["kind"] for r in loaded.records].count("interruption") == 2
    assert loaded.trace[-1]["status"] == "interrupted"


def test_failed_turn_keeps_partial_text_and_the_error(store: SessionStore, project: Path) -> None:
    session = store.create(project)
    with store.writer(session) as writer:
        recorder = SessionRecorder(writer)
        recorder.record(ev.TurnStarted(query="q", subtask_id="s"))
        recorder.record(ev.TextDelta(text="partial"))
        recorder.record(ev.TurnFailed(reason="llm_error", message="connection reset", result={"status": "failed"}))
    loaded = load_session(session)
    assert [(m["role"], m["content"], m.get("interrupted", False)) for m in loaded.messages] == [
        ("user", "q", False), ("assistant", "partial", True),
    ]
    assert loaded.records[-1]["kind"] == "error" and loaded.records[-1]["message"] == "connection reset"


def test_write_failures_warn_once_and_recovery_is_announced(tmp_path: Path, project: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("")
    session = SessionStore(blocker / "sessions").create(project)
    recorder = SessionRecorder(SessionWriter(session))

    warnings = [w for event in _turn() for w in recorder.record(event)]
    assert len(warnings) == 1 and warnings[0].code == "session_not_saved"
    assert str(session.path) in warnings[0].message and "kept in memory" in warnings[0].message
    assert recorder.flush() == []  # still failing: no repeated warning

    blocker.unlink()
    recovered = recorder.flush()
    assert [w.code for w in recovered] == ["session_saved"]
    recorder.writer.close()
    assert [m["content"][:10] for m in load_session(session).messages] == ["list files", "Let me loo", "a.py\na.py\n", "Two files."]
