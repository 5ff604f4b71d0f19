"""Each writer through a real turn (fake LLM server, real SDKs, real aider), then rewound (issue 26).

The tree is compared byte for byte with the original; the user's untracked file and ``.git``
stay untouched; a file the user edited by hand after the turn is named and kept.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from core import events as ev
from core.app import Application
from core.config import Settings
from tests.aider.conftest import whole_file_edit
from tests.checkpoints.support import git_dir_hash, tree_state
from tests.core.test_cli import run_cli
from tests.fake_llm import Reply, Request, Tool

NEW_CALC = "def add(a: int, b: int) -> int:\n    return a + b\n"


def settings_for(fake_llm: Any, root: Path) -> Settings:
    return Settings(provider="anthropic", model="claude-test", anthropic_base_url=fake_llm.anthropic_url,
                    anthropic_api_key="sk-ant-test", openai_base_url=fake_llm.openai_url, openai_api_key="sk-test",
                    aider_model="openai/fake-model", approval_mode="allow", project_root=root)


async def run_turn(application: Application, query: str) -> list[ev.Event]:
    session = application.session_state
    async with contextlib.aclosing(session.stream_query(query)) as events:
        return [event async for event in events]


def finished(events: list[ev.Event]) -> list[ev.ToolCallFinished]:
    return [e for e in events if isinstance(e, ev.ToolCallFinished)]


async def test_aider_turn_rewound_by_the_cli(fake_llm, project: Path) -> None:
    original, git_before = tree_state(project), git_dir_hash(project)

    def respond(request: Request) -> Reply:
        if request.api == "openai":  # aider asking for the edit
            return Reply(text=whole_file_edit("calc.py", NEW_CALC))
        if any(b.get("type") == "tool_result" for b in request.messages[-1]["content"] if isinstance(b, dict)):
            return Reply(text="Typed.")
        return Reply(tools=[Tool("aiderAutomatic", {"prompt": "Add type hints", "file_context": ["calc.py"]})])

    fake_llm.responder = respond
    application = Application(settings_for(fake_llm, project))
    application.session_state.start()
    events = await run_turn(application, "type calc.py")
    call = finished(events)[0]
    assert call.status == "success", call.result
    assert (project / "calc.py").read_text() == NEW_CALC
    assert call.metadata["files_changed"]["items"][0][:2] == ["calc.py", "changed"]
    await application.aclose()

    out = run_cli(["rewind", "1", "--yes"], project)
    assert out.returncode == 0, out.stderr
    assert tree_state(project) == original
    assert git_dir_hash(project) == git_before


async def test_edit_file_turn_rewound_keeps_a_file_the_user_edited_since(fake_llm, project: Path) -> None:
    original = tree_state(project)
    fake_llm.script(
        Reply(tools=[
            Tool("editFile", {"path": "crlf.txt", "edits": [{"old_text": "two\n", "new_text": "TWO\nthree\n"}]}),
            Tool("editFile", {"path": "calc.py", "edits": [{"old_text": "a + b", "new_text": "b + a"}]}),
            Tool("editFile", {"path": "pkg/new.py", "edits": [{"old_text": "", "new_text": "Z = 3\n"}]}),
        ]),
        Reply(text="Edited."),
    )
    application = Application(settings_for(fake_llm, project))
    application.session_state.start()
    events = await run_turn(application, "edit things")
    assert [c.status for c in finished(events)] == ["success"] * 3, [c.result for c in finished(events)]
    assert (project / "crlf.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"  # line endings kept
    assert finished(events)[1].metadata["edit_summary"] == "calc.py +1 −1"
    await application.aclose()
    (project / "calc.py").write_text("# the user's own change\n")  # by hand, after the turn

    out = run_cli(["rewind", "1", "--files", "--yes"], project)
    assert out.returncode == 0, out.stderr
    assert "calc.py: changed outside the app" in out.stdout
    assert (project / "calc.py").read_text() == "# the user's own change\n"
    expected = dict(original, **{"calc.py": tree_state(project)["calc.py"]})
    assert tree_state(project) == expected


async def test_conversation_rewind_is_what_continue_resumes(fake_llm, project: Path) -> None:
    fake_llm.script(
        Reply(tools=[Tool("editFile", {"path": "calc.py", "edits": [{"old_text": "a + b", "new_text": "a + b + 0"}]})]),
        Reply(text="First done."),
        Reply(tools=[Tool("editFile", {"path": "calc.py", "edits": [{"old_text": "+ 0", "new_text": "+ 1"}]})]),
        Reply(text="Second done."),
    )
    application = Application(settings_for(fake_llm, project))
    application.session_state.start()
    await run_turn(application, "first question")
    await run_turn(application, "second question")
    await application.aclose()
    assert "a + b + 1" in (project / "calc.py").read_text()

    out = run_cli(["rewind", "2", "--yes"], project)
    assert out.returncode == 0, out.stderr
    assert "a + b + 0" in (project / "calc.py").read_text()

    fake_llm.script(Reply(text="Third."))
    resumed = run_cli(["-c", "-p", "third question"], project)
    assert resumed.returncode == 0, resumed.stderr
    sent = str(fake_llm.requests[-1].messages)
    assert "first question" in sent and "third question" in sent
    assert "second question" not in sent and "Second done." not in sent

    undo = run_cli(["rewind", "r1", "--yes"], project)  # the rewind was a checkpoint: undo its files
    assert undo.returncode == 0, undo.stderr
    assert "a + b + 1" in (project / "calc.py").read_text()


async def test_interactive_aider_turn_is_rewound(fake_llm, project: Path) -> None:
    """The terminal hand-over (``run_interactive``) stands for the user's aider session: it edits and deletes."""
    original = tree_state(project)

    async def session_in_terminal(run: Any) -> dict:
        (project / "calc.py").write_text("# rewritten in aider\n")
        (project / "keep.txt").unlink()
        return {"status": "success", "content": "aider exited", "metadata": {"edited_files": ["calc.py"]}}

    fake_llm.script(Reply(tools=[Tool("aiderInteractive", {"query": "refactor", "file_context": ["calc.py"]})]),
                    Reply(text="Back."))
    application = Application(settings_for(fake_llm, project), run_interactive=session_in_terminal)
    application.session_state.start()
    events = await run_turn(application, "refactor with me")
    files = finished(events)[0].metadata["files_changed"]
    assert (files["changed"], files["deleted"]) == (1, 1)
    await application.aclose()
    out = run_cli(["rewind", "1", "--yes"], project)
    assert out.returncode == 0, out.stderr
    assert tree_state(project) == original


async def test_edit_file_follows_the_sessions_approval_mode(fake_llm, project: Path) -> None:
    """A mode switched on the session (ACP's modes, ``Session.set_approval_mode``) is what editFile obeys.

    The settings say "ask" and the only approver refuses: once the session allows everything,
    the edit lands without asking (before, editFile read the mode from the settings and asked).
    """
    asked: list[str] = []

    async def refuse(request: Any) -> Any:
        from core.types import Decision
        asked.append(request.title)
        return Decision.DENY

    fake_llm.script(
        Reply(tools=[Tool("editFile", {"path": "calc.py", "edits": [{"old_text": "a + b", "new_text": "b + a"}]})]),
        Reply(text="Edited."),
    )
    settings = settings_for(fake_llm, project).model_copy(update={"approval_mode": "ask"})
    application = Application(settings)
    session = application.session_state
    session.start()
    session.handler.approvals.set_approver(refuse)
    session.set_approval_mode("allow")
    events = await run_turn(application, "swap the operands")
    await application.aclose()
    assert [c.status for c in finished(events)] == ["success"], [c.result for c in finished(events)]
    assert asked == []
    assert "b + a" in (project / "calc.py").read_text()
