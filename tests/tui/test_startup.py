"""Start-up as the console script runs it: settings loaded after the first frame, their problems told to the user."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core import paths
from core.config import load_settings
from tests.tui.conftest import SIZE, FixedClock, wait_for, widgets
from tui.app import make_app
from tui.widgets.chat import NoteMessage

REPO = Path(__file__).resolve().parents[2]


def test_invalid_settings_end_the_app_with_the_commands_own_error_line(project: Path) -> None:
    """The real entry point: the prompt is painted, the settings fail, and the app exits 2 with one human line."""
    config = paths.config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('max_tool_calls = "lots"\n')
    env = dict(os.environ, PYTHONPATH=str(REPO), TEXTUAL_DRIVER="textual.drivers.headless_driver:HeadlessDriver")
    out = subprocess.run([sys.executable, "-c", "from tui.cli import main; raise SystemExit(main())"], cwd=project, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == "assistant-tui: configuration error: max_tool_calls must be a non-negative number, got 'lots'"


def test_the_first_frame_imports_no_settings_sdk_engine_or_event_types(project: Path) -> None:
    """The real entry point paints its focused prompt before pydantic, the SDKs, the engine, the events and the session load (issue 23)."""
    ready = project / "ready.json"
    env = dict(os.environ, PYTHONPATH=str(REPO), TEXTUAL_DRIVER="textual.drivers.headless_driver:HeadlessDriver",
               ANTHROPIC_API_KEY="sk-ant-test-not-a-real-key", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    out = subprocess.run([sys.executable, str(REPO / "benchmarks" / "startup_child.py"), "app", str(ready)], cwd=project, env=env,
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert ready.exists(), out.stderr[-2000:]
    assert json.loads(ready.read_text())["imported"] == []


async def test_what_loading_ignored_is_said_in_the_chat(project: Path) -> None:
    """An untrusted project's endpoint and an unknown config key: logged before, now each a warning on screen."""
    (project / ".env").write_text("ANTHROPIC_BASE_URL=http://127.0.0.1:9/elsewhere\n")
    config = paths.config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("bogus_key = 1\n")
    settings = load_settings({"anthropic_api_key": "test-key"}, project_root=project)
    assert settings.anthropic_base_url != "http://127.0.0.1:9/elsewhere"
    app = make_app(settings, clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len([n for n in widgets(app, NoteMessage) if n.border_title == "Settings"]) == 2)
        bodies = [note.body for note in widgets(app, NoteMessage) if note.border_title == "Settings"]
        assert "ignoring ANTHROPIC_BASE_URL" in bodies[0] and "not trusted" in bodies[0] and "--trust" in bodies[0]
        assert bodies[1] == f"ignoring unknown keys in {config}: bogus_key"


DEFERRED_IMPORTS = """
import asyncio, json, sys, threading
from pathlib import Path

imported_on = {}


class Note:  # which thread imports each module first
    def find_spec(self, name, path=None, target=None):
        if name in ("tui.widgets.chat", "tui.commands", "markdown_it"):
            imported_on.setdefault(name, threading.current_thread().name)
        return None


sys.meta_path.insert(0, Note())
from core.config import load_settings
from tui.app import make_app


async def main():
    app = make_app(None, load_settings=lambda: load_settings(project_root=Path.cwd()), project_root=Path.cwd())
    async with app.run_test(size=(80, 24)) as pilot:
        await app.wait_started()
        await pilot.press("h", "i", "enter")  # the commands, built from what the thread imported
        while not [m for m in app.chat.children if type(m).__name__ == "UserMessage"]:
            await pilot.pause()
    print(json.dumps(imported_on))


asyncio.run(main())
"""


def test_the_chat_and_the_commands_are_imported_after_the_first_frame_off_the_event_loop(project: Path) -> None:
    """Markdown, the chat's messages and the command registry (about 100 ms) load in a thread once the prompt shows (issue 23)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), ANTHROPIC_API_KEY="sk-ant-test-not-a-real-key", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    out = subprocess.run([sys.executable, "-c", DEFERRED_IMPORTS], cwd=project, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr[-2000:]
    imported_on = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(imported_on) == {"tui.widgets.chat", "tui.commands", "markdown_it"}, imported_on
    assert "MainThread" not in imported_on.values(), imported_on
