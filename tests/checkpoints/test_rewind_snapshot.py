"""The /rewind screen at 80x24 (SVG snapshot; accept a new baseline with --snapshot-update after looking at it)."""

from __future__ import annotations

from typing import Any

from textual.app import App

from core.checkpoints.log import Row
from core.checkpoints.objects import Entry
from core.checkpoints.rewind import FilePlan, RewindPlan
from tests.tui.conftest import wait_for
from tui.screens.rewind import RewindScreen

ROWS = [
    Row(key="1", turn=1, label="add a subtract function to calc.py", position=0,
        files=(("calc.py", "changed", 3, 1),)),
    Row(key="2", turn=2, label="run the tests and fix what fails", position=1,
        files=(("tests/test_calc.py", "created", 12, 0), ("calc.py", "changed", 1, 1), ("old.txt", "deleted", 0, 4))),
    Row(key="3", turn=3, label="explain the module", position=2),
]
DIFF = "\n".join([
    "--- a/calc.py", "+++ b/calc.py", "@@ -1,4 +1,4 @@", " def add(a, b):", "-    return b + a", "+    return a + b",
    "--- a/tests/test_calc.py", "+++ /dev/null", "@@ -1,3 +0,0 @@", "-from calc import add", "-", "-def test_add():",
    "# notes.md: changed outside the app since; left alone",
])


class RewindHost(App[None]):
    def on_mount(self) -> None:
        async def plan_for(row: Any) -> RewindPlan:
            files = [FilePlan("calc.py", Entry("100644", "a" * 40), Entry("100644", "b" * 40), Entry("100644", "b" * 40)),
                     FilePlan("notes.md", Entry("100644", "c" * 40), Entry("100644", "d" * 40), Entry("100644", "e" * 40))]
            return RewindPlan(row=row, files=files, diff=DIFF)

        self.push_screen(RewindScreen(ROWS, plan_for, selected="2"))


class TestRewindScreenSmall:
    """The rewind list and the diff it will apply, at 80x24."""

    def test_list_diff_and_keys_fit(self, snap_compare):
        """Title "Rewind to before…"; three rows ("turn 1", "turn 2" highlighted, "turn 3 … no file changes") with
        their files and +/− counts; below, "1 file(s) would be restored", "changed outside the app since (left alone
        unless o): notes.md", then the diff with red removals and green additions; the hint "PgUp/PgDn scroll the
        diff · outside edits: left alone (o overwrites them)"; the footer lists the screen's keys (b Both, f Files,
        c Conversation, o Overwrite outside edits, esc Close); a long prompt is cut, never its files' summary."""

        async def planned(pilot: Any) -> None:
            await wait_for(pilot, lambda: "2" in getattr(pilot.app.screen, "plans", {}))
            await pilot.pause()

        assert snap_compare(RewindHost(), terminal_size=(80, 24), run_before=planned)
