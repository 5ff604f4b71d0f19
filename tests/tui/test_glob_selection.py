"""/add and /drop read a pattern the same way (core.globs): through the TUI, each selects the same files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.conftest import SIZE, send, wait_for
from tui.app import AssistantApp
from tui.widgets.chat import NoteMessage

EXTRA = {"src/sub/deep.py": "x = 1\n", "src/notes.txt": "notes\n", "docs/guide.md": "# Guide\n", "tests/test_app.py": "def test(): pass\n"}
PATTERNS = ["src/*.py", "*.md", "src", "src/sub/", "**/*.py", "src/a*.py", "{root}/src/*.py", "src/sub/../*.py", "docs/nothing*", "."]


def picked(app: AssistantApp) -> set[str]:
    return {entry.display for entry in app.context_pane.entries if entry.source == "picked"}


def notes(app: AssistantApp) -> int:
    return len([w for w in app.chat.children if isinstance(w, NoteMessage)])


async def run(pilot, app: AssistantApp, command: str) -> None:
    """Send a command and wait for the note each /add and /drop ends with."""
    before = notes(app)
    await send(pilot, command)
    await wait_for(pilot, lambda: notes(app) > before, what=f"the note of {command!r}")


@pytest.fixture
def grown(project: Path) -> Path:
    for name, text in EXTRA.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    return project


async def test_add_and_drop_select_the_same_files(real_app: AssistantApp, grown: Path) -> None:
    everything = {"README.md", "src/app.py", "src/auth.py", *EXTRA}
    expected = {
        "src/*.py": {"src/app.py", "src/auth.py"}, "*.md": {"README.md"},
        "src": {"src/app.py", "src/auth.py", "src/sub/deep.py", "src/notes.txt"}, "src/sub/": {"src/sub/deep.py"},
        "**/*.py": {"src/app.py", "src/auth.py", "src/sub/deep.py", "tests/test_app.py"}, "src/a*.py": {"src/app.py", "src/auth.py"},
        "{root}/src/*.py": {"src/app.py", "src/auth.py"}, "src/sub/../*.py": {"src/app.py", "src/auth.py"}, "docs/nothing*": set(), ".": everything,
    }
    async with real_app.run_test(size=SIZE) as pilot:
        for template in PATTERNS:
            pattern = template.format(root=grown)
            await run(pilot, real_app, "/add .")
            assert picked(real_app) == everything
            await run(pilot, real_app, f"/drop {pattern}")
            dropped = everything - picked(real_app)
            await run(pilot, real_app, "/drop **")
            assert picked(real_app) == set()
            await run(pilot, real_app, f"/add {pattern}")
            added = picked(real_app)
            assert (pattern, added) == (pattern, dropped)
            assert added == expected[template], pattern
            await run(pilot, real_app, "/drop **")
