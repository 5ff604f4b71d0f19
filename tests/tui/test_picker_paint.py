"""The file picker while the user types: rows change in place, no widget is mounted and no layout is asked for (issue 23, picker p99)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui.conftest import SIZE, refreshed, wait_for
from tui.app import AssistantApp
from tui.widgets.path_list import PathList


def screen_lines(app: AssistantApp) -> list[str]:
    """The rows a terminal shows for the top screen."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def open_picker(pilot: Any, app: AssistantApp, files: int) -> PathList:
    await wait_for(pilot, lambda: app.files.count >= files, what="the project's files listed")
    await pilot.press("ctrl+o")
    await wait_for(pilot, lambda: type(app.screen).__name__ == "FilePickerScreen")
    results = app.screen.query_one(PathList)
    await wait_for(pilot, lambda: results.current is not None, what="the first results shown")
    await refreshed(pilot, results)
    return results


async def test_typing_mounts_nothing_and_lays_out_nothing(real_app: AssistantApp) -> None:
    """Six keys into the picker: the same widgets before and after, and not one layout of the screen
    (the search field's growing text asked for a layout of the whole screen on every key)."""
    async with real_app.run_test(size=SIZE) as pilot:
        results = await open_picker(pilot, real_app, 3)
        screen = real_app.screen
        widgets = {id(node) for node in screen.walk_children(with_self=True)}
        layouts: list[object] = []
        original = screen._refresh_layout

        def counted(*args: Any, **kwargs: Any) -> Any:
            layouts.append(args)
            return original(*args, **kwargs)

        screen._refresh_layout = counted  # type: ignore[method-assign]
        for text in ("s", "sr", "src", "src/", "src/a", "src/au"):
            await pilot.press(text[-1] if text[-1] != "/" else "slash")
            await wait_for(pilot, lambda t=text: screen.query_one("#picker-input").value == t)
        await wait_for(pilot, lambda: results.current == "src/auth.py", what="src/auth.py first")
        await refreshed(pilot, results)
        assert {id(node) for node in screen.walk_children(with_self=True)} == widgets
        assert layouts == []
        assert any("[ ] src/auth.py" in line for line in screen_lines(real_app)), "\n".join(screen_lines(real_app))


async def test_rows_follow_the_cursor_the_marks_and_a_click(real_app: AssistantApp, project: Path) -> None:
    """Down moves the highlight, Space marks the row, a click moves the cursor; what is drawn follows each
    (only the rows that changed are repainted, so a stale row would show here)."""
    for n in range(3):
        (project / f"mod{n}.py").write_text("x = 1\n")
    async with real_app.run_test(size=SIZE) as pilot:
        results = await open_picker(pilot, real_app, 6)
        await pilot.press(*"mod")
        await wait_for(pilot, lambda: [path for path, _ in results.matches] == ["mod0.py", "mod1.py", "mod2.py"], what="three mod files")
        await pilot.press("down", "space")
        await wait_for(pilot, lambda: real_app.screen.selected == ["mod1.py"])
        await refreshed(pilot, results)
        shown = "\n".join(screen_lines(real_app))
        assert all(row in shown for row in ("[ ] mod0.py", "[x] mod1.py", "[ ] mod2.py")), shown
        region = results.content_region
        await pilot.click(PathList, offset=(region.x - results.region.x + 2, 2))
        await wait_for(pilot, lambda: results.current == "mod2.py", what="the clicked row under the cursor")
        await refreshed(pilot, results)
        cursor = results.get_component_rich_style("path-list--cursor").bgcolor
        row = results.region.y + 2
        assert "[ ] mod2.py" in real_app.screen._compositor.render_strips()[row].text
        styles = {segment.style.bgcolor for segment in real_app.screen._compositor.render_strips()[row] if "2.py" in segment.text}
        assert styles and all(color is not None and color.triplet == cursor.triplet for color in styles)  # type: ignore[union-attr]
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(real_app.screen).__name__ != "FilePickerScreen")
        await wait_for(pilot, lambda: "mod1.py" in [entry.display for entry in real_app.context_pane.entries])


async def test_a_query_wider_than_the_field_scrolls_to_the_cursor(real_app: AssistantApp) -> None:
    """The field's text grows without a layout: a query longer than the field still shows its end where it is typed."""
    async with real_app.run_test(size=(80, 24)) as pilot:
        await open_picker(pilot, real_app, 3)
        field = real_app.screen.query_one("#picker-input")
        query = "".join(f"k{n:02d}" for n in range(30))  # 90 characters, each run of three unique
        await pilot.press(*query)
        await wait_for(pilot, lambda: field.value == query)
        await refreshed(pilot, field)
        row = screen_lines(real_app)[field.content_region.y]
        assert "k28k29" in row and "k00" not in row, row
