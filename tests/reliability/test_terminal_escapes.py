"""Terminal escapes and Rich markup in model output and tool output are shown as literal text.

A model (or a file it reads) can carry OSC 52 (write the user's clipboard), OSC 8
(disguised hyperlinks), CSI cursor movement and screen clearing, 8-bit C1 controls
and Rich markup. None of it may reach the terminal as a control sequence: not from
the headless CLI (text or JSONL) and not from any pane of the TUI (chat, trace,
approval modal). The TUI is driven by Pilot with the real engine and the fake
model server; what would be written to the terminal is read from the screen's
compositor (the plain text of every rendered strip).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.config import Settings
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.reliability.support import API_KEY_CANARY, assert_no_leaks

REPO = Path(__file__).resolve().parents[2]

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
OSC8 = "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\"
CURSOR = "\x1b[2J\x1b[1;1H\x1b[2K\x1b[31m"
C1 = "\x9b2J\x9d0;title\x9c"
MARKUP = "[bold red]not bold[/] [link=https://evil.example]x[/link]"
EVIL = f"start {OSC52} {OSC8} {CURSOR} {C1} {MARKUP} end"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters that must never reach the terminal from content (tab and newline are text)."""


def raw_controls(text: str) -> list[str]:
    return sorted({repr(match) for match in CONTROL.findall(text)})


# -- headless ---------------------------------------------------------------------------


def run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), ANTHROPIC_API_KEY=API_KEY_CANARY)
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)  # a hang guard: one CLI run took 55-85 s at load 13 (stress --cpu 2)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "notes.txt").write_text(f"release notes\n{EVIL}\n")
    return root


def test_headless_text_mode_prints_escapes_literally(fake_llm: FakeLLM, project: Path) -> None:
    fake_llm.script(Reply(text=f"Here you go: {EVIL}"))
    out = run_cli(["-p", "show me"], project)
    assert out.returncode == 0, out.stderr
    assert "[bold red]not bold[/]" in out.stdout
    assert raw_controls(out.stdout) == [], raw_controls(out.stdout)


def test_headless_jsonl_escapes_everything(fake_llm: FakeLLM, project: Path) -> None:
    fake_llm.script(Reply(text=f"Reading. {EVIL}", tools=[Tool("readFile", {"path": "notes.txt"})]),
                    Reply(text=f"It says: {EVIL}"))
    out = run_cli(["-p", "what do the notes say?", "--output-format", "jsonl"], project)
    assert out.returncode == 0, out.stderr
    assert raw_controls(out.stdout) == []
    events = [json.loads(line) for line in out.stdout.splitlines()]
    finished = next(e for e in events if e["kind"] == "tool_call_finished")
    assert OSC52 in finished["result"], "the content itself is kept (escaped by JSON), not altered"
    assert events[-1]["result"]["content"] == f"It says: {EVIL}"
    assert_no_leaks(fake_llm)


# -- the TUI -------------------------------------------------------------------------------


def screen_text(app: Any) -> str:
    """The plain text of every strip the screens would write to the terminal."""
    lines = []
    for screen in app.screen_stack:
        update = screen._compositor.render_update(full=True)
        lines += ["".join(strip.text for strip in line) for line in update.strips]
    return "\n".join(lines)


async def test_tui_shows_escapes_and_markup_literally(fake_llm: FakeLLM, project: Path) -> None:
    from tests.tui.conftest import FixedClock, finish_turn, refreshed, send, wait_for
    from tui.app import make_app
    from tui.screens.approval import ApprovalScreen
    from tui.widgets.trace import ToolCallView

    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url,
                        anthropic_api_key=API_KEY_CANARY, max_retries=0)
    app = make_app(settings, clock=FixedClock())
    fake_llm.script(
        Reply(text=f"Reading. {EVIL}", tools=[
            Tool("readFile", {"path": "notes.txt"}),
            Tool("aiderAutomatic", {"prompt": f"apply {EVIL}", "file_context": ["notes.txt"]}),
        ]),
        Reply(text=f"It says: {EVIL}"),
    )
    seen: dict[str, str] = {}
    async with app.run_test(size=(160, 60)) as pilot:
        await send(pilot, f"show me {MARKUP}")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await refreshed(pilot)
        seen["approval"] = screen_text(app)
        await pilot.press("n")
        await finish_turn(pilot)
        for view in app.query(ToolCallView):
            view.expanded = True
        await refreshed(pilot)
        seen["chat and trace"] = screen_text(app)
        assert app.is_running
    rendered = "\n".join(seen.values())
    assert "[bold red]not bold[/]" in rendered, "Rich markup is shown as text"
    problems = {where: raw_controls(text) for where, text in seen.items() if raw_controls(text)}
    assert problems == {}
