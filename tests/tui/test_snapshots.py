"""SVG snapshots of the screens that matter.

Each class is one feature; each docstring says what the snapshot should show.
Handlers are scripted (deterministic event order), the clock is fixed, the
cursor does not blink, and workers have settled before the screenshot.
Accept new baselines with ``pytest tests/tui --snapshot-update`` after looking at them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable


from core import events as ev
from core.config import Settings
from core.types import ToolCall
from tests.tui.conftest import AskApproval, FixedClock, Gate, ScriptedHandler, settle, text_reply
from tui.app import AssistantApp, make_app

SIZE = (100, 32)

FIND = ToolCall(id="call_1", name="executeFilePathCommand", parameters={"command": "git ls-files '*.py'"})
READ = ToolCall(id="call_2", name="readFile", parameters={"path": "src/missing.py"})
AIDER = ToolCall(id="call_3", name="aiderAutomatic", parameters={"prompt": "Add a docstring to login()", "file_context": ["src/auth.py"]})


def build(settings: Settings, project: Path, script: Any, clock: FixedClock | None = None) -> AssistantApp:
    handler = ScriptedHandler(script, project_root=project, settings=settings)
    return make_app(settings, handler=handler, clock=clock or FixedClock())


async def type_and_send(pilot: Any, text: str) -> None:
    """Put ``text`` in the prompt and press Enter (typing key by key is slow under Pilot)."""
    pilot.app.prompt.load_text(text)
    await pilot.press("enter")


def send(text: str) -> Callable[[Any], Any]:
    async def run_before(pilot: Any) -> None:
        await type_and_send(pilot, text)
        await settle(pilot, lambda: not pilot.app.turn_running)

    return run_before


def chat_text(app: AssistantApp) -> str:
    """What the chat shows (a streaming message's Markdown is written every few tens of milliseconds)."""
    return "\n".join(getattr(child, "shown", None) or getattr(child, "text", "") or "" for child in app.chat.children)


class TestEmptyStart:
    """The first screen with a provider configured."""

    def test_empty_start(self, snap_compare, settings, project):
        """Empty chat, empty context pane ("No files yet"), empty trace, the status line with
        the provider and a zero meter, the prompt with its placeholder, and the footer keys."""
        assert snap_compare(build(settings, project, []), terminal_size=SIZE)


class TestOnboarding:
    """No provider configured."""

    def test_no_provider(self, snap_compare, project):
        """An orange "Set up a model provider" panel, shown from its top, explains env vars, a local
        server, .env, the config file and flags; the status line says "no provider"; the panes are there."""
        settings = Settings(project_root=project)
        assert snap_compare(build(settings, project, []), terminal_size=SIZE)


class TestStreaming:
    """A reply while it streams."""

    def test_reply_mid_stream(self, snap_compare, settings, project):
        """The user's message, then a partial Markdown answer (a heading and a list item in
        progress); the status line says "streaming…"; the footer offers Esc to cancel."""
        text = "## Where auth lives\n\nThe login flow is in `src/auth.py`:\n\n- `login(user)` returns the user\n- the session is"
        script = [ev.TurnStarted(query="", subtask_id="s1"), *[ev.TextDelta(text=text[i : i + 5]) for i in range(0, len(text), 5)], Gate()]
        app = build(settings, project, script)

        async def run_before(pilot: Any) -> None:
            await type_and_send(pilot, "where is auth?")
            await settle(pilot, lambda: "the session is" in chat_text(pilot.app))

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def _trace_script() -> list[Any]:
    return [
        ev.TurnStarted(query="", subtask_id="s1"),
        ev.TextDelta(text="Let me look for the files."),
        ev.AssistantMessage(content="Let me look for the files.", tool_calls=(FIND,)),
        ev.ToolCallStarted(call=FIND, started_at=0),
        ev.ToolCallFinished(call=FIND, status="success", result="2 file(s):\nsrc/app.py\nsrc/auth.py", duration=0.42),
        ev.AssistantMessage(content="", tool_calls=(READ, AIDER)),
        ev.ToolCallStarted(call=READ, started_at=0),
        ev.ToolCallFinished(call=READ, status="error", result="File not found: src/missing.py", duration=0.01),
        ev.ToolCallStarted(call=AIDER, started_at=0),
        Gate(),
    ]


class TestTrace:
    """The tool-trace pane."""

    def test_running_finished_failed(self, snap_compare, settings, project):
        """Trace: a "turn 1 · find auth" header row, then a finished call (green ✓ "done 0.4s"), a
        failed one (red ✗ "failed 0.0s") and a running one (◐ "running 2.5s"); the chat shows the same
        three as compact lines; the status line counts the three calls as started ("tools 3/10")."""
        clock = FixedClock()
        app = build(settings, project, _trace_script(), clock)

        async def run_before(pilot: Any) -> None:
            await type_and_send(pilot, "find auth")
            await settle(pilot, lambda: "call_3" in pilot.app.trace.records)
            clock.advance(2.5)
            pilot.app.trace.refresh_running()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

    def test_expanded_call(self, snap_compare, settings, project):
        """The first call expanded in the trace (focused, highlighted): its arguments as JSON
        and its result, cut after 12 lines with "… 29 more lines · press v to see all"."""
        listing = "\n".join(f"src/module_{i:02d}.py" for i in range(40))
        script = [
            ev.TurnStarted(query="", subtask_id="s1"),
            ev.AssistantMessage(content="", tool_calls=(FIND,)),
            ev.ToolCallStarted(call=FIND, started_at=0),
            ev.ToolCallFinished(call=FIND, status="success", result=f"40 file(s):\n{listing}", duration=1.25),
            *text_reply("There are 40 modules.")[1:],
        ]
        app = build(settings, project, script)

        async def run_before(pilot: Any) -> None:
            await send("list modules")(pilot)
            await pilot.press("ctrl+t", "enter")
            await settle(pilot)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


class TestContextPane:
    """The file-context pane and the context meter."""

    def test_files_and_warning(self, snap_compare, project):
        """Context pane: two picked files (●) with token estimates, a suggested README (○, dim),
        the total "245 / 300 tokens" with a ⚠ 81% warning; a "Context almost full" note in the chat;
        the status meter turns to a warning."""
        settings = Settings(project_root=project, anthropic_api_key="k", context_window=300)
        script = [
            ev.TurnStarted(query="", subtask_id="s1", relevant_files=(str(project / "README.md"),)),
            ev.Warning(code="context_80", message="Context is 85% full (255 of 300 tokens)."),
            *[step for step in text_reply("Both files are small.")[1:-1] if not isinstance(step, ev.MetricsUpdated)],
            ev.MetricsUpdated(metrics={"turns": 1, "estimated_tokens": 255, "context_window": 300, "tool_calls_this_turn": 0, "max_tool_calls": 10}),
            text_reply("")[-1],
        ]
        app = build(settings, project, script)

        async def run_before(pilot: Any) -> None:
            await type_and_send(pilot, "/add src/*.py")
            await settle(pilot, lambda: len(pilot.app.pinned) == 2)
            await send("summarize")(pilot)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


class TestPlan:
    """``/plan`` answers."""

    def test_plan_checklist(self, snap_compare, settings, project):
        """The plan shows as a green "Plan · 4 steps" box of ☐ checklist items (a wrapped step
        folded into one), with the text before and after it; no raw <plan> tags."""
        answer = (
            "Here is the plan.\n<plan>\n1. Read `src/auth.py` and list the public functions\n"
            "2. Write tests for `login()`\n   covering bad users\n3. Add type hints\n4. Run the test suite\n</plan>\nSay go to start."
        )
        app = build(settings, project, text_reply(answer))
        assert snap_compare(app, terminal_size=SIZE, run_before=send("/plan add type hints to auth"))


def aider_approval_script() -> list[Any]:
    """A turn that asks to run aiderAutomatic and waits there (the modal stays open)."""
    return [
        ev.TurnStarted(query="", subtask_id="s1"),
        ev.AssistantMessage(content="I will ask aider.", tool_calls=(AIDER,)),
        ev.ToolCallStarted(call=AIDER, started_at=0),
        AskApproval(
            AIDER,
            title="Allow aiderAutomatic?",
            detail="aider edits these files:\n  src/auth.py\ninstruction:\n  Add a docstring to login()",
            reason="aider changes files in your project",
            session_key="aiderAutomatic",
        ),
        Gate(),
    ]


def until_approval(text: str) -> Callable[[Any], Any]:
    """Send ``text`` and wait until the approval modal is up."""

    async def run_before(pilot: Any) -> None:
        await type_and_send(pilot, text)
        await settle(pilot, lambda: type(pilot.app.screen).__name__ == "ApprovalScreen")

    return run_before


class TestApproval:
    """The approval modal."""

    def test_modal(self, snap_compare, settings, project):
        """A modal over the app: "Allow aiderAutomatic?", exactly what will run (files and the
        instruction), why it asks, what "always" covers (aiderAutomatic), and Allow once (y) /
        Always this session (a) / Deny (n) (focused)."""
        assert snap_compare(build(settings, project, aider_approval_script()), terminal_size=SIZE, run_before=until_approval("document login"))


class TestErrors:
    """Provider errors and interruptions."""

    def test_provider_error(self, snap_compare, settings, project):
        """A red "The model call failed" box with the provider's message and what to do; the
        sent text "explain the auth flow" is back in the prompt; no traceback anywhere."""
        script = [
            ev.TurnStarted(query="", subtask_id="s1"),
            ev.Warning(code="retry", message="Rate limited by the provider (429). Retrying (1/2)..."),
            ev.TurnFailed(
                reason="llm_error",
                message="Rate limited by the provider (429). The provider is rate-limiting requests; wait a moment and send again.",
                result={"status": "failed", "content": "", "metadata": {}},
            ),
        ]
        app = build(settings, project, script)
        assert snap_compare(app, terminal_size=SIZE, run_before=send("explain the auth flow"))

    def test_interrupted_reply(self, snap_compare, settings, project):
        """After Esc: the partial answer stays, with a yellow bar and "■ interrupted", then the
        note "Interrupted. The partial answer is kept…"; the status line is back to ready."""
        text = "The auth module has two parts. First, the login"
        script = [ev.TurnStarted(query="", subtask_id="s1"), *[ev.TextDelta(text=text[i : i + 6]) for i in range(0, len(text), 6)], Gate()]
        app = build(settings, project, script)

        async def run_before(pilot: Any) -> None:
            await type_and_send(pilot, "explain auth")
            await settle(pilot, lambda: "the login" in chat_text(pilot.app))
            await pilot.press("escape")
            await settle(pilot, lambda: not pilot.app.turn_running)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


class TestSmallTerminal:
    """80x24, the smallest supported terminal."""

    def test_80x24(self, snap_compare, settings, project):
        """Everything still fits: chat with a reply and a tool line, narrower side panes,
        status line and footer."""
        script = [
            ev.TurnStarted(query="", subtask_id="s1"),
            ev.AssistantMessage(content="", tool_calls=(FIND,)),
            ev.ToolCallStarted(call=FIND, started_at=0),
            ev.ToolCallFinished(call=FIND, status="success", result="2 file(s):\nsrc/app.py\nsrc/auth.py", duration=0.3),
            *text_reply("Two Python files: `src/app.py` and `src/auth.py`.")[1:],
        ]
        app = build(settings, project, script)
        assert snap_compare(app, terminal_size=(80, 24), run_before=send("which python files?"))


class TestPrompt:
    """Prompt completion and /help."""

    def test_slash_completion(self, snap_compare, settings, project):
        """Typing "/" opens a menu above the prompt listing every command with its one-line help."""
        assert snap_compare(build(settings, project, []), terminal_size=SIZE, press=["/"])

    def test_help(self, snap_compare, settings, project):
        """/help lists the keys (with where they work) and the commands in the chat, shown from its top."""
        assert snap_compare(build(settings, project, []), terminal_size=(100, 60), run_before=send("/help"))


class TestPicker:
    """The fuzzy file picker (ctrl+o)."""

    def test_picker_highlights(self, snap_compare, settings, project):
        """A modal "Add files to the context": the query "au", src/auth.py first with the
        matched letters highlighted, and it is selected ([x]); the hint counts 1 selected of 3 files."""
        app = build(settings, project, [])

        async def run_before(pilot: Any) -> None:
            await settle(pilot, lambda: pilot.app.files.count >= 3)
            await pilot.press("ctrl+o")
            await settle(pilot, lambda: type(pilot.app.screen).__name__ == "FilePickerScreen")
            await pilot.press("a", "u")
            await settle(pilot, lambda: pilot.app.screen.query_one("#picker-input").value == "au")
            await pilot.press("space")
            await settle(pilot)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


class TestCost:
    """``/cost``: where the session's tokens and money went."""

    def test_cost_breakdown(self, snap_compare, settings, project):
        """After a three-turn session on claude-sonnet-4-5 plus one response from an unpriced
        local model: a "Cost" box with the totals line (tokens, a 90% hit rate, an estimated
        cost marked "+ unpriced"), a per-turn table (input, cache write, cache read, output,
        hit rate, cost), a per-model table where the local model shows "no price", the budget
        line and the price table's source and date. The status line shows "Σ" tokens and cost."""
        from core.usage import Budget, Usage, UsageLedger

        ledger = UsageLedger()
        ledger.add(1, "claude-sonnet-4-5", Usage(input_tokens=12, cache_write_tokens=4_310, output_tokens=120))
        ledger.add(1, "claude-sonnet-4-5", Usage(input_tokens=3, cache_read_tokens=4_310, cache_write_tokens=410, output_tokens=85))
        ledger.add(2, "claude-sonnet-4-5", Usage(input_tokens=3, cache_read_tokens=4_720, cache_write_tokens=2_950, output_tokens=310))
        ledger.add(3, "claude-sonnet-4-5", Usage(input_tokens=3, cache_read_tokens=7_670, cache_write_tokens=95, output_tokens=42))
        ledger.add(3, "llama3.1:8b", Usage(input_tokens=7_900, output_tokens=60))
        summary = ledger.summary(turns=False)
        app = build(settings, project, [ev.MetricsUpdated(metrics={"usage": summary, "estimated_tokens": 7_870, "context_estimated_tokens": 40})])
        app.handler.usage = ledger
        app.handler.budget = Budget(session_cost=2.0, turn_tokens=50_000)

        async def run_before(pilot: Any) -> None:
            await send("hello")(pilot)
            await send("/cost")(pilot)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
