"""SVG snapshot of large pastes at 80x24: a chip in the chat and a chip in the prompt.

Accept a new baseline with ``pytest tests/tui/test_snapshots_paste.py --snapshot-update`` after looking at it.
"""

from __future__ import annotations

from typing import Any

from textual import events

from tests.tui.conftest import FixedClock, ScriptedHandler, settle, text_reply
from tests.tui.test_paste import LOG
from tui.app import make_app

TRACEBACK = "Traceback (most recent call last):\n" + "".join(f'  File "src/app.py", line {i}, in step_{i}\n    step_{i + 1}()\n' for i in range(40)) + "RecursionError: too deep\n"


class TestPaste:
    """A large paste is one chip, in the prompt and in the chat."""

    def test_collapsed_paste_80x24(self, snap_compare, settings, project):
        """The chat shows the sent message "why is this slow?" with one highlighted chip
        "▸ pasted 2,000 lines, 124 KB" and "thanks" right under it, then the
        answer; the prompt holds "and this: " followed by the highlighted chip
        "[pasted #2: 82 lines, 2.2 KB]" with the cursor after it; the footer offers "f4 Expand paste"."""
        handler = ScriptedHandler(lambda query: text_reply("The log shows one slow worker."), project_root=project, settings=settings)
        app = make_app(settings, handler=handler, clock=FixedClock())

        async def run_before(pilot: Any) -> None:
            app.prompt.insert("why is this slow?\n")
            app.post_message(events.Paste(LOG))
            await pilot.pause()
            app.prompt.insert("\nthanks")
            await pilot.press("enter")
            await settle(pilot, lambda: not app.turn_running)
            app.prompt.insert("and this: ")
            app.post_message(events.Paste(TRACEBACK))
            await settle(pilot, lambda: "[pasted #2" in app.prompt.text)

        assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
