"""/rewind in the TUI (Pilot, the real app at 80x24): an editFile turn and a /run, rewound byte for byte (issue 26)."""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from tests.checkpoints.support import git_dir_hash, tree_state
from tests.fake_llm import Reply, Tool
from tests.tui.conftest import FixedClock, finish_turn, send, started, wait_for
from tui.app import make_app
from tui.screens.rewind import RewindScreen

RUN = "/run sh -c 'rm keep.txt; echo made > made.txt; mv pkg lib'"


async def test_rewind_screen_restores_files_and_conversation(fake_llm, project: Path, sandbox) -> None:
    original, git_before = tree_state(project), git_dir_hash(project)
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test",
                        max_retries=0, approval_mode="allow")
    fake_llm.script(
        Reply(tools=[Tool("editFile", {"path": "calc.py", "edits": [{"old_text": "a + b", "new_text": "a - b"}]})]),
        Reply(text="Changed it."),
    )
    app = make_app(settings, clock=FixedClock())
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await send(pilot, "make add subtract")
        await finish_turn(pilot)
        assert "a - b" in (project / "calc.py").read_text()
        await send(pilot, RUN)
        await finish_turn(pilot)
        await wait_for(pilot, lambda: (project / "made.txt").exists() and not (project / "keep.txt").exists())

        await send(pilot, "/rewind")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen))
        screen = app.screen
        await wait_for(pilot, lambda: "1" in screen.plans, what="the diff of turn 1 worked out")
        diff = str(screen.query_one("#rewind-diff").render())
        assert "+    return a + b" in diff and "made.txt" in diff
        await pilot.press("b")
        await wait_for(pilot, lambda: not isinstance(app.screen, RewindScreen))
        await wait_for(pilot, lambda: tree_state(project) == original, what="the files restored")
        await wait_for(pilot, lambda: not app.engine.session.history, what="the conversation rewound")
    assert git_dir_hash(project) == git_before
