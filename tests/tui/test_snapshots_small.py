"""SVG snapshots at 80x24, the smallest supported terminal (issue 16, section 3).

Each class is one screen; each docstring says what the snapshot should show at
80 columns and 24 rows. One app run per snapshot, scripted handlers, a fixed
clock, no sleeps: these are the suite's slowest tests, so each stays lean.
Accept new baselines with ``--snapshot-update`` after looking at them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from core import events as ev
from core.config import Settings
from core.mcp.config import McpConfig, McpServerConfig
from core.mcp.manager import McpManager
from core.sessions.session import SessionInfo
from core.types import ToolCall
from tests.tui.conftest import AskApproval, Gate, settle
from tests.tui.test_snapshots import aider_approval_script, build, chat_text, send, type_and_send, until_approval

SMALL = (80, 24)

LONG_URL_TEXT = (
    "The flow follows https://docs.example.com/guides/authentication/oauth2/authorization-code-flow-with-pkce#step-3 "
    "and the token is checked in `src/auth.py`."
)


class TestOnboardingSmall:
    """No provider configured, at 80x24."""

    def test_opens_at_its_top(self, snap_compare, project):
        """The orange "Set up a model provider" panel shows from its first line ("No model provider is
        configured yet"), not scrolled to its end; the local-server line breaks the URL after "11434/",
        not inside a word; the status line says "no provider"; the footer ends with "f1 Help" and "^p palette"."""
        settings = Settings(project_root=project)
        assert snap_compare(build(settings, project, []), terminal_size=SMALL)


class TestApprovalSmall:
    """The approval modal at 80x24."""

    def test_three_buttons_fit(self, snap_compare, settings, project):
        """"Allow aiderAutomatic?": the files and instruction, why it asks, the line "Always this
        session: aiderAutomatic runs without asking again.", and the three buttons side by side with
        their keys: Allow once (y), Always this session (a), Deny (n) (focused); nothing cut off. The
        footer shows the dialog's keys (y Allow once, a Always this session, n Deny, ↑↓ Scroll), no p."""
        assert snap_compare(build(settings, project, aider_approval_script()), terminal_size=SMALL, run_before=until_approval("document login"))


EDIT = ToolCall(id="call_e", name="editFile", parameters={"path": "src/app.py", "edits": [{"old_text": "return 42", "new_text": "return 43"}]})
EDIT_DIFF = "src/app.py +20 −20\n\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1,40 +1,40 @@\n" + "".join(
    f" def main():\n-    return 42\n+    return 43\n" for _ in range(20))


class TestEditApprovalSmall:
    """editFile's review at 80x24 (issue 26): a diff too long for the screen."""

    def test_diff_scrolls_and_answers_stay(self, snap_compare, settings, project):
        """"editFile: Edit src/app.py?": the diff in colour (headers bold, the hunk header cyan, removed
        lines red, added green) from its first line "src/app.py +20 −20", scrolled inside the dialog
        (a scrollbar on its right); below it, always on screen: "(a) Always this session:
        editFile:src/app.py", "(p) Always this session: editFile on any file in the project", the
        four buttons Allow once (y), This file (a), Project (p), Deny (n) (focused), none cut off. The
        footer shows the dialog's keys: y Allow once, a Always: this file, p Always: project, n Deny, ↑↓ Scroll."""
        script = [
            ev.TurnStarted(query="", subtask_id="s1"),
            ev.AssistantMessage(content="One exact change.", tool_calls=(EDIT,)),
            ev.ToolCallStarted(call=EDIT, started_at=0),
            AskApproval(EDIT, title="editFile: Edit src/app.py?", detail=EDIT_DIFF, session_key="editFile:src/app.py", project_key="editFile:*"),
            Gate(),
        ]
        assert snap_compare(build(settings, project, script), terminal_size=SMALL, run_before=until_approval("bump the answer"))


class TestStatusLineSmall:
    """The main screen mid-turn at 80x24: status line, footer, trace header and a long URL."""

    def test_keeps_model_context_state(self, snap_compare, settings, project):
        """Status line (orange: the context is 86% full): "claude-sonn… · turn 1 · tools 1/10 · ~172k/200k ·
        executeFilePathCom… · Σ $1.37": model, turn, tool counter, context figures, state and cost kept at 80
        columns; the provider's prefix, the meter, the spend's tokens and the warning left out, the model's
        name and the state cut. Footer: Send, Newline, esc Cancel, Pick, … f1 Help and ^p palette,
        whole keys only. Trace: "turn 1 · where is the token checked in the…" cut with an ellipsis.
        Chat: the URL broken after "/" and "-", never inside a word."""
        find = ToolCall(id="call_1", name="executeFilePathCommand", parameters={"command": "git ls-files '*.py'"})
        usage = {"total_tokens": 412_000, "cost": 1.37}
        script = [
            ev.TurnStarted(query="", subtask_id="s1"),
            ev.TextDelta(text=LONG_URL_TEXT),
            ev.AssistantMessage(content=LONG_URL_TEXT, tool_calls=(find,)),
            ev.MetricsUpdated(metrics={"estimated_tokens": 172_000, "context_window": 200_000, "context_estimated_tokens": 10, "usage": usage}),
            ev.ToolCallStarted(call=find, started_at=0),
            Gate(),
        ]
        app = build(settings, project, script)

        async def run_before(pilot: Any) -> None:
            await type_and_send(pilot, "where is the token checked in the authentication flow of this project?")
            await settle(pilot, lambda: "call_1" in pilot.app.trace.records and "src/auth.py" in chat_text(pilot.app))

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


class TestScreensSmall:
    """The other screens at 80x24."""

    def test_help(self, snap_compare, settings, project):
        """/help in the chat, shown from its top ("Keys and commands", the keys table: key, action,
        where), wrapped to the narrow chat column without cutting words; the footer offers ^end Follow."""
        assert snap_compare(build(settings, project, []), terminal_size=SMALL, run_before=send("/help"))

    def test_picker(self, snap_compare, settings, project):
        """The file picker over the app: the query "au", src/auth.py first and selected ([x]), the hint
        line whole."""
        app = build(settings, project, [])

        async def run_before(pilot: Any) -> None:
            await settle(pilot, lambda: pilot.app.files.count >= 3)
            await pilot.press("ctrl+o")
            await settle(pilot, lambda: type(pilot.app.screen).__name__ == "FilePickerScreen")
            await pilot.press("a", "u", "space")
            await settle(pilot, lambda: pilot.app.screen.query_one("#picker-input").value == "au")

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)

    def test_sessions(self, snap_compare, settings, project, monkeypatch):
        """"Sessions of this project": two rows (date, turn count, first prompt cut with an ellipsis),
        the current one marked "(this session)" after its prompt cut with an ellipsis; the hint "Enter opens ·
        Esc closes"; the footer shows the picker's key (esc Close), not the conversation's."""
        from tui.screens.sessions import SessionPickerScreen

        monkeypatch.setenv("TZ", "UTC")
        time.tzset()
        day = 1_790_000_000.0
        infos = [
            SessionInfo(id="b", path=project / "b.jsonl", project_root=project, created=day, updated=day + 3600, first_prompt="where is the token checked in the authentication flow of this project and why", turn_count=3, title=None, size=10),
            SessionInfo(id="a", path=project / "a.jsonl", project_root=project, created=day - 86400, updated=day - 80000, first_prompt="add type hints to auth", turn_count=1, title=None, size=10),
        ]
        app = build(settings, project, [])

        async def run_before(pilot: Any) -> None:
            await pilot.app.push_screen(SessionPickerScreen(infos, current="b"))
            await settle(pilot)

        try:
            assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
        finally:
            monkeypatch.undo()
            time.tzset()

    def test_mcp(self, snap_compare, settings, project):
        """"MCP servers": docs (stopped, its command line cut with an ellipsis) and search (disabled);
        under the list the highlighted server's transport, command and where it is configured."""
        from tui.screens.mcp import McpScreen

        source = str(Path.home() / ".config/assistant-tui/config.toml")
        servers = {
            "docs": McpServerConfig(name="docs", source=source, command="mcp-python", args=("-m", "docs_server", "--root", "/srv/documentation/very/long/path")),
            "search": McpServerConfig(name="search", source=source, url="https://search.example.com/mcp", enabled=False),
        }
        app = build(settings, project, [])

        async def run_before(pilot: Any) -> None:
            manager = McpManager(pilot.app.handler, McpConfig(servers=servers))
            await pilot.app.push_screen(McpScreen(manager))
            await settle(pilot)

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)

    def test_cost(self, snap_compare, settings, project):
        """/cost at 80 columns opens at its top: the totals, the per-turn table, then the per-model
        table with "claude-sonnet-4-5" whole on a line of its own above its figures; figures whole,
        not cut; the footer offers ^end Follow; the status line keeps model, context and state."""
        from core.usage import Usage, UsageLedger

        ledger = UsageLedger()
        ledger.add(1, "claude-sonnet-4-5", Usage(input_tokens=12, cache_write_tokens=4_310, output_tokens=120))
        ledger.add(2, "claude-sonnet-4-5", Usage(input_tokens=3, cache_read_tokens=4_310, cache_write_tokens=410, output_tokens=85))
        summary = ledger.summary(turns=False)
        app = build(settings, project, [ev.MetricsUpdated(metrics={"usage": summary, "estimated_tokens": 4_800})])
        app.handler.usage = ledger

        async def run_before(pilot: Any) -> None:
            await send("hello")(pilot)
            await send("/cost")(pilot)

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)

