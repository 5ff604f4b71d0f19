"""Fixtures for the TUI tests: settings in a tmp project, a fixed clock, a scripted handler.

The scripted handler is a deterministic stand-in for ``PassthroughHandler`` that
yields real ``core.events`` in a scripted order; snapshot tests use it so streaming
timing cannot make the SVGs flaky. Flow tests also run the real engine against
the loopback fake LLM server.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterable

import pytest
from textual.notifications import Notification, Notify

from core import events as ev
from core.approvals import Approvals
from core.config import Settings
from core.file_context import FileContext
from core.types import ApprovalRequest, Decision, ToolCall, ok_result
from tests.fake_llm import FakeLLM
from tui.app import AssistantApp, make_app


class FixedClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Gate:
    """The script stops here until the test opens the gate (or forever, for a mid-stream snapshot)."""

    event: asyncio.Event = field(default_factory=asyncio.Event)

    def open(self) -> None:
        self.event.set()


@dataclass
class AskApproval:
    """The script asks the app's approver about ``call`` and yields the recorded decision."""

    call: ToolCall
    title: str = ""
    detail: str = ""
    reason: str = ""
    session_key: str = ""
    project_key: str = ""


SIZE = (100, 32)

Step = Any
Script = Callable[[str], Iterable[Step]]


class ScriptedHandler:
    """Yields scripted events for each query, like ``PassthroughHandler.stream_query``."""

    def __init__(self, script: Script | list[Step] | None = None, *, project_root: Path, settings: Settings | None = None) -> None:
        self.script = script if callable(script) else (lambda query, steps=list(script or []): steps)
        self.project_root = project_root
        self.config = settings or Settings(project_root=project_root, anthropic_api_key="test")
        self.approvals = Approvals(self.config.approval_mode)
        self.file_context = FileContext(project_root)
        """Picked, read-only and suggested files, as the real handler holds them (the session commands them)."""
        self.conversation_history: list[dict[str, Any]] = []
        self.queries: list[str] = []
        self.decisions: list[Decision] = []
        self.cancelled = 0
        self.resets = 0
        self.metrics: dict[str, Any] = {"turns": 0, "tool_calls_this_turn": 0, "max_tool_calls": 10, "total_tool_calls": 0, "estimated_tokens": 0, "context_window": self.config.context_window}

    @property
    def pinned_files(self) -> list[str]:
        return self.file_context.picked

    @property
    def approve(self) -> Any:
        return self.approvals.approver

    def get_provider_identifier(self) -> str:
        return "anthropic:claude-sonnet-4-5"

    def get_resource_metrics(self) -> dict[str, Any]:
        return dict(self.metrics)

    def reset_conversation(self) -> None:
        self.resets += 1
        self.conversation_history.clear()

    def _keep(self, event: ev.Event) -> None:
        """Messages and tool results into the history, as the real handler keeps them."""
        if isinstance(event, ev.AssistantMessage):
            message: dict[str, Any] = {"role": "assistant", "content": event.content}
            if event.tool_calls:
                message["tool_calls"] = [call.as_dict() for call in event.tool_calls]
            if event.thinking:
                message["thinking"] = list(event.thinking)
            self.conversation_history.append(message)
        elif isinstance(event, ev.ToolCallFinished):
            self.conversation_history.append({"role": "tool", "content": event.result, "tool_call_id": event.call.id, "name": event.call.name})

    async def stream_query(self, query: str) -> AsyncIterator[ev.Event]:
        self.queries.append(query)
        self.conversation_history.append({"role": "user", "content": query})
        self.metrics.update(user_turns=len(self.queries), tool_calls_this_turn=0)
        try:
            for step in self.script(query):
                if isinstance(step, Gate):
                    await step.event.wait()
                elif isinstance(step, AskApproval):
                    request = ApprovalRequest(tool_call=step.call, title=step.title, detail=step.detail, reason=step.reason, session_key=step.session_key,
                                              project_key=step.project_key)
                    decision = await self.approvals.ask(request)
                    self.decisions.append(decision)
                    yield ev.ApprovalRecorded(call=step.call, decision=decision)
                elif isinstance(step, ev.MetricsUpdated):
                    started = self.metrics["tool_calls_this_turn"]  # as the real handler: counted when started
                    self.metrics.update(step.metrics)
                    self.metrics["tool_calls_this_turn"] = max(started, self.metrics["tool_calls_this_turn"])
                    yield step
                elif isinstance(step, ev.ToolCallStarted):
                    self.metrics["tool_calls_this_turn"] += 1
                    yield step
                else:
                    self._keep(step)
                    yield step
        except asyncio.CancelledError:
            self.cancelled += 1
            raise


def text_reply(text: str, chunk: int = 7) -> list[Step]:
    """Events of a plain streamed answer."""
    deltas = [ev.TextDelta(text=text[i : i + chunk]) for i in range(0, len(text), chunk)]
    metrics = {"turns": 1, "tool_calls_this_turn": 0, "max_tool_calls": 10, "estimated_tokens": 1834, "context_window": 200_000}
    return [
        ev.TurnStarted(query="", subtask_id="s1"),
        *deltas,
        ev.AssistantMessage(content=text, final=True),
        ev.MetricsUpdated(metrics=metrics),
        ev.TurnCompleted(result={"status": "COMPLETE", "content": text, "metadata": {}}),
    ]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project directory."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n" * 20)
    (root / "src" / "auth.py").write_text('"""Auth."""\n\ndef login(user):\n    return user\n' * 10)
    (root / "README.md").write_text("# Demo\n\nA demo project.\n")
    return root


@pytest.fixture
def settings(project: Path) -> Settings:
    """Settings with a (fake) provider configured, in the tmp project."""
    return Settings(project_root=project, anthropic_api_key="test-key")


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


# -- the real engine against the fake server ------------------------------------


ECHO_SPEC = {
    "name": "echo",
    "description": "Upper-case a string.",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
TOUCH_SPEC = {
    "name": "touch",
    "description": "Create an empty file.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    "requires_approval": True,
}


@pytest.fixture
def real_settings(project: Path, fake_llm: FakeLLM) -> Settings:
    return Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0)


@pytest.fixture
def real_app(real_settings: Settings, project: Path) -> AssistantApp:
    """The app exactly as the CLI builds it (the real Application), its provider pointed at the fake server."""
    app = make_app(real_settings, clock=FixedClock())
    assert not app.engine_error, app.engine_error
    app.handler.register_tool(ECHO_SPEC, lambda params: params["text"].upper())

    def touch(params: dict[str, Any]) -> Any:
        (project / params["path"]).write_text("")
        return ok_result(f"created {params['path']}")

    app.handler.register_tool(TOUCH_SPEC, touch)
    return app


WAIT_TIMEOUT = 30.0
"""Seconds a test waits for the app to reach a state before failing with what it waited for (a hang
detector, not a speed bound: two test processes on a loaded 2-core machine can take 10 s for a long stream)."""


def _describe(condition: Callable[[], bool]) -> str:
    try:
        return inspect.getsource(condition).strip()
    except (OSError, TypeError):
        return repr(condition)


async def wait_for(pilot: Any, condition: Callable[[], bool], timeout: float = WAIT_TIMEOUT, what: str = "") -> None:
    """Poll the app until ``condition()`` holds; fail naming the condition after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout:g}s: {what or _describe(condition)}")
        await pilot.pause(0.02)


class Notices:
    """Every notification the app raised, kept: pass it as ``run_test(message_hook=...)``.

    Textual forgets a notification 5 s (wall clock) after it was raised, so reading
    ``app._notifications`` later fails on a loaded machine; this keeps each one as it is dispatched.
    """

    def __init__(self) -> None:
        self.raised: list[Notification] = []

    def __call__(self, message: Any) -> None:
        if isinstance(message, Notify):
            self.raised.append(message.notification)

    @property
    def messages(self) -> list[str]:
        """The notifications' texts, oldest first."""
        return [str(notification.message) for notification in self.raised]


async def refreshed(pilot: Any, widget: Any = None, timeout: float = WAIT_TIMEOUT) -> None:
    """Wait until what is queued so far (in ``widget``'s queue, else the screen's) has been processed,
    laid out and drawn: positions and sizes read afterwards are current.

    Textual runs ``call_after_refresh`` callbacks only once the screen has no layout or
    repaint pending, so this waits on that state, never on a number of pauses.
    """
    target = widget if widget is not None else pilot.app.screen
    try:
        await asyncio.wait_for(target.wait_for_refresh(), timeout)
    except asyncio.TimeoutError:
        raise AssertionError(f"the screen did not refresh within {timeout:g}s") from None


BACKGROUND_EXEMPT = frozenset({"turn"})
"""Worker groups ``settle`` does not wait for (a scripted turn may be held at a gate on purpose)."""


async def settle(pilot: Any, until: Callable[[], bool] | None = None, timeout: float = WAIT_TIMEOUT, what: str = "") -> None:
    """Wait until ``until()`` holds and every background worker (searches, listings) has finished.

    Fails with an ``AssertionError`` naming what it waited for instead of letting a
    snapshot be taken of a screen that is still changing.
    """
    if until is not None:
        await wait_for(pilot, until, timeout, what)

    def idle() -> bool:
        return not [w for w in pilot.app.workers if w.group not in BACKGROUND_EXEMPT and not w.is_finished]

    await wait_for(pilot, idle, timeout, what="background workers (" + ", ".join(sorted({w.group for w in pilot.app.workers if not w.is_finished})) + ") to finish")
    await pilot.pause()


async def started(pilot: Any) -> None:
    """Wait until start-up has attached the engine and opened the session (a resumed one redrawn), and that is on screen."""
    await wait_for(pilot, lambda: pilot.app.startup.started.is_set(), what="start-up: the engine attached and the session opened")
    await refreshed(pilot)


async def send(pilot: Any, text: str) -> None:
    pilot.app.prompt.load_text(text)
    await pilot.press("enter")


async def finish_turn(pilot: Any) -> None:
    await wait_for(pilot, lambda: not pilot.app.turn_running)
    await pilot.pause()


async def stop_mid_answer(pilot: Any, query: str) -> None:
    """Send ``query``, press Esc once the answer has begun to show, and wait until the stopped turn has settled."""
    from tui.widgets.chat import AssistantMessage

    await send(pilot, query)
    await wait_for(pilot, lambda: any(m.text for m in widgets(pilot.app, AssistantMessage)))
    await pilot.press("escape")
    await finish_turn(pilot)
    await settle(pilot)


def widgets(app: AssistantApp, kind: type) -> list[Any]:
    return [child for child in app.chat.children if isinstance(child, kind)]
