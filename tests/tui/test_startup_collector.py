"""The console script runs no garbage collection before its first frame, and turns the collector back on after it (issue 23).

Start-up's imports, stylesheets and widgets are tens of thousands of objects that live for
the whole run; young and middle collections walked them repeatedly before the prompt was
on screen. Seen from outside: CPython's own collector callbacks in the real entry point.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import gc, json, sys, weakref

    RESULT = sys.argv[1]
    seen = {"before_frame": 0, "after_frame": 0}
    state = {"launched": False, "painted": False}
    garbage = {}

    def watch(phase, info):
        if phase == "start" and state["launched"]:
            seen["after_frame" if state["painted"] else "before_frame"] += 1

    class Node:
        pass

    from textual.app import App  # first, to watch its frames (the console script imports it in launch)

    original = App._display

    def display(self, screen, renderable):
        original(self, screen, renderable)
        if renderable is None or state["painted"] or self.focused is None or self.focused.id != "prompt":
            return
        state["painted"] = True

        def check():  # the condition itself: the collector back on, and what start-up left dead collected
            if gc.isenabled() and garbage["node"]() is None:
                with open(RESULT, "w", encoding="utf-8") as fh:
                    json.dump(seen, fh)
                self.exit()

        self.set_interval(0.01, check)

    App._display = display
    import tui.cli

    launch = tui.cli.launch

    def launched(*args, **kwargs):  # count from the console script's launch of the app on
        state["launched"] = True
        node = Node()
        node.cycle = node  # garbage only a collection frees, left before the first frame
        garbage["node"] = weakref.ref(node)
        del node
        return launch(*args, **kwargs)

    gc.callbacks.append(watch)
    tui.cli.launch = launched
    tui.cli.main([])
    """
)


def test_no_collection_before_the_first_frame_and_the_collector_back_after(project: Path) -> None:
    result = project / "collector.json"
    env = dict(os.environ, PYTHONPATH=str(REPO), TEXTUAL_DRIVER="textual.drivers.headless_driver:HeadlessDriver",
               ANTHROPIC_API_KEY="sk-ant-test-not-a-real-key", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    out = subprocess.run([sys.executable, "-c", CHILD, str(result)], cwd=project, env=env, capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    assert result.exists(), out.stderr[-2000:]
    seen = json.loads(result.read_text())
    assert seen["before_frame"] == 0, f"{seen['before_frame']} collections before the first frame"
    assert seen["after_frame"] >= 1, seen  # collections run again once the prompt is on screen (start-up's garbage was freed)
