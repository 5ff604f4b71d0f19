"""Process-wide tuning happens at the console entry point only (tui.runtime), never on import or app build."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import textual.constants

from tui import runtime

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, os, sys
before = gc.get_threshold()
{setup}
from core.config import Settings
from tui.app import make_app
import textual.constants
app = make_app(Settings(project_root=os.getcwd(), anthropic_api_key="k"), handler=type("Handler", (), dict())())
import rich._wrap, rich.text, textual.content
print(json.dumps({{"fps": textual.constants.MAX_FPS, "env": os.environ.get("TEXTUAL_FPS"),
                  "threshold_changed": gc.get_threshold() != before,
                  "wrap_patched": rich.text.divide_line is not rich._wrap.divide_line or textual.content.divide_line is not rich._wrap.divide_line}}))
"""


def probe(setup: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    done = subprocess.run([sys.executable, "-c", PROBE.format(setup=setup)], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_and_building_the_app_changes_nothing_process_wide() -> None:
    assert probe("") == {"fps": 60, "env": None, "threshold_changed": False, "wrap_patched": False}


def test_the_entry_points_runtime_sets_the_frame_rate_and_the_collector() -> None:
    assert probe("from tui import runtime; runtime.apply()") == {"fps": runtime.FRAME_RATE, "env": str(runtime.FRAME_RATE), "threshold_changed": True, "wrap_patched": False}


def test_the_entry_point_installs_the_line_wrapping() -> None:
    """``tui.cli.launch`` (the console script) puts :func:`tui.wrap.divide_line` in place for Rich and Textual; building the app does not."""
    script = (
        "import pathlib, rich.text, textual.content, tui.app, tui.wrap\n"
        "tui.app.run_app = lambda *args, **kwargs: 0\n"
        "from tui.cli import launch\n"
        "assert launch(lambda: None, project_root=pathlib.Path('.')) == 0\n"
        "print(rich.text.divide_line is tui.wrap.divide_line and textual.content.divide_line is tui.wrap.divide_line)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True"]


def test_a_users_own_frame_rate_wins() -> None:
    environ = {"TEXTUAL_FPS": "30"}
    runtime.set_frame_rate(environ)
    assert environ == {"TEXTUAL_FPS": "30"}


def test_the_suite_runs_at_the_production_frame_rate() -> None:
    assert textual.constants.MAX_FPS == runtime.FRAME_RATE
