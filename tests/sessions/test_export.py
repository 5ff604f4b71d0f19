"""Markdown export: readable, tool calls collapsible, written atomically, clear refusals."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.sessions import ExportError, StoredSession, SessionStore, export_markdown, load_session, render_markdown
from core.types import Message


def _session(store: SessionStore, session: StoredSession) -> None:
    with store.writer(session, provider="anthropic", model="claude-x") as writer:
        writer.user("Find the auth files")
        writer.assistant("Searching.", [{"id": "t1", "name": "executeFilePathCommand", "parameters": {"command": "rg -l auth"}}])
        writer.tool_result("t1", "executeFilePathCommand", "src/auth.py\n```tricky```", status="success")
        writer.assistant("", [{"id": "t2", "name": "aider<b>", "parameters": {}}])
        writer.tool_result("t2", "aider<b>", "boom", is_error=True, status="error")
        writer.assistant("Found `src/auth.py`.")


def test_export_contains_messages_and_collapsible_tool_calls(store: SessionStore, session: StoredSession, tmp_path: Path) -> None:
    _session(store, session)
    target = tmp_path / "out.md"

    written = export_markdown(load_session(session), target)

    assert written == target.resolve()
    text = target.read_text()
    assert text.startswith(f"# Session {session.id}\n")
    assert "- Model: anthropic:claude-x" in text
    assert "## User · turn 1\n\nFind the auth files" in text, "numbered as everywhere (core.turns; derived for a record without it)"
    assert "## Assistant\n\nSearching." in text
    assert "<details><summary>tool executeFilePathCommand  rg -l auth</summary>" in text, "the call's line as the chat shows it (core.narration)"
    assert '"command": "rg -l auth"' in text
    assert "````\nsrc/auth.py\n```tricky```\n````" in text, "the fence outgrows backticks in the result"
    assert "<summary>tool aider&lt;b&gt;</summary>" in text and "Result (failed):\n\n```\nboom\n```" in text
    assert text.count("<details>") == text.count("</details>") == 2
    assert text.index("executeFilePathCommand") < text.index("Found `src/auth.py`.")


def test_export_of_plain_messages_and_dangling_call(tmp_path: Path) -> None:
    messages = [
        Message(role="user", content="hi"),
        Message(role="assistant", content="", tool_calls=[{"id": "x", "name": "runCommand", "parameters": {}}], interrupted=True),
    ]
    path = export_markdown(messages, tmp_path / "plain.md")
    text = path.read_text()
    assert text.startswith("# Conversation\n")
    assert "## Assistant (interrupted)" in text and "No result was recorded." in text


def test_export_replaces_a_file_and_refuses_a_directory(tmp_path: Path) -> None:
    target = tmp_path / "exists.md"
    target.write_text("old")
    export_markdown([Message(role="user", content="new")], target)
    assert "new" in target.read_text() and "old" not in target.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exists.md"], "no temporary file left behind"

    with pytest.raises(ExportError, match="it is a directory"):
        export_markdown([], tmp_path)
    with pytest.raises(ExportError, match="does not exist"):
        export_markdown([], tmp_path / "missing" / "out.md")


def test_export_failure_leaves_the_old_file(tmp_path: Path, tmpfs) -> None:
    if os.geteuid() == 0:
        from tests.sessions.conftest import remount

        directory = tmpfs(1 << 20)
        (directory / "keep.md").write_text("precious")
        remount(directory, "ro")
    else:
        directory = tmp_path / "locked"
        directory.mkdir()
        (directory / "keep.md").write_text("precious")
        directory.chmod(0o500)
    with pytest.raises(ExportError) as caught:
        export_markdown([Message(role="user", content="x")], directory / "keep.md")
    assert str(directory / "keep.md") in str(caught.value)
    assert (directory / "keep.md").read_text() == "precious"


def test_render_is_deterministic(store: SessionStore, session: StoredSession) -> None:
    _session(store, session)
    loaded = load_session(session)
    assert render_markdown(loaded) == render_markdown(loaded)
