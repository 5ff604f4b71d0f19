"""The conversation controller: runs a user turn (or a user command) in the one turn worker.

It owns the turn worker, the handler's approval callback and aider's terminal hand-over.
It writes only to the widgets it was given; the conversation itself (everything f2 and
``/export`` show) is the engine session's, never copied here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
from typing import TYPE_CHECKING, Any, Callable

from textual.app import SuspendNotSupported
from textual.worker import Worker, WorkerState

from core.types import ApprovalRequest, Decision, error_result, is_error
from tui import runtime
from tui.context_ops import FileContext
from tui.engine import Engine, Failed, Loading
from tui.turn import TurnRenderer, TurnView
from tui.format import pretty_args
from tui.widgets.chat import MarkdownNote, NoteMessage, ThinkingBlock, UserMessage
from tui.widgets.command_output import CommandOutput
from tui.widgets.pasted import user_message

if TYPE_CHECKING:
    from tui.hosts import TurnHost

    from tui.widgets.chat import ChatView
    from tui.widgets.prompt import PromptInput
    from tui.widgets.status import StatusLine
    from tui.widgets.trace import ToolTrace

log = logging.getLogger(__name__)

GC_AFTER_TURN = 0.5
"""Seconds after a turn ends before the garbage collector's pause (``tui.runtime.after_turn``)."""


class Conversation:
    """Turns and user commands, one at a time, and everything shown in the chat, in order.

    Args:
        engine: the engine link (its session runs the turns).
        chat, trace, status, prompt: the widgets a turn writes to.
        files: the file context (a turn's suggestions go there; it is redrawn after each turn).
        host: the running app, for its workers, screens and terminal.
    """

    def __init__(self, engine: Engine, *, chat: "ChatView", trace: "ToolTrace", status: "StatusLine", prompt: "PromptInput", files: FileContext, host: "TurnHost") -> None:
        self.engine = engine
        self.chat, self.trace, self.status, self.prompt = chat, trace, status, prompt
        self.files = files
        self.host = host
        self.worker: Worker[None] | None = None
        self.renderer: TurnRenderer | None = None
        self._view = TurnView(chat=chat, trace=trace, status=status, post=host.post_message, metrics=engine.metrics)

    @property
    def running(self) -> bool:
        """True while a turn or a user command runs."""
        return self.worker is not None and self.worker.state in (WorkerState.PENDING, WorkerState.RUNNING)

    def _busy(self, text: str) -> bool:
        """When something runs already: say so and give ``text`` back to the prompt."""
        if self.running:
            self.host.notify("A reply is still running: Esc cancels it.", severity="warning")
            self.prompt.restore(text)
        return self.running

    async def start(self, query: str) -> None:
        """Show the query and run the turn in the exclusive turn worker."""
        if self._busy(query):
            return
        await self.chat.add(user_message(query, self.prompt.pastes.found_in(query)))
        if (refusal := self._not_sent()) is not None:
            await self.chat.add(refusal)
            self.prompt.restore(query)
            return
        self.renderer = TurnRenderer(self._view, query)
        self.worker = self.host.run_worker(self._run_turn(self.renderer), group="turn", exclusive=True, exit_on_error=False)
        self.host.refresh_bindings()

    def _not_sent(self) -> NoteMessage | None:
        """Why a query cannot be sent in the engine's state (the query goes back to the prompt), or None when it can."""
        match self.engine.state:
            case Failed(reason=reason):
                return NoteMessage(f"The engine could not start, so nothing was sent: {reason}", kind="error", title="Not sent")
            case Loading():  # the start-up keeps what is sent meanwhile: this is a query that came another way
                return NoteMessage("The engine is still starting, so nothing was sent: send it again in a moment.", kind="warning", title="Not sent")
        if not self.engine.settings.provider_configured:
            return NoteMessage("No model provider is configured, so nothing was sent. The setup steps are at the top of the chat; /task, /add and the panes work without a model.", kind="error", title="No provider")
        return None

    async def _run_turn(self, renderer: TurnRenderer) -> None:
        """Consume the session's event stream for one turn (cancelled by Esc)."""
        try:
            # aclosing: a fault while rendering closes the stream now (the turn ends, the engine is free)
            from core.events import MetricsUpdated  # the events load with the first turn, not with the first frame

            async with contextlib.aclosing(self.engine.session.stream_query(renderer.query)) as stream:
                async for event in stream:
                    await renderer.handle(event)
                    if isinstance(event, MetricsUpdated):  # the one context figure, from core, to the pane as to the status line
                        self.files.show_figure(event.metrics)
        except asyncio.CancelledError:
            await renderer.interrupted()
            raise
        except Exception as exc:  # never a traceback on screen: a clear note, and the prompt back
            log.exception("turn failed")
            await renderer.show_error("internal", f"The turn stopped on an error of assistant-tui itself: {exc}")
        finally:
            self.status.set_state("ready")
            self.refresh_metrics()
            self.files.refresh()
            self.host.call_later(self.host.refresh_bindings)
            # The collector's pause once the answer is on screen (not a Textual timer: see AssistantMessage._schedule).
            asyncio.get_running_loop().call_later(GC_AFTER_TURN, runtime.after_turn)
            if self.renderer is renderer:
                self.renderer = None  # its tool lines and messages go with the chat's pruning, not kept until the next turn

    def refresh_metrics(self, *, provider: bool = False) -> None:
        """Show the session's metrics in the status line (and, with ``provider``, the model after /model)."""
        if provider:
            self.status.set_provider(self.engine.provider_label)
        metrics = self.engine.metrics()
        if metrics is not None:
            try:
                self.status.update_metrics(metrics)
                self.files.show_figure(metrics)
            except Exception:  # metrics are informative only
                log.exception("could not show metrics")

    def cancel(self) -> None:
        """Cancel the running turn or command at once."""
        if self.running and self.worker is not None:
            self.worker.cancel()

    async def clear(self, *, keep_files: bool = True) -> None:
        """Cancel any reply and forget the conversation, the trace and the suggestions."""
        if self.running:
            self.cancel()
            await self.host.workers.wait_for_complete([self.worker] if self.worker else None)
        self.engine.session.reset(keep_files=keep_files)
        await self.chat.clear()
        await self.trace.clear()
        cleared = {"turns": 0, "user_turns": 0, "tool_calls_this_turn": 0, "estimated_tokens": 0, "context_estimated_tokens": 0, "usage": {}}
        self.status.update_metrics(cleared)
        self.files.show_figure(cleared)
        self.files.refresh()

    async def approve(self, request: ApprovalRequest) -> Decision:
        """The handler's approver: a modal with exactly what will run (called inside the turn worker)."""
        from tui.screens.approval import ApprovalScreen

        await self.trace.pending(request.tool_call)
        try:
            decision = await self.host.push_screen_wait(ApprovalScreen(request))
        except asyncio.CancelledError:
            if isinstance(self.host.screen, ApprovalScreen):
                self.host.screen.dismiss(Decision.DENY)
            raise
        return decision if isinstance(decision, Decision) else Decision.DENY

    async def run_interactive(self, fn: Callable[[], Any]) -> Any:
        """Give the terminal to an interactive program (aider) and take it back afterwards.

        ``fn`` blocks until the program exits; the app is suspended meanwhile, so
        nothing else needs the event loop.
        """
        try:
            with self.host.suspend():
                result = fn()
        except SuspendNotSupported:
            return error_result("This terminal cannot be handed over to aider; use aiderAutomatic or /task aider:automatic instead.")
        self.host.refresh(layout=True)
        return result

    def toggle_thinking(self) -> None:
        """Expand or collapse the newest thinking block in the chat."""
        blocks = list(self.chat.query(ThinkingBlock))
        if not blocks:
            self.host.notify("No thinking to show: the model has not sent any in the messages on screen.")
            return
        blocks[-1].collapsed = not blocks[-1].collapsed

    def show_call(self, record: Any) -> None:
        """A tool call's whole arguments and result (``v`` on a call in the trace)."""
        from tui.screens.text_view import TextViewScreen

        text = f"# arguments\n{pretty_args(record.call.parameters)}\n\n# result ({record.status})\n{record.result}"
        self.host.push_screen(TextViewScreen(f"{record.call.name} · {record.call.id}", text))

    # -- what the user runs without the model ----------------------------------
    async def run_command(self, argv: list[str], label: str) -> None:
        """``/run`` and ``/test``: the user's command in the sandbox, in the turn worker (Esc kills it)."""
        if self._busy(label):
            return
        application = self.engine.application
        if application is None:
            await self.chat.add(NoteMessage("Commands cannot run: the engine did not start.", kind="error", title=label))
            return
        await self.chat.add(UserMessage(label))
        output = CommandOutput(f"{shlex.join(argv)} · sandbox")
        await self.chat.add(output)
        self.worker = self.host.run_worker(self._run_command(application, argv, output), group="turn", exclusive=True, exit_on_error=False)
        self.host.refresh_bindings()

    async def _run_command(self, application: Any, argv: list[str], output: CommandOutput) -> None:
        self.status.set_state(f"running {argv[0]}…")
        try:
            result = await application.run_user_command(argv, on_output=lambda text, stream: output.append(text))
        except asyncio.CancelledError:
            output.finish("Stopped (Esc): the command and every process it started were killed.", failed=True)
            raise
        except Exception as exc:  # a failing command is a message, not a crash
            log.exception("/run failed")
            output.finish(f"Could not run it: {exc}", failed=True)
            return
        finally:
            self.status.set_state("ready")
            self.host.call_later(self.host.refresh_bindings)
        output.finish(result.get("content", ""), failed=is_error(result))

    async def run_task(self, args: str) -> None:
        """``/task``: show it, then run it through the task system in a worker."""
        await self.chat.add(UserMessage(f"/task {args}".rstrip()))
        self.host.run_worker(self._run_task(args), group="task", exit_on_error=False)

    async def _run_task(self, args: str) -> None:
        try:  # without an Application the session says the task system is not available
            outcome: Any = await self.engine.session.run_task(f"/task {args}".rstrip())  # recorded in the session
        except Exception as exc:  # a failing task is a message, not a crash
            log.exception("/task failed")
            await self.chat.add(NoteMessage(f"/task failed: {exc}", kind="error", title="/task"))
            return
        content = outcome.get("content", "") if isinstance(outcome, dict) else str(outcome)
        failed = isinstance(outcome, dict) and is_error(outcome)
        metadata = outcome.get("metadata") or {} if isinstance(outcome, dict) else {}
        title = "/task failed" if failed else "/task"
        if failed or "templates" in metadata or "```" not in content:
            # plain text: usage lines such as prompt=<string> must show as typed
            await self.chat.add(NoteMessage(content or "(no output)", kind="error" if failed else "info", title=title))
        else:
            await self.chat.add(MarkdownNote(content, title=title, classes="task-result"))
        diff = metadata.get("diff")
        if isinstance(diff, str) and diff.strip() and "```" not in content:
            await self.chat.add(MarkdownNote(f"```diff\n{diff}\n```", title="diff"))
        self.files.refresh()
