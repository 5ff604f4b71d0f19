"""Issue 24 s2: the live, resumed, exported and ACP-loaded views of one recorded session read the same.

One session is made in the real app against the fake server: a command allowed and one denied
(their argv shown as a shell prints it), an overloaded error mid-answer, a turn that failed
unanswered and was sent again, a retry, and an answer stopped with Esc. Then it is redrawn by
``-c`` in a second app, exported with ``/export`` and loaded as an editor's ``session/load`` would.
Each view is read back into the same neutral lines (who spoke, which turn, which tool call with
which outcome, which error under which title, which interruption) and the four must agree.
Before the one renderer, a resumed error read "The turn failed" (live: "The model call failed"),
a resumed interruption "Interrupted." with no place for a reason, the export had no command
line and said "Result (error)" for a denial, and session/load dropped errors and interruptions.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from acp.schema import AgentMessageChunk, ToolCallStart, UserMessageChunk

from core import narration
from core.acp.updates import history_updates
from core.config import Settings
from core.sessions import SessionStore, load_session
from tests.fake_llm import FakeLLM, HTTPError, Reply, StreamError, Tool
from tests.tui.conftest import FixedClock, finish_turn, send, started, wait_for, widgets
from tui.app import AssistantApp, make_app
from tui.widgets.chat import AssistantMessage, NoteMessage, ToolCallLine, UserMessage
from tui.widgets.trace import TurnHeader

SHELL_SPEC = {
    "name": "shell",
    "description": "Run a program.",
    "input_schema": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}, "required": ["command"]},
    "requires_approval": True,
}
ALLOWED = ["git", "status", "my file"]
DENIED = ["rm", "-rf", "build dir"]
OUTCOME = {"success": "done", "completed": "done", "failed": "failed"}
"""ACP has two outcomes: a denial is a failed call there (its content says it was denied)."""


def app_for(settings: Settings, **options: Any) -> AssistantApp:
    from core.app import Application
    from core.handlers.pacing import Pacing

    app = make_app(settings, application=Application(settings, pacing=Pacing(retry_base_delay=0.01)), clock=FixedClock(), **options)
    assert not app.engine_error, app.engine_error
    app.handler.register_tool(SHELL_SPEC, lambda params: "ran " + " ".join(params["command"]))
    return app


def chat_reading(app: AssistantApp) -> list[tuple[str, ...]]:
    """The chat as neutral lines, read from what its widgets show."""
    lines: list[tuple[str, ...]] = []
    for widget in app.chat.children:
        if isinstance(widget, UserMessage):
            lines.append(("user", widget.text))
        elif isinstance(widget, ToolCallLine):
            shown = str(widget.render())
            label = narration.status_label(widget.status)
            assert f" · {label}" in shown, shown
            lines.append(("tool", widget.call.name + "  " + shown.split("  ", 1)[1], label))
        elif isinstance(widget, NoteMessage) and widget.kind in ("error", "warning"):
            lines.append((widget.kind, str(widget.border_title), widget.body.splitlines()[0]))
        elif isinstance(widget, NoteMessage) and widget.body.startswith(narration.interruption_text("user")):
            lines.append(("interrupted", narration.interruption_text("user")))
    return lines


def turns_of_calls(app: AssistantApp) -> list[tuple[int, str]]:
    """Each tool call's turn, as the trace numbers it."""
    return [(record.turn, record.call.name) for record in app.trace.records.values()]


def export_reading(markdown: str) -> tuple[list[tuple[str, ...]], list[tuple[int, str]], list[int]]:
    """The export as the same lines, the turn of each call and the turn of each question."""
    lines: list[tuple[str, ...]] = []
    calls: list[tuple[int, str]] = []
    turns: list[int] = []
    turn = 0
    for block in markdown.split("\n\n"):
        if heading := re.match(r"## User · turn (\d+)", block):
            turn = int(heading.group(1))
            turns.append(turn)
            lines.append(("user", markdown.split(block + "\n\n", 1)[1].split("\n\n", 1)[0]))
        elif summary := re.match(r"<details><summary>tool (.*)</summary>", block):
            line = summary.group(1).replace("&#x27;", "'")
            result = re.search(r"Result \(([^)]*)\):", markdown.split(block, 1)[1])
            assert result, block
            lines.append(("tool", line, result.group(1)))
            calls.append((turn, line.split("  ")[0]))
        elif quoted := re.match(r"> \*\*(Error|Warning)\*\* · ([^:]*): (.*)", block):
            lines.append((quoted.group(1).lower(), quoted.group(2), quoted.group(3).split("\n")[0]))
        elif block.startswith("> _"):
            lines.append(("interrupted", block.strip().strip("> _")))
    return lines, calls, turns


def acp_reading(updates: list[Any]) -> list[tuple[str, ...]]:
    """An editor's session/load as the same lines."""
    lines: list[tuple[str, ...]] = []
    for update in updates:
        if isinstance(update, UserMessageChunk):
            lines.append(("user", update.content.text))
        elif isinstance(update, ToolCallStart):
            content = update.content[0].content.text if update.content else ""
            outcome = "denied" if content.startswith("Denied: ") else OUTCOME[update.status]
            lines.append(("tool", update.title, outcome))
        elif isinstance(update, AgentMessageChunk):
            text = update.content.text.strip()
            if quoted := re.match(r"> \*\*([^*]*)\*\*: (.*)", text):
                kind = "warning" if quoted.group(1) in narration.WARNING_TITLES.values() else "error"
                lines.append((kind, quoted.group(1), quoted.group(2).split("\n")[0]))
            elif text.startswith("> "):
                lines.append(("interrupted", text[2:]))
    return lines


async def test_live_resumed_exported_and_acp_loaded_views_read_the_same(project: Path, fake_llm: FakeLLM) -> None:
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=1)
    first = app_for(settings)
    fake_llm.script(
        Reply(tools=[Tool("shell", {"command": ALLOWED})]), Reply(tools=[Tool("shell", {"command": DENIED})]), Reply(text="Status shown."),
        StreamError(text="Half of an answer that the provider", after_chunks=2),
        HTTPError(400, "bad request"), Reply(text="Answered the second time."),
        HTTPError(529, "Overloaded", "overloaded_error"), Reply(text="After one retry."),
        Reply(text="word " * 2000, chunk=5, tokens_per_second=100),
    )
    async with first.run_test(size=(100, 40)) as pilot:
        await send(pilot, "show the status")
        for key in ("y", "n"):
            await wait_for(pilot, lambda: type(first.screen).__name__ == "ApprovalScreen")
            asking = first.screen
            await pilot.press(key)
            await wait_for(pilot, lambda: first.screen is not asking)
        await finish_turn(pilot)
        for query in ("explain the parser", "fail early", "fail early", "retry please"):
            await send(pilot, query)
            await finish_turn(pilot)
        await send(pilot, "write a lot")
        await wait_for(pilot, lambda: bool(widgets(first, AssistantMessage)[-1].text))
        await pilot.press("escape")
        await finish_turn(pilot)
        await send(pilot, "/export out.md")
        await wait_for(pilot, lambda: (project / "out.md").exists())
        live, live_calls = chat_reading(first), turns_of_calls(first)
        live_headers = [header.number for header in first.trace.query(TurnHeader)]
        session_id = first.application.session.id

    second = app_for(settings, continue_session=True)
    async with second.run_test(size=(100, 40)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: any("Resumed session" in note.body for note in widgets(second, NoteMessage)))
        resumed, resumed_calls = chat_reading(second), turns_of_calls(second)
        resumed_headers = [header.number for header in second.trace.query(TurnHeader)]
        assert second.status.metrics["user_turns"] == 5
        assert second.prompt.text == "", "a replayed failure gives nothing back to the prompt"

    exported, exported_calls, exported_turns = export_reading((project / "out.md").read_text())
    loaded = load_session(SessionStore().open(session_id, project))
    acp = acp_reading(history_updates(loaded.messages, project, loaded.incidents, loaded.trace))

    # what the session holds, as the live chat showed it
    shown = lambda argv: "shell  " + narration.command_line({"command": argv})  # noqa: E731
    assert live == [
        ("user", "show the status"), ("tool", shown(ALLOWED), "done"), ("tool", shown(DENIED), "denied"),
        ("user", "explain the parser"), ("error", "The model call failed", live[4][2]),
        ("user", "fail early"), ("error", "The model call failed", live[6][2]), ("user", "fail early"),
        ("user", "retry please"), ("warning", "Retrying", live[9][2]),
        ("user", "write a lot"), ("interrupted", "Interrupted."),
    ], live
    assert "'my file'" in live[1][1] and "'build dir'" in live[2][1], "argv as a shell prints it"
    assert "overloaded" in live[4][2].lower() and "bad request" in live[6][2]
    # the four views read the same
    assert resumed == live
    assert exported == live
    assert acp == live
    # one numbering: the trace live and resumed, the export's headings
    assert live_calls == resumed_calls == exported_calls == [(1, "shell"), (1, "shell")]
    assert live_headers == resumed_headers == [1]
    assert exported_turns == [1, 2, 3, 3, 4, 5]
