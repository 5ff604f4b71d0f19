"""At 80x24 a path too long for its row keeps its file name, in the file picker and in the context pane (issue 23, the first hour)."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import SIZE, refreshed, send, wait_for
from tui.app import AssistantApp
from tui.format import format_tokens
from tui.widgets.path_list import PathList, shown_characters

DEEP = "very/long/directory/name/that/keeps/going/and/going/forever"
NAME = "some_really_long_module_name_for_testing.py"


def screen_lines(app: AssistantApp) -> list[str]:
    """The rows a terminal shows for the top screen."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def test_a_deep_path_keeps_its_file_name_in_the_picker(real_app: AssistantApp, project: Path) -> None:
    """ctrl+o, "forever": the row shows the whole file name, the directories lose their middle to an ellipsis
    (the row was cut at the right: ".../forever/some" and no name)."""
    (project / DEEP).mkdir(parents=True)
    (project / DEEP / NAME).write_text("x = 1\n")
    async with real_app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: real_app.files.count >= 4, what="the project's files listed")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: type(real_app.screen).__name__ == "FilePickerScreen")
        await pilot.press(*"forever")
        results = real_app.screen.query_one(PathList)
        await wait_for(pilot, lambda: results.current == f"{DEEP}/{NAME}", what="the deep file under the cursor")
        await refreshed(pilot, results)
        row = next((line for line in screen_lines(real_app) if "[ ] very" in line), "")
        assert f"/{NAME}" in row and "…" in row, "\n".join(screen_lines(real_app))
        assert row.index("[ ] very") + len("[ ] ") + len(DEEP) + len(NAME) > results.scrollable_content_region.right  # too long for the row


async def test_a_deep_path_keeps_its_file_name_in_the_context_pane(real_app: AssistantApp, project: Path) -> None:
    """/add a deep file: its row in the 28-column pane shows "/login.py" and its token count, an ellipsis
    in the directories (the row showed "very/long/directory/nam…" and no name)."""
    (project / DEEP).mkdir(parents=True)
    (project / DEEP / "login.py").write_text("def login(user):\n    return user\n")
    async with real_app.run_test(size=SIZE) as pilot:
        await send(pilot, f"/add {DEEP}/login.py")
        pane = real_app.context_pane
        await wait_for(pilot, lambda: [entry.display for entry in pane.entries] == [f"{DEEP}/login.py"], what="the file in the context")
        await refreshed(pilot)
        region = pane.content_region
        rows = [line[region.x : region.right] for line in screen_lines(real_app)[region.y : region.bottom]]
        row = next((row for row in rows if row.startswith("● ")), "")
        tokens = format_tokens(pane.entries[0].tokens)
        assert "…" in row and row.rstrip().endswith(f"/login.py {tokens}"), "\n".join(rows)


def test_what_a_row_keeps_of_a_path() -> None:
    """The whole path when it fits; else its start, an ellipsis, then "/name"; a name too long alone keeps its end."""

    def shown(path: str, room: int) -> str:
        return "".join("…" if index is None else path[index] for index in shown_characters(path, room))

    assert shown("src/app.py", 20) == "src/app.py"
    assert shown("src/deep/inner/module.py", 20) == "src/deep/…/module.py"
    assert shown("a_very_long_module_name.py", 12) == "…ule_name.py"
    assert all(len(shown("src/deep/inner/module.py", room)) == room for room in range(1, 24))
