"""The screens at 80x24, read as a terminal shows them (issue 23, items 7 and 10).

The status line keeps the tool-call counter during a loop and says what is happening;
``/cost`` and ``/help`` use the narrow chat column whole; the context pane's scrollbar
never covers a token count; the transcript (f2) and ``/task`` diffs wrap long lines;
commands show as command lines, not JSON.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from core import events as ev
from core.types import ToolCall
from tests.tui.conftest import FixedClock, Gate, ScriptedHandler, refreshed, send, settle, wait_for
from tui.app import AssistantApp, make_app
from tui.help import LongNote
from tui.widgets.chat import ToolCallLine
from tui.widgets.context import ContextEntry

SMALL = (80, 24)
LONG_WORDS = " ".join(f"word{i:03}" for i in range(40))  # 319 characters, no place a line may be cut silently


def build(settings: Any, project: Path, script: Any) -> AssistantApp:
    return make_app(settings, handler=ScriptedHandler(script, project_root=project, settings=settings), clock=FixedClock())


def screen_lines(app: AssistantApp) -> list[str]:
    """The rows a terminal shows for the top screen."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def status_text(app: AssistantApp) -> str:
    return str(app.status.render())


# -- the status line --------------------------------------------------------------------


def loop_script(gate: Gate, call: ToolCall) -> list[Any]:
    usage = {"total_tokens": 412_000, "cost": 1.37}
    return [
        ev.TurnStarted(query="", subtask_id="s1"),
        gate,
        ev.TextDelta(text="Let me look."),
        ev.AssistantMessage(content="Let me look.", tool_calls=(call,)),
        ev.MetricsUpdated(metrics={"estimated_tokens": 41_000, "context_window": 200_000, "usage": usage}),
        ev.ToolCallStarted(call=call, started_at=0),
        Gate(),
    ]


async def test_the_status_line_keeps_turn_and_tool_counter_when_a_cost_is_shown(settings, project) -> None:
    """At 80 columns, during a tool loop with a cost: "turn 1 · tools 1/10" and the cost stay; the meter and
    the provider's prefix go, the spend loses its tokens and the state its verb ("readFile…"). Before the
    first token it says it waits for the model."""
    gate = Gate()
    call = ToolCall(id="c1", name="readFile", parameters={"path": "src/auth.py"})
    app = build(settings, project, loop_script(gate, call))
    async with app.run_test(size=SMALL) as pilot:
        await send(pilot, "where is login?")
        await wait_for(pilot, lambda: app.status.metrics.get("user_turns") == 1)
        await refreshed(pilot)
        assert "waiting for the model" in status_text(app) and "thinking" not in status_text(app)
        gate.open()
        await wait_for(pilot, lambda: "c1" in app.trace.records and "readFile…" in status_text(app))
        await refreshed(pilot)
        bottom = screen_lines(app)[-2]
        assert "turn 1 · tools 1/10" in bottom and "Σ $1.37" in bottom, bottom
        assert "claude-sonnet-4-5" in bottom and "~41k/200k" in bottom or "41k/200k" in bottom, bottom


async def test_the_state_after_a_tool_and_after_a_denial_is_waiting_for_the_model(settings, project) -> None:
    """After a tool's result (and after the user denied one) the request goes back to the model: the
    status says so, never "thinking…" (that is the model's extended thinking) nor a stale approval."""
    call = ToolCall(id="c1", name="touch", parameters={"path": "x"})
    held, after_denial = Gate(), Gate()
    script = [
        ev.TurnStarted(query="", subtask_id="s1"),
        ev.ToolCallStarted(call=call, started_at=0),
        ev.ToolCallFinished(call=call, status="success", result="ok", duration=0.1),
        held,
        ev.ApprovalRequested(call=call),
        ev.ApprovalRecorded(call=call, decision=__import__("core.types", fromlist=["Decision"]).Decision.DENY),
        after_denial,
    ]
    app = build(settings, project, script)
    async with app.run_test(size=SMALL) as pilot:
        await send(pilot, "make x")
        await wait_for(pilot, lambda: "c1" in app.trace.records and app.trace.records["c1"].finished)
        assert app.status.state == "waiting for the model…"
        held.open()
        await wait_for(pilot, lambda: app.trace.records["c1"].decision != "")
        await refreshed(pilot)
        assert app.status.state == "waiting for the model…", app.status.state


# -- /cost and /help --------------------------------------------------------------------


async def test_cost_headers_are_whole_at_80_columns(settings, project) -> None:
    """The per-turn table's "turn" header is never split ("tur" over "n")."""
    from core.usage import Usage, UsageLedger

    ledger = UsageLedger()
    ledger.add(1, "claude-sonnet-4-5", Usage(input_tokens=12_345, cache_write_tokens=14_310, output_tokens=1_120))
    ledger.add(12, "claude-sonnet-4-5", Usage(input_tokens=3, cache_read_tokens=24_310, cache_write_tokens=12_410, output_tokens=2_085))
    app = build(settings, project, [])
    app.handler.usage = ledger
    async with app.run_test(size=SMALL) as pilot:
        await send(pilot, "/cost")
        await settle(pilot, lambda: bool(app.chat.query(LongNote)))
        await refreshed(pilot)
        note = app.chat.query(LongNote).first().region
        words = [line[note.x : note.right].replace("│", " ").split() for line in screen_lines(app)[note.y : note.bottom]]
        shown = "\n".join(" ".join(row) for row in words)
        assert not any(word in ("tur", "n") for row in words for word in row), shown
        assert ["turn", "in", "write", "read", "out", "hit", "cost"] in words or (["turn", "1"] in words and ["turn", "12"] in words), shown


async def test_help_actions_take_the_width_they_need_at_80_columns(settings, project) -> None:
    """/help's action column is not squeezed to 15 columns: "Pick files into the context" is on one line."""
    app = build(settings, project, [])
    async with app.run_test(size=SMALL) as pilot:
        await send(pilot, "/help")
        await settle(pilot, lambda: bool(app.chat.query(LongNote)))
        await refreshed(pilot)
        lines = screen_lines(app)
        row = next(line for line in lines if line.lstrip(" │").startswith("ctrl+o"))
        assert "Pick files into the context" in row, "\n".join(lines)


async def test_help_names_keys_as_the_keyboard_does(settings, project) -> None:
    """/help says "Esc", never Textual's "escape", and lists approval's ``a`` once (its action depends on what is asked)."""
    app = build(settings, project, [])
    async with app.run_test(size=SMALL) as pilot:
        await send(pilot, "/help")
        await settle(pilot, lambda: bool(app.chat.query(LongNote)))
        note = app.chat.query(LongNote).first()
        console = Console(width=note.size.width or 40, record=True, file=io.StringIO())
        console.print(note.content)
        text = console.export_text()
        assert "escape" not in text and "Esc" in text, text
        approval = text[text.index("approval"):]
        assert sum(1 for line in approval.splitlines() if line.split()[:1] == ["a"]) == 1, approval


# -- the context pane -------------------------------------------------------------------


async def test_the_context_scrollbar_never_covers_a_token_count(settings, project) -> None:
    """Five files fill the list (a scrollbar comes and goes as it is laid out), then the total grows to
    two lines, shrinks the list and a scrollbar appears: every visible row ends with its whole token count."""
    app = build(settings, project, [])
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        entries = [ContextEntry(path=str(project / f"src/module_{i}.py"), display=f"src/module_{i}.py", tokens=1234 * (i + 1)) for i in range(5)]
        app.context_pane.set_entries(entries)
        await refreshed(pilot)
        assert_counts_whole(app)  # the first frame drawn (it showed "1." for "1.2k": rows cached at another width)
        await refreshed(pilot)
        assert_counts_whole(app)
        app.context_pane.show_context({"estimated_tokens": 30_300, "context_estimated_tokens": 10, "context_window": 200_000})
        await refreshed(pilot)
        await refreshed(pilot)
        assert_counts_whole(app)


def assert_counts_whole(app: AssistantApp) -> None:
    """Every file row the context pane shows ends with its whole token count."""
    pane = app.context_pane.region
    rows = [line[pane.x : pane.right] for line in screen_lines(app)[pane.y : pane.bottom]]
    shown = [row for row in rows if "src/module_" in row]
    assert shown, rows
    for row in shown:
        number = int(row.split("src/module_")[1].split(".")[0])
        figure = f"{1234 * (number + 1) / 1000:.1f}k"
        assert figure in row, (figure, rows)


# -- long lines wrap --------------------------------------------------------------------


async def test_the_transcript_view_wraps_long_lines(settings, project) -> None:
    """f2: a line longer than the screen is wrapped, its end visible, not cut at the right edge."""
    from tests.tui.conftest import text_reply

    app = build(settings, project, lambda query: text_reply(f"{LONG_WORDS} END"))
    async with app.run_test(size=SMALL) as pilot:
        await send(pilot, "say it")
        await settle(pilot, lambda: not app.turn_running)
        await pilot.press("f2")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TextViewScreen")
        await refreshed(pilot)
        text = "\n".join(screen_lines(app))
        assert "word039" in text and any(line.split("▊")[-1].split()[:1] == ["END"] for line in text.splitlines()), text


async def test_task_diffs_wrap_long_lines(settings, project, monkeypatch) -> None:
    """A /task result's diff in the chat: a long changed line is wrapped, its end visible."""
    diff = f"--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-x = 1\n+x = '{LONG_WORDS} END'\n"

    async def run_task(text: str) -> dict[str, Any]:
        return {"status": "COMPLETE", "content": "Edited src/app.py.", "metadata": {"diff": diff}}

    app = build(settings, project, [])
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        monkeypatch.setattr(app.engine.session, "run_task", run_task)
        await send(pilot, "/task aider:automatic prompt='quote it'")
        await settle(pilot, lambda: any(getattr(w, "border_title", "") == "diff" for w in app.chat.children))
        await refreshed(pilot)
        text = "\n".join(screen_lines(app))
        assert "END'" in text, text


# -- commands as command lines ----------------------------------------------------------


async def test_commands_show_as_command_lines_in_the_chat_and_the_trace(settings, project) -> None:
    """runCommand's argv is shown as a shell prints it (git status --short 'a b.py'), never as JSON."""
    call = ToolCall(id="c1", name="runCommand", parameters={"command": ["git", "status", "--short", "a b.py"]})
    tests = ToolCall(id="c2", name="runTests", parameters={"args": ["tests/test_calc.py", "-k", "add or sub"]})
    script = [
        ev.TurnStarted(query="", subtask_id="s1"),
        ev.AssistantMessage(content="", tool_calls=(call, tests)),
        ev.ToolCallStarted(call=call, started_at=0),
        ev.ToolCallFinished(call=call, status="success", result="M a b.py", duration=0.1),
        ev.ToolCallStarted(call=tests, started_at=0),
        ev.ToolCallFinished(call=tests, status="success", result="2 passed", duration=0.1),
        ev.TurnCompleted(result={"status": "COMPLETE", "content": "", "metadata": {}}),
    ]
    app = build(settings, project, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "status?")
        await settle(pilot, lambda: not app.turn_running)
        await refreshed(pilot)
        text = "\n".join(screen_lines(app))
        assert "git status --short 'a b.py'" in text, text
        assert "tests/test_calc.py -k 'add or sub'" in text, text
        assert '{"command"' not in text and '["git"' not in text and '{"args"' not in text, text
        lines = [str(line.render()) for line in app.chat.query(ToolCallLine)]
        assert any("git status --short 'a b.py'" in line for line in lines), lines
        view = next(iter(app.trace.query("ToolCallView")))
        view.expanded = True
        await refreshed(pilot)
        assert "$ git status --short 'a b.py'" in "\n".join(screen_lines(app))
