"""A session with no message is neither kept on disk nor listed (nor reopened by --continue)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from core.sessions import SessionStore, load_session
from core.sessions.records import encode


def test_pane_records_alone_leave_no_file(store: SessionStore, project: Path) -> None:
    session = store.create(project)
    with store.writer(session) as writer:
        writer.context([{"path": "/p/a.py", "read_only": True}])
        writer.trace({"kind": "tool_call_started", "call": {"id": "t1", "name": "readFile"}})
        assert writer.pending == []
    assert not session.path.exists() and not session.lock_path.exists()
    assert store.list(project) == [] and store.latest(project) is None


def test_the_first_message_writes_the_held_records_first(store: SessionStore, project: Path) -> None:
    session = store.create(project)
    with store.writer(session) as writer:
        writer.context(["/p/a.py"])
        assert not session.path.exists()
        writer.user("hello")
        assert session.path.exists(), "written as soon as the message is recorded"
        writer.context(["/p/b.py"])
    loaded = load_session(session)
    assert [r["kind"] for r in loaded.records] == ["meta", "context", "user", "context"]
    assert loaded.context["files"] == [{"path": "/p/b.py", "read_only": False}]
    (info,) = store.list(project)
    assert (info.id, info.first_prompt) == (session.id, "hello")


def test_a_reopened_session_records_its_panes_at_once(store: SessionStore, project: Path) -> None:
    session = store.create(project)
    with store.writer(session) as writer:
        writer.user("hello")
    with store.writer(store.open(session.id, project)) as writer:
        writer.context(["/p/a.py"])
        assert load_session(session).context["files"] == [{"path": "/p/a.py", "read_only": False}]


def test_older_empty_transcripts_are_not_listed_nor_continued(store: SessionStore, project: Path) -> None:
    with_message = store.create(project)
    with store.writer(with_message) as writer:
        writer.user("the real one")
    empty = store.create(project)  # as an older version left it: a meta line and the context pane
    meta = {"kind": "meta", "ts": empty.created, "version": 1, "id": empty.id, "project_root": str(project.resolve()), "created": empty.created}
    empty.path.write_bytes(encode(meta) + encode({"kind": "context", "ts": empty.created, "files": []}))
    later = os.stat(with_message.path).st_mtime_ns + 10**9
    os.utime(empty.path, ns=(later, later))
    assert [info.id for info in store.list(project)] == [with_message.id]
    assert store.latest(project).id == with_message.id
    index = json.loads((store.project_dir(project) / "index.json").read_text())
    assert set(index["sessions"]) == {with_message.id, empty.id}, "the cache still knows it (no rescan next time)"
