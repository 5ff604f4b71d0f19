"""SVG snapshots of reading the chat (issue 16 section 2): see tests/tui/test_snapshots.py for the conventions."""

from __future__ import annotations

from typing import Any

from core import events as ev
from core.types import ToolCall
from tests.tui.conftest import FixedClock, Gate, ScriptedHandler, settle, text_reply
from tui.app import make_app
from tui.widgets.chat import AssistantMessage

READ = ToolCall(id="call_1", name="readFile", parameters={"path": "src/auth.py"})
FIRST = "\n\n".join(f"Step {i}: the session token is checked against the store before `login(user)` returns." for i in range(1, 4)) + (
    "\n\n```python\ndef login(user):\n    token = session_store.lookup(user.session_id, refresh=True, max_age=SESSION_MAX_AGE)\n    return user\n```\n"
)
START = "## Where auth lives\n\nThe login flow is in `src/auth.py`:\n\n- `login(user)` returns the user\n- `logout()` ends the session\n\n"
MORE = "Reading the file to be sure. " * 6 + "\n\n"


def _script(resume: Gate) -> Any:
    def script(query: str) -> list[Any]:
        if query == "explain the session":
            return text_reply(FIRST)
        return [
            ev.TurnStarted(query="", subtask_id="s2"),
            *[ev.TextDelta(text=START[i : i + 9]) for i in range(0, len(START), 9)],
            resume,
            ev.TextDelta(text=MORE),
            ev.AssistantMessage(content=START + MORE, tool_calls=(READ,)),
            ev.ToolCallStarted(call=READ, started_at=0),
            Gate(),
        ]

    return script


def _run_before(resume: Gate) -> Any:
    async def run_before(pilot: Any) -> None:
        app = pilot.app
        app.prompt.load_text("explain the session")
        await pilot.press("enter")
        await settle(pilot, lambda: not app.turn_running and any(m.finished for m in app.chat.query(AssistantMessage)))
        app.prompt.load_text("where is auth?")
        await pilot.press("enter")
        await settle(pilot, lambda: len(app.handler.queries) == 2, what="the second question sent")
        await settle(pilot, lambda: "ends the session" in "".join(m.shown for m in app.chat.query(AssistantMessage)))
        await pilot.press("pageup")  # the reader goes back to the first answer
        resume.open()
        await settle(pilot, lambda: app.chat.unseen == 2 and "Reading the file" in app.chat.query(AssistantMessage).last().shown)

    return run_before


class TestNewOutputMarker:
    """Scrolled up while an answer streams: the view stays where the reader is."""

    def test_mid_stream_marker_80x24(self, snap_compare, settings, project):
        """The first answer (steps, then a code block whose long line folds under a "↪") stays in
        view, not the streaming end; docked at the chat's bottom, "2 new messages ↓ · ctrl+end follows"; the footer offers "^end Follow"."""
        resume = Gate()
        app = make_app(settings, handler=ScriptedHandler(_script(resume), project_root=project, settings=settings), clock=FixedClock())
        assert snap_compare(app, terminal_size=(80, 24), run_before=_run_before(resume))

    def test_mid_stream_marker_120x40(self, snap_compare, settings, project):
        """As at 80x24, with the wider panes: the reader's view, the marker, ^end Follow in the footer."""
        resume = Gate()
        app = make_app(settings, handler=ScriptedHandler(_script(resume), project_root=project, settings=settings), clock=FixedClock())
        assert snap_compare(app, terminal_size=(120, 40), run_before=_run_before(resume))
