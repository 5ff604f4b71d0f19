"""SVG snapshots of issue 11: a trace that tells the truth and answers that say how they ended.

Each class is one feature; each docstring says what the snapshot should show. The
classes drive the real engine against the fake server (a manual clock makes the
durations exact); the mid-stream thinking snapshot feeds events through the same
renderer with a scripted handler (a stream paused at a known point). Accept new baselines with ``--snapshot-update``
after looking at them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import events as ev
from core.config import Settings
from core.types import ok_result
from tests.fake_llm import CleanClose, FakeLLM, Reply, Tool
from tests.tui.conftest import TOUCH_SPEC, FixedClock, Gate, settle
from tests.tui.test_snapshots import SIZE, build, chat_text, send, type_and_send
from tui.app import AssistantApp, make_app


def real_engine_app(settings: Settings, project: Path) -> tuple[AssistantApp, FixedClock]:
    """The app as the CLI builds it, its handler timed by the app's manual clock.

    ``touch`` runs for 1.6 s of that clock; ``echo`` upper-cases.
    """
    from core.app import Application
    from core.handlers.pacing import Pacing

    clock = FixedClock()
    app = make_app(settings, application=Application(settings, pacing=Pacing(clock=clock)), clock=clock)
    assert not app.engine_error, app.engine_error

    def touch(params: dict[str, Any]) -> Any:
        clock.advance(1.6)
        (project / params["path"]).write_text("")
        return ok_result(f"created {params['path']}")

    app.handler.register_tool(TOUCH_SPEC, touch)
    app.handler.register_tool(
        {"name": "echo", "description": "Upper-case", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
        lambda params: params["text"].upper(),
    )
    return app, clock


def send_and_answer(query: str, clock: FixedClock, key: str, after: float) -> Any:
    """Send ``query``, answer the approval prompt with ``key`` ``after`` seconds, wait for the turn to end."""

    async def run_before(pilot: Any) -> None:
        await type_and_send(pilot, query)
        await settle(pilot, lambda: type(pilot.app.screen).__name__ == "ApprovalScreen", timeout=30)
        clock.advance(after)
        await pilot.press(key)
        await settle(pilot, lambda: not pilot.app.turn_running)

    return run_before


class TestTraceApprovalWait:
    """A call that waited for the user's approval, then ran."""

    def test_wait_apart_from_run(self, snap_compare, real_settings, project, fake_llm: FakeLLM):
        """Trace: a "turn 1 · create notes.txt" header row, then "✓ touch  done 1.6s" and under it
        "allow once · waited 4.1s for approval, ran 1.6s". The chat line says "✓ touch · done 1.6s ·
        waited 4.1s for approval"; the status line counts "tools 1/10"."""
        fake_llm.script(Reply(text="Creating it.", tools=[Tool("touch", {"path": "notes.txt"})]), Reply(text="Created notes.txt."))
        app, clock = real_engine_app(real_settings, project)
        assert snap_compare(app, terminal_size=SIZE, run_before=send_and_answer("create notes.txt", clock, "y", 4.1))


class TestTraceOutcomes:
    """Denied, refused by policy, not run and failed: four marks, one meaning each."""

    def test_denied_refused_not_run_failed(self, snap_compare, project, fake_llm: FakeLLM):
        """Trace under "turn 1 · tidy up": "⊗ executeFilePathCommand  refused by policy" with the
        policy's reason, "✗ echo  failed 0.0s" (bad arguments), "⊘ touch  denied" with "deny ·
        waited 2.0s for approval", and "⊖ echo  not run" with "Not run: the limit of 3 tool calls…".
        A "Limit reached" note ends the turn; the status line says "turn 1 · tools 3/3"."""
        settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0, max_tool_calls=3)
        fake_llm.script(
            Reply(
                tools=[
                    Tool("executeFilePathCommand", {"command": "find . -name '*.tmp'; rm -rf /"}),
                    Tool("echo", {"words": "no text"}),
                    Tool("touch", {"path": "tidy.txt"}),
                    Tool("echo", {"text": "one too many"}),
                ]
            )
        )
        app, clock = real_engine_app(settings, project)
        assert snap_compare(app, terminal_size=SIZE, run_before=send_and_answer("tidy up", clock, "n", 2.0))


class TestIncompleteAnswer:
    """The stream ended (a clean ``Connection: close``) before the provider said the answer was complete."""

    def test_incomplete(self, snap_compare, real_settings, project, fake_llm: FakeLLM):
        """The partial answer stays, with a red bar and "■ incomplete: the connection closed before
        the answer finished" (not "interrupted"); a red "The answer is incomplete" box says how many
        characters arrived (70); the question is back in the prompt to send again."""
        partial = "The login flow starts in `src/auth.py`, where `login(user)` checks the"
        fake_llm.script(CleanClose(Reply(text=partial, chunk=9), drop_last=2))  # no message_delta, no message_stop
        app, _ = real_engine_app(real_settings, project)
        assert snap_compare(app, terminal_size=SIZE, run_before=send("how does login work?"))


class TestOutputLimit:
    """An answer cut by the output limit (``stop_reason: max_tokens``)."""

    def test_max_tokens(self, snap_compare, real_settings, project, fake_llm: FakeLLM):
        """The answer as far as it got, with a yellow bar and "▲ output limit reached: the answer
        stops here · send /continue to have the model go on"; the turn itself completed (no error box)."""
        text = "Here are the steps:\n\n1. Read `src/auth.py`\n2. Add tests for `login()`\n3. Add type hints to"
        fake_llm.script(Reply(text=text, chunk=8, stop_reason="max_tokens"))
        app, _ = real_engine_app(real_settings, project)
        assert snap_compare(app, terminal_size=SIZE, run_before=send("plan the auth work"))


THOUGHT = (
    "The user wants to know where login happens. src/auth.py defines login(user); "
    "app.py calls main(). I should cite the file and keep it short."
)


class TestThinking:
    """The model's reasoning, streamed into the chat."""

    def test_collapsed_thinking(self, snap_compare, real_settings, project, fake_llm: FakeLLM):
        """Above the answer, a dimmed "▶ Thought · 23 words" line (collapsed: the reasoning itself
        is not shown), then the answer "Login is in `src/auth.py`."."""
        fake_llm.script(Reply(thinking=THOUGHT, text="Login is in `src/auth.py`.", chunk=11))
        app, _ = real_engine_app(real_settings, project)
        assert snap_compare(app, terminal_size=SIZE, run_before=send("where is login?"))

    def test_thinking_while_it_streams(self, snap_compare, settings, project):
        """Mid-stream: a dimmed "▶ Thinking… · 11 words" line and the status line saying "thinking…"."""
        half = THOUGHT[:70]
        script = [ev.TurnStarted(query="", subtask_id="s1"), *[ev.ThinkingDelta(text=half[i : i + 10]) for i in range(0, len(half), 10)], Gate()]
        app = build(settings, project, script)

        async def run_before(pilot: Any) -> None:
            await type_and_send(pilot, "where is login?")
            await settle(pilot, lambda: "11 words" in chat_titles(pilot.app))

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def chat_titles(app: AssistantApp) -> str:
    return chat_text(app) + " ".join(str(getattr(child, "title", "")) for child in app.chat.children)
