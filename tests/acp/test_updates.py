"""Our events as ACP session updates, and aider's unified diffs as old/new text."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core import events as ev
from core.acp.diffs import file_changes, old_text, parse_unified_diff
from core.acp.updates import TurnMapper, history_updates, tool_kind
from core.tools.aider_bridge import unified_diff
from core.types import Decision, ToolCall
from tests.reliability.support import API_KEY_CANARY, app_log  # noqa: F401 - the app_log fixture

LINES = st.lists(st.sampled_from(["a", "b", "c", "-- x", "--- y", "+++ z", "@@ -1 +1 @@", "\\ w", ""]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(LINES, LINES, st.booleans(), st.booleans())
def test_undoing_a_diff_gives_back_the_old_text(old_lines, new_lines, old_eol, new_eol):
    old = "\n".join(old_lines) + ("\n" if old_eol and old_lines else "")
    new = "\n".join(new_lines) + ("\n" if new_eol and new_lines else "")
    diff = unified_diff(old, new, "x.py")
    if not diff:
        return
    [file_diff] = parse_unified_diff(diff)
    assert file_diff.path == "x.py"
    assert old_text(new, file_diff) == old


def test_a_multi_file_diff_with_a_new_file(tmp_path: Path):
    (tmp_path / "a.py").write_text("one\nTWO\nthree\n")
    (tmp_path / "new.py").write_text("fresh\n")
    diff = unified_diff("one\ntwo\nthree\n", "one\nTWO\nthree\n", "a.py") + unified_diff(None, "fresh\n", "new.py")
    changes = file_changes(diff, tmp_path)
    assert changes == [(tmp_path / "a.py", "one\ntwo\nthree\n", "one\nTWO\nthree\n"), (tmp_path / "new.py", None, "fresh\n")]


def call(name: str, **params) -> ToolCall:
    return ToolCall(id=f"call-{name}", name=name, parameters=params)


def test_text_thinking_and_a_search_with_the_paths_it_found(tmp_path: Path):
    mapper = TurnMapper(tmp_path)
    search = call("executeFilePathCommand", command="find . -name '*.py'")
    found = [str(tmp_path / "a.py"), str(tmp_path / "b" / "c.py")]
    updates = [
        u
        for event in (
            ev.ThinkingDelta(text="Let me look."),
            ev.TextDelta(text="Searching."),
            ev.ToolCallStarted(call=search, started_at=0.0),
            ev.ToolCallFinished(call=search, status="success", result="Found 2 path(s)", duration=0.1, metadata={"paths": found}),
        )
        for u in mapper.updates(event)
    ]
    assert [u.session_update for u in updates] == ["agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update"]
    assert updates[0].content.text == "Let me look."
    start, done = updates[2], updates[3]
    assert (start.kind, start.status, start.title) == ("search", "in_progress", "Find files: find . -name '*.py'")
    assert done.status == "completed" and [loc.path for loc in done.locations] == found


def test_live_output_replaces_the_content_with_everything_so_far(tmp_path: Path):
    mapper = TurnMapper(tmp_path)
    run = call("runCommand", command="pytest -q")
    mapper.updates(ev.ToolCallStarted(call=run, started_at=0.0))
    first = mapper.updates(ev.ToolOutputChunk(call_id=run.id, text="..F"))
    second = mapper.updates(ev.ToolOutputChunk(call_id=run.id, text=".\n1 failed", stream="stdout"))
    assert first[0].content[0].content.text == "..F"
    assert second[0].content[0].content.text == "..F.\n1 failed" and second[0].status == "in_progress"
    [done] = mapper.updates(ev.ToolCallFinished(call=run, status="error", result="exit 1", duration=1.0))
    assert done.status == "failed" and tool_kind("runCommand") == "execute"
    assert mapper.updates(ev.ToolOutputChunk(call_id=run.id, text="late")) == []


def test_approval_moves_a_pending_call_to_in_progress_and_cancel_fails_open_calls(tmp_path: Path):
    mapper = TurnMapper(tmp_path, needs_approval=lambda name: name == "aiderAutomatic")
    edit = call("aiderAutomatic", prompt="Add types", file_context=["m.py"])
    [start] = mapper.updates(ev.ToolCallStarted(call=edit, started_at=0.0))
    assert (start.status, start.kind, [loc.path for loc in start.locations]) == ("pending", "edit", [str(tmp_path / "m.py")])
    [waiting] = mapper.updates(ev.ApprovalRequested(call=edit))
    assert waiting.status == "pending"
    [running] = mapper.updates(ev.ApprovalRecorded(call=edit, decision=Decision.ALLOW_ONCE))
    assert running.status == "in_progress"
    [closed] = mapper.interrupted()
    assert closed.tool_call_id == edit.id and closed.status == "failed"


def test_aider_edits_become_diff_content(tmp_path: Path):
    (tmp_path / "m.py").write_text('"""Doc."""\nx = 1\n')
    mapper = TurnMapper(tmp_path)
    edit = call("aiderAutomatic", prompt="Add a docstring")
    mapper.updates(ev.ToolCallStarted(call=edit, started_at=0.0))
    diff = unified_diff("x = 1\n", '"""Doc."""\nx = 1\n', "m.py")
    metadata = {"diff": diff, "edited_files": ["m.py"], "file_context": ["m.py"]}
    [done] = mapper.updates(ev.ToolCallFinished(call=edit, status="success", result="aider edited 1 file(s)", duration=2.0, metadata=metadata))
    diff_block = done.content[0]
    assert (diff_block.type, diff_block.path, diff_block.old_text, diff_block.new_text) == ("diff", str(tmp_path / "m.py"), "x = 1\n", '"""Doc."""\nx = 1\n')
    assert [loc.path for loc in done.locations] == [str(tmp_path / "m.py")]


def test_a_plan_answer_becomes_a_plan_update(tmp_path: Path):
    mapper = TurnMapper(tmp_path)
    result = {"status": "COMPLETE", "content": "", "metadata": {"plan_steps": ["Read auth.py", "Add the check"]}}
    [plan] = mapper.updates(ev.TurnCompleted(result=result))
    assert plan.session_update == "plan"
    assert [(e.content, e.status) for e in plan.entries] == [("Read auth.py", "pending"), ("Add the check", "pending")]


def test_history_replay_marks_failed_calls(tmp_path: Path):
    history = [
        {"role": "user", "content": "/plan fix it"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "name": "readFile", "parameters": {"path": "gone.py"}}]},
        {"role": "tool", "tool_call_id": "t1", "name": "readFile", "content": "gone.py does not exist.", "is_error": True},
        {"role": "assistant", "content": "<plan>\n1. Create gone.py\n</plan>"},
    ]
    updates = history_updates(history, tmp_path)
    # the plan is drawn as plan entries, its markup not as message text
    assert [u.session_update for u in updates] == ["user_message_chunk", "tool_call", "plan"]
    assert updates[1].status == "failed" and updates[1].locations[0].path == str(tmp_path / "gone.py")
    assert updates[2].entries[0].content == "Create gone.py"


def test_secrets_added_later_are_redacted_from_the_log(app_log: Path):
    import logging

    from core.logging_setup import add_secrets

    add_secrets(["sk-project-env-key-2"])
    logging.getLogger("test").warning("keys %s and %s", API_KEY_CANARY, "sk-project-env-key-2")
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = app_log.read_text()
    assert "sk-project-env-key-2" not in text and API_KEY_CANARY not in text and text.count("[REDACTED]") == 2


def test_command_titles_read_as_a_shell_prints_them() -> None:
    """Issue 23 item 10 in ACP: an editor's tool title is the command line, not a JSON list."""
    from core.acp.updates import tool_title
    from core.types import ToolCall

    call = ToolCall(id="c1", name="runCommand", parameters={"command": ["git", "status", "--short", "my file"]})
    assert tool_title(call) == "Run git status --short 'my file'"
    fetch = ToolCall(id="c2", name="runCommand", parameters={"command": ["pip", "download", "x"], "network": True})
    assert tool_title(fetch) == "Run pip download x (with network access)"
