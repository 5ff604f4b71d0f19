"""Every record kind survives a write and a load; the store finds, lists and titles sessions."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from core.sessions import SessionNotFound, SessionStore, SessionWriter, load_session
from core.sessions.records import project_key
from core.types import ToolCall

TRICKY = 'line one\nline "two"\u2028 \u2029 caf\u00e9 \U0001f600 \\ \x00 {"kind":"user"}'


def test_every_record_kind_round_trips(store: SessionStore, project: Path) -> None:
    session = store.create(project)
    with store.writer(session, provider="anthropic", model="claude-x") as writer:
        writer.user(TRICKY)
        writer.assistant("Let me look.", [ToolCall(id="t1", name="readFile", parameters={"path": "a.py"})])
        writer.tool_result("t1", "readFile", "print('a')", status="success", duration=0.25)
        writer.assistant("", [{"id": "t2", "name": "runCommand", "parameters": {"cmd": "false"}}])
        writer.tool_result("t2", "runCommand", "exit 1", is_error=True, status="error", duration=1.5)
        writer.assistant("It failed; stopping", interrupted=True)
        writer.interruption("user")
        writer.error("rate limited", reason="llm_error")
        writer.context(["/p/a.py", {"path": "/p/b.py", "read_only": True}])
        writer.trace({"kind": "tool_call_started", "call": {"id": "t1", "name": "readFile"}})
        writer.user("second prompt")
        writer.user("third prompt, consecutive")

    lines = session.path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 14, "13 records, one line each, newline-terminated"
    loaded = load_session(session.path)

    assert loaded.warnings == []
    assert [r["kind"] for r in loaded.records] == [
        "meta", "user", "assistant", "tool_result", "assistant", "tool_result", "assistant",
        "interruption", "error", "context", "trace", "user", "user",
    ]
    assert all(isinstance(r["ts"], float) for r in loaded.records)
    meta = loaded.meta
    assert (meta["version"], meta["id"], meta["provider"], meta["model"]) == (1, session.id, "anthropic", "claude-x")
    assert meta["project_root"] == str(project.resolve())

    roles = [(m["role"], m["content"]) for m in loaded.messages]
    assert roles == [
        ("user", TRICKY),
        ("assistant", "Let me look."),
        ("tool", "print('a')"),
        ("assistant", ""),
        ("tool", "exit 1"),
        ("assistant", "It failed; stopping"),
        ("user", "second prompt"),
        ("user", "third prompt, consecutive"),
    ]
    first_call = loaded.messages[1]
    assert first_call["tool_calls"] == [{"id": "t1", "name": "readFile", "parameters": {"path": "a.py"}}]
    assert "interrupted" not in first_call
    assert loaded.messages[2] == {**loaded.messages[2], "tool_call_id": "t1", "name": "readFile", "is_error": False}
    assert loaded.messages[4]["is_error"] is True
    assert loaded.messages[5]["interrupted"] is True
    assert loaded.records[3]["status"] == "success" and loaded.records[3]["duration"] == 0.25
    assert loaded.records[7]["reason"] == "user"
    assert loaded.records[8] == {**loaded.records[8], "reason": "llm_error", "message": "rate limited"}
    assert loaded.context is not None
    assert loaded.context["files"] == [{"path": "/p/a.py", "read_only": False}, {"path": "/p/b.py", "read_only": True}]
    assert loaded.trace == [{"ts": loaded.records[10]["ts"], "kind": "tool_call_started", "call": {"id": "t1", "name": "readFile"}}]


def test_latest_context_record_wins(session, store: SessionStore) -> None:
    with store.writer(session) as writer:
        writer.context(["/a"])
        writer.user("q")
        writer.context([{"path": "/b", "read_only": True}])
    assert load_session(session).context["files"] == [{"path": "/b", "read_only": True}]


def test_nothing_is_written_until_the_first_record(store: SessionStore, project: Path) -> None:
    session = store.create(project)
    SessionWriter(session).close()
    assert not session.path.exists()
    assert store.latest(project) is None
    assert store.list(project) == []


def test_reopening_appends_without_a_second_meta_line(session, store: SessionStore) -> None:
    with store.writer(session) as writer:
        writer.user("one")
    with store.writer(store.open(session.id)) as writer:
        writer.user("two")
    loaded = load_session(session)
    assert [r["kind"] for r in loaded.records] == ["meta", "user", "user"]
    assert not session.lock_path.exists(), "a closed writer removes its lock file"


def test_open_by_id_prefix_and_other_project(store: SessionStore, project: Path, tmp_path: Path) -> None:
    session = store.create(project)
    with store.writer(session) as writer:
        writer.user("hello")
    found = store.open(session.id)
    assert (found.id, found.path, found.project_root) == (session.id, session.path, project.resolve())
    assert abs(found.created - session.created) < 1e-6
    assert store.open(session.id[:-2], project).id == session.id
    other = tmp_path / "other"
    other.mkdir()
    assert store.open(session.id, other).id == session.id, "ids are unique across projects"


@pytest.mark.parametrize("bad", ["20990101-000000-abcdef", "../../etc/passwd", "*", ""])
def test_unknown_id_says_how_to_see_sessions(store: SessionStore, project: Path, bad: str) -> None:
    session = store.create(project)
    with store.writer(session) as writer:
        writer.user("hello")
    with pytest.raises(SessionNotFound) as caught:
        store.open(bad, project)
    message = str(caught.value)
    assert "/sessions" in message and "--continue" in message
    if bad.startswith("2099"):
        assert session.id in message, "recent ids of the project are suggested"


def test_ambiguous_prefix_is_refused(store: SessionStore, project: Path) -> None:
    for _ in range(2):
        with store.writer(store.create(project)) as writer:
            writer.user("x")
    with pytest.raises(SessionNotFound, match="Several sessions"):
        store.open("2", project)


def _written_in_order(*sessions: Any) -> None:
    """Give the transcripts modification times one second apart, in this order (two writes in a row
    can share an mtime on a coarse clock; "most recently written" is what the store orders by)."""
    base = time.time_ns()
    for i, session in enumerate(sessions):
        os.utime(session.path, ns=(base + i * 10**9, base + i * 10**9))


def test_latest_is_the_last_written(store: SessionStore, project: Path) -> None:
    first, second = store.create(project), store.create(project)
    with store.writer(second) as writer:
        writer.user("created second, written first")
    with store.writer(first) as writer:
        writer.user("written last")
    _written_in_order(second, first)
    assert store.latest(project).id == first.id


def test_list_summarises_sessions(store: SessionStore, project: Path) -> None:
    a, b = store.create(project), store.create(project)
    with store.writer(a) as writer:
        writer.user("  fix   the\nlogin bug ")
        writer.assistant("ok")
        writer.user("and add a test")
    with store.writer(b) as writer:
        writer.user("x" * 500)
    _written_in_order(a, b)
    store.set_title(a, "Login bug")

    infos = store.list(project)
    assert [i.id for i in infos] == [b.id, a.id], "most recently written first"
    info_b, info_a = infos
    assert (info_a.turn_count, info_a.first_prompt, info_a.title, info_a.label) == (2, "fix the login bug", "Login bug", "Login bug")
    assert info_b.turn_count == 1 and len(info_b.first_prompt) == 200 and info_b.title is None
    assert info_a.created == pytest.approx(a.created) and info_a.updated >= info_a.created - 1
    assert info_a.project_root == project.resolve()

    with store.writer(a) as writer:  # the cache notices appends
        writer.user("third")
    store.set_title(a, "Renamed")
    info = next(i for i in store.list(project) if i.id == a.id)
    assert (info.turn_count, info.title) == (3, "Renamed")


def test_title_is_a_sidecar_replaced_atomically(session, store: SessionStore) -> None:
    with store.writer(session) as writer:
        writer.user("q")
    before = session.path.read_bytes()
    store.set_title(session, "First")
    store.set_title(session, "Second")
    assert store.title(session) == "Second"
    assert json.loads(session.sidecar_path.read_text())["title"] == "Second"
    assert session.path.read_bytes() == before, "renames never touch the transcript"
    assert [p.name for p in session.path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_project_directories_are_readable_and_distinct(tmp_path: Path) -> None:
    a = tmp_path / "my-app"
    b = tmp_path / "my_app"
    c = tmp_path / "my app"
    keys = {project_key(p) for p in (a, b, c)}
    assert len(keys) == 3
    assert all("my" in key and "app" in key for key in keys)
    assert project_key(a) == project_key(tmp_path / "x" / ".." / "my-app")


def test_files_are_private(session, store: SessionStore) -> None:
    with store.writer(session) as writer:
        writer.user("secret-ish")
    assert session.path.stat().st_mode & 0o777 == 0o600
    assert session.path.parent.stat().st_mode & 0o777 == 0o700
