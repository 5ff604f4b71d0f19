"""PassthroughHandler: raw queries through the streaming multi-step tool loop (SPEC.md 3-4).

``stream_query`` is the engine: it records the user's message, calls the model,
runs the tools it asks for, feeds their results back and repeats until the model
answers without tools, yielding a typed event (:mod:`core.events`) for every step.
The SPEC's ``handle_query`` (on :class:`core.compat.PassthroughHandler`) consumes it and returns the TaskResult of SPEC.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Sequence

from core import events as ev
from core.approvals import DENY_MODE_REASON, Approvals, Need, Ruling, changes_things
from core.handlers.base import BaseHandler, ToolNotFound
from core.compaction.compactor import is_prompt_too_long
from core.callables import call_sync_or_async
from core.handlers.calls import cap_result, pump, tool_status
from core.handlers.retry import retry_delay, shown_message
from core.handlers.requests import RequestMixin
from core.handlers.pacing import Pacing
from core.handlers.spending import Spending
from core.handlers.validation import validate_arguments
from core.plan import parse_plan
from core.turn_context import attach
from core.providers.base import ProviderError
from core.tools.live_output import output_sink
from core.checkpoints.hooks import checkpointed_call
from core.tools.safe_exec import FILE_PATH_COMMAND_SPEC, run_file_path_command
from core.types import (
    ApprovalRequest,
    Decision,
    TaskResult,
    TaskStatus,
    ToolCall,
    ToolStatus,
    error_result,
    is_error,
)

log = logging.getLogger(__name__)

PASSTHROUGH_INSTRUCTIONS = """\
When you refer to code, cite the file paths. Be precise; do not guess at file contents, read them.
To find files, use executeFilePathCommand with a read-only command such as `find`, `git ls-files` or `grep -rl`.
For edits, use editFile for an exact change you can quote, aiderAutomatic for straightforward but broad changes and aiderInteractive for complex edits that need the user.
A message that starts with /aider asks for an edit with aider: choose between the aider tools.
When the query starts with /plan, answer with a step-by-step plan inside <plan> and </plan>.
A message that is just /continue means your previous answer was cut off: go on exactly where it stopped, without repeating it."""

BUDGET_HINT = (
    "To go on, type /budget for a fresh session allowance (or raise --max-cost / max_cost) and send your message again; "
    "a per-turn budget starts afresh with your next message."
)

_IN_MEMORY_EVENTS = (ev.TextDelta, ev.ThinkingDelta, ev.ToolOutputChunk)
"""Events observers only keep in memory (notified on the loop; the rest go through a thread)."""

INTERRUPTED_RESULT = "interrupted: the user cancelled the turn before this tool finished"
CUT_CALL_RESULT = (
    "Not run: your answer reached the output limit (max_tokens) while this call was being written, "
    "so its arguments may be incomplete. Call it again, with shorter arguments or in smaller steps."
)
ABANDONED_STOPS = frozenset({"max_tokens"})
"""Stop reasons after which the last tool call of the response may have been cut short."""

@dataclass
class _Turn:
    """Mutable state of the user turn in progress (what cleanup needs on interruption)."""

    query: str
    started: float = field(default_factory=time.monotonic)
    partial: list[str] = field(default_factory=list)
    user_message: dict[str, Any] | None = None
    unanswered: list[ToolCall] = field(default_factory=list)
    finished: bool = False
    events: asyncio.Queue[ev.Event] = field(default_factory=asyncio.Queue)
    """Events produced while a tool call is being decided or run (approvals, output), yielded live."""
    waited: dict[str, float] = field(default_factory=dict)
    """Seconds each tool call (by id) spent waiting for the user's approval."""
    started_usage: dict[str, int] | None = None
    """The usage reported by the response streaming now (None: no response has started)."""


class PassthroughHandler(RequestMixin, BaseHandler):
    """Handles raw user queries with the model and the registered tools."""

    def __init__(self, task_system: Any, memory_system: Any, model_provider: Any = None, config: Any = None, *, pacing: Pacing | None = None) -> None:
        super().__init__(task_system, memory_system, model_provider, config)
        pacing = pacing or Pacing()
        self._active_subtask_id: str | None = None
        self._direct_tools: dict[str, Callable[..., Any]] = {}
        self._subtask_tools: dict[str, Callable[..., Any]] = {}
        self._observers: list[Any] = []
        self._retry_budget = pacing.retry_budget
        self._retry_base_delay = pacing.retry_base_delay
        self._turn: _Turn | None = None
        self._closing: ev.Event | None = None
        """What an interrupted turn leaves for the observers: its partial message or abandoned response."""
        self._clock: Callable[[], float] = pacing.clock
        """Measures tool calls' run time and approval waits (tests pass a manual clock)."""
        self._checkpoints: Any = None
        self._spending = Spending(self._config, self._history, lambda: self._model_provider)
        self._init_requests(PASSTHROUGH_INSTRUCTIONS, pacing.wall_clock)
        self.register_tool({**FILE_PATH_COMMAND_SPEC, "takes_call_id": True, "read_only": True}, self._file_path_command)
        if hasattr(task_system, "approve_changes"):
            task_system.approve_changes = self.approve_task  # /task runs that change files ask in read-only mode

    # -- what others read (read-only) ------------------------------------------------
    @property
    def observers(self) -> tuple[Any, ...]:
        """Who is told every event (``add_observer``, ``remove_observer``)."""
        return tuple(self._observers)

    @property
    def spending(self) -> Spending:
        """Usage, budget and the context figure's reported part (change them through its methods)."""
        return self._spending

    @property
    def usage(self) -> Any:
        """The provider-reported usage of every response (``core.usage.UsageLedger``)."""
        return self._spending.usage

    @property
    def budget(self) -> Any:
        """The token and money limits (``core.usage.Budget``)."""
        return self._spending.budget

    @property
    def last_usage(self) -> Any:
        """The last response's reported usage (``core.usage.Usage``), None when it no longer describes the next request."""
        return self._spending.last_usage

    @property
    def model_name(self) -> str:
        return self._spending.model_name

    @property
    def user_turns(self) -> int:
        """The number of the current (or last) user turn (:mod:`core.turns`), read from the history."""
        return self._history.current_turn

    @property
    def checkpoints(self) -> Any:
        """The project's checkpoints (issue 26; ``core.checkpoints.Checkpoints``), or None: writers snapshot through them."""
        return self._checkpoints

    def use_checkpoints(self, checkpoints: Any) -> None:
        """Snapshot the project before every writer (and diff after a command) through ``checkpoints``."""
        self._checkpoints = checkpoints

    @property
    def turn_running(self) -> bool:
        """True while a user turn is in progress (``/compact`` waits for it to end)."""
        return self._turn is not None and not self._turn.finished

    def use_model(self, provider: str, model: str) -> None:
        """The next requests go to ``provider``'s ``model`` (``/model``), the conversation carried over.

        The settings are replaced by a copy that names the model, never changed in place
        (they are read-only after start); the last reported prompt was the other model's.
        """
        from core.providers import create_provider

        self._config = self._config.model_copy(update={"provider": provider, "model": model})
        self._model_provider = create_provider(self._config)
        self._conversation_files.caching = bool(getattr(self._model_provider, "prompt_cache", True))
        self._spending.forget_reported_prompt()

    # -- public entry points -------------------------------------------------
    def reset_conversation(self) -> None:
        super().reset_conversation()
        self._active_subtask_id = None
        self._conversation_files.rebuild([])
        self._spending.reset()

    def add_observer(self, observer: Any) -> None:
        """Pass every event of every turn to ``observer.record(event)`` (e.g. the session recorder).

        ``record`` may return extra events (warnings) to show; an ``interrupted()``
        method, if present, is called when a turn is cancelled.
        """
        self._observers.append(observer)

    def remove_observer(self, observer: Any) -> None:
        if observer in self._observers:
            self._observers.remove(observer)

    async def stream_query(self, query: str, images: Sequence[dict[str, str]] = ()) -> AsyncIterator[ev.Event]:
        """Run one user turn, yielding every step as an event; ``images`` (:mod:`core.images`) go with the query.

        Cancelling the consuming task (or closing the iterator) interrupts the turn:
        the partial text is kept and marked interrupted, and every unanswered tool
        request gets a synthetic result, so the history stays valid for the API.
        """
        finished = False
        try:
            async with contextlib.aclosing(self._stream_turn(query, images)) as turn_events:
                async for event in turn_events:
                    if isinstance(event, (ev.TurnCompleted, ev.TurnFailed)):
                        finished = True
                    extra = await self._notify_off_loop(event)
                    yield event
                    for warning in extra:
                        yield warning
        finally:
            if not finished:
                closing, self._closing = self._closing, None
                if self._observers:
                    await self._record_interruption_off_loop(closing)

    async def _record_interruption_off_loop(self, closing: ev.Event | None) -> None:
        """Tell the observers the turn was interrupted (Esc), in a worker thread like every other record.

        The recorder writes and fsyncs the partial answer and the ``interruption`` record;
        the event loop (the UI) does not wait on the disk. The thread finishes its writes
        even if this await is cancelled again; while the loop shuts down they run here.
        """
        try:
            await asyncio.to_thread(self._record_interruption, closing)
        except RuntimeError:  # the loop's executor is gone (shutting down): write here
            self._record_interruption(closing)

    def _record_interruption(self, closing: ev.Event | None) -> None:
        if closing is not None:
            self._notify(closing)  # the partial answer (and the usage reported) before the interruption
        for observer in list(self._observers):
            interrupted = getattr(observer, "interrupted", None)
            if interrupted is not None:
                try:
                    interrupted()
                except Exception:  # noqa: BLE001 - recording must never break the turn
                    log.exception("observer failed on interruption")

    async def _notify_off_loop(self, event: ev.Event) -> list[ev.Event]:
        """Tell the observers about ``event`` without holding the event loop on their disk writes.

        Deltas only accumulate in memory and are passed inline; every other event
        (a record written and fsynced by the session recorder) is passed in a
        worker thread, one at a time and in order.
        """
        if not self._observers:
            return []
        if isinstance(event, _IN_MEMORY_EVENTS):
            return self._notify(event)
        return await asyncio.to_thread(self._notify, event)

    def _notify(self, event: ev.Event) -> list[ev.Event]:
        extra: list[ev.Event] = []
        for observer in list(self._observers):
            try:
                extra.extend(observer.record(event) or [])
            except Exception:  # noqa: BLE001
                log.exception("observer failed on %s", event.kind)
        return extra

    async def _stream_turn(self, query: str, images: Sequence[dict[str, str]] = ()) -> AsyncIterator[ev.Event]:
        if self._turn is not None and not self._turn.finished:
            message = "A turn is already running; wait for it or press Esc to cancel it."
            yield ev.TurnFailed(reason="busy", message=message, result={"status": TaskStatus.FAILED.value, "content": message, "metadata": {"reason": "busy"}})
            return
        turn = self._turn = _Turn(query=query)
        self._turn_started_at = turn.started
        self._tool_calls_this_turn = 0
        mode, text = split_mode(query)
        message = turn.user_message = self._history.append_user(query, turn=self._history.current_turn + 1, **({"images": list(images)} if images else {}))
        try:
            relevant = await asyncio.to_thread(self._get_relevant_files, text)
            if self._active_subtask_id is None:
                self._active_subtask_id = uuid.uuid4().hex[:12]
            parts = await asyncio.to_thread(self._turn_parts, mode, relevant)
            attach(message, parts)
            self._conversation_files.record(message)
            yield ev.TurnStarted(
                query=query, subtask_id=self._active_subtask_id, turn=self._history.current_turn, relevant_files=tuple(relevant), context_parts=tuple(parts)
            )
            async with contextlib.aclosing(self._tool_loop(turn, self.system_prompt(), mode, relevant)) as loop_events:
                async for event in loop_events:
                    yield event
        finally:
            if not turn.finished:
                self._close_interrupted(turn)
            self._turn = None

    # -- the loop --------------------------------------------------------------
    async def _tool_loop(self, turn: _Turn, system_prompt: str, mode: str, relevant: list[str]) -> AsyncIterator[ev.Event]:
        tools = self.get_tool_specs()
        turns_this_query = 0
        warned = False
        final_text = ""
        paused = ""  # the answer so far of a turn a server tool paused (pause_turn), issue 25
        final_stop = ""
        while True:
            async for event in self._compactor.before_request(system_prompt, tools):  # issue 27: compact past the threshold
                yield event
            heuristic = self.estimate_tokens(system_prompt, tools) if self._spending.last_usage is None else 0
            estimate = self._last_estimated_tokens = self.context_meter(heuristic).tokens
            window = self._compactor.window.tokens
            if window and estimate >= window:
                yield self._fail(
                    "resource_exhaustion",
                    f"Context window exhausted: the request needs about {estimate:,} tokens but the window is "
                    f"{window:,} tokens. It was not sent. Drop files from the context or /reset the conversation.",
                    relevant,
                    resource="context_window",
                )
                return
            if window and estimate >= 0.8 * window and not warned:
                warned = True
                yield ev.Warning(code="context_80", message=f"Context is {estimate / window:.0%} full ({estimate:,} of {window:,} tokens).")
            if unpriced := self._spending.unpriced_budget_warning():
                yield ev.Warning(code="budget_unpriced", message=unpriced)
            if problem := self._spending.budget_problem(heuristic):
                yield self._fail(
                    "resource_exhaustion",
                    f"Budget reached: {problem}, so it was not sent. Every tool call so far was answered. "
                    + BUDGET_HINT,
                    relevant,
                    resource="budget",
                )
                return
            if self._config.max_turns and turns_this_query >= self._config.max_turns:
                yield self._fail(
                    "resource_exhaustion",
                    f"Turn limit reached: the model answered {turns_this_query} times in this turn (limit {self._config.max_turns}).",
                    relevant,
                    resource="turns",
                )
                return

            complete: ev.ResponseComplete | None = None
            invalid: dict[str, str] = {}
            attempt = 0
            compacted = False
            while complete is None:
                turn.partial = []
                turn.started_usage = None
                try:
                    stream = self._model_provider.stream_message(self._history.messages(), system_prompt, tools)
                    async with contextlib.aclosing(idle_guard(stream, self._config.idle_timeout)) as items:
                        async for item in items:
                            if isinstance(item, ev.ResponseStarted):
                                turn.started_usage = dict(item.usage)
                            elif isinstance(item, ev.TextDelta):
                                turn.partial.append(item.text)
                                yield item
                            elif isinstance(item, ev.ThinkingDelta):
                                yield item
                            elif isinstance(item, ev.ToolCallReady) and item.error:
                                invalid[item.call.id] = item.error
                            elif isinstance(item, ev.ResponseComplete):
                                complete = item
                except ProviderError as exc:
                    if not compacted and not turn.partial and is_prompt_too_long(exc):  # issue 27: compact, retry once
                        compacted = True
                        async for event in self._compactor.before_request(system_prompt, tools, trigger="prompt_too_long", error=exc):
                            yield event
                        if self._compactor.compacted_now:
                            continue
                    shown = shown_message(exc, self._config.secrets())
                    spent = self._book_unfinished(turn)
                    if exc.retryable and not turn.partial and attempt < self._config.max_retries and self._retry_budget.try_spend():
                        if spent is not None:
                            yield ev.ResponseAbandoned(usage=spent)
                            yield ev.MetricsUpdated(metrics=self.get_resource_metrics())
                        attempt += 1
                        delay = retry_delay(exc, attempt, self._retry_base_delay)
                        yield ev.Warning(
                            code="retry",
                            message=f"{shown} Retrying in {delay:.1f}s ({attempt}/{self._config.max_retries})...",
                        )
                        await asyncio.sleep(delay)
                        continue
                    partial = "".join(turn.partial)
                    incomplete = exc.kind == "incomplete"
                    if partial:
                        # Kept, and marked as what cut it: the connection, or the provider's error.
                        stop = "incomplete" if incomplete else "error"
                        error = {} if incomplete else {"kind": exc.kind, "message": shown}
                        self._history.append_assistant(partial, interrupted=True, stop_reason=stop, **({"error": error} if error else {}))
                        yield ev.AssistantMessage(content=partial, interrupted=True, stop_reason=stop, error=error, usage=spent or {})
                    elif spent is not None:
                        yield ev.ResponseAbandoned(usage=spent)
                    turn.partial = []
                    if incomplete:
                        shown = (
                            f"The connection closed before the answer finished; {len(partial):,} characters arrived; "
                            "send again to retry."
                        )
                        yield self._fail("incomplete_response", shown, relevant, error_kind=exc.kind, characters=len(partial))
                    elif partial:
                        shown = f"{shown} The answer stopped after {len(partial):,} characters (kept, marked)."
                        yield self._fail("llm_error", shown, relevant, error_kind=exc.kind, status=exc.status, characters=len(partial))
                    else:
                        yield self._fail("llm_error", shown, relevant, error_kind=exc.kind, status=exc.status)
                    return
            turn.partial = []
            turn.started_usage = None
            turns_this_query += 1
            self._turn_count += 1
            calls = list(complete.tool_calls)
            usage = self._spending.record_usage(complete.usage, len(self._history))
            extra: dict[str, Any] = {}
            if complete.stop_reason not in ("", "end_turn", "tool_use"):
                extra["stop_reason"] = complete.stop_reason
            if complete.thinking:
                extra["thinking"] = [dict(block) for block in complete.thinking]
            self._history.append_assistant(complete.content, tool_calls=[c.as_dict() for c in calls], **extra)
            turn.unanswered = list(calls)
            yield ev.AssistantMessage(
                content=complete.content,
                tool_calls=tuple(calls),
                final=not calls and complete.stop_reason != "pause_turn",
                stop_reason=complete.stop_reason,
                thinking=complete.thinking,
                usage=self._spending.usage_record(usage),
            )
            yield ev.MetricsUpdated(metrics=self.get_resource_metrics())
            if not calls and complete.stop_reason == "pause_turn":
                paused += complete.content  # the conversation goes back as it is and the model continues (a response counted)
                continue
            if not calls:
                final_text = paused + complete.content
                final_stop = complete.stop_reason
                break
            cut = calls.pop() if complete.stop_reason in ABANDONED_STOPS else None
            guard_tripped = False
            for call in calls:
                if self._tool_calls_this_turn >= self._config.max_tool_calls:
                    guard_tripped = True
                    result = error_result(
                        f"Not run: the limit of {self._config.max_tool_calls} tool calls per turn was reached.",
                        reason="max_tool_calls",
                    )
                    self._answer(turn, call, result)
                    yield ev.ToolCallFinished(call=call, status=ToolStatus.NOT_RUN, result=result["content"], duration=0.0, metadata=result["metadata"])
                    continue
                self._tool_calls_this_turn += 1
                self._total_tool_calls += 1
                async with contextlib.aclosing(self._run_call(turn, call, invalid.get(call.id))) as call_events:
                    async for event in call_events:
                        yield event
            if cut is not None:
                # The output limit struck while this call was written: it never runs, and the model is told.
                result = error_result(CUT_CALL_RESULT, reason=complete.stop_reason)
                self._answer(turn, cut, result)
                yield ev.ToolCallFinished(call=cut, status=ToolStatus.NOT_RUN, result=result["content"], duration=0.0, metadata=result["metadata"])
            yield ev.MetricsUpdated(metrics=self.get_resource_metrics())
            if guard_tripped:
                yield self._fail(
                    "resource_exhaustion",
                    f"Stopped: the model asked for more than {self._config.max_tool_calls} tool calls in one turn "
                    "(the limit; change it with --max-tool-calls or ASSISTANT_TUI_MAX_TOOL_CALLS).",
                    relevant,
                    resource="tool_calls",
                )
                return

        metadata: dict[str, Any] = {
            "subtask_id": self._active_subtask_id,
            "relevant_files": relevant,
            "resource_metrics": self.get_resource_metrics(),
        }
        if final_stop not in ("", "end_turn"):
            metadata["stop_reason"] = final_stop
        if mode == "plan":
            metadata["template"] = "plan"
            metadata["plan_steps"] = parse_plan(final_text)
        turn.finished = True
        yield ev.TurnCompleted(result={"status": TaskStatus.COMPLETE.value, "content": final_text, "metadata": metadata})

    async def _run_call(self, turn: _Turn, call: ToolCall, argument_error: str | None) -> AsyncIterator[ev.Event]:
        """Validate, approve and run one tool call; always answers it.

        Approvals and output are yielded as they happen (not after the call), and the
        time spent waiting for the user is reported apart from the time the call ran.
        """
        started = self._clock()
        turn.waited.pop(call.id, None)
        yield ev.ToolCallStarted(call=call, started_at=time.time())
        outcome: list[tuple[TaskResult, str]] = []
        async with contextlib.aclosing(pump(turn.events, self._decide_and_execute(call, argument_error), outcome)) as pumped:
            async for event in pumped:
                yield event
        result, status = outcome[0]
        result = self.answer_reread(call, cap_result(result, self._config.max_tool_result_chars))
        self._answer(turn, call, result)
        waited = turn.waited.pop(call.id, 0.0)
        yield ev.ToolCallFinished(
            call=call,
            status=status or tool_status(result),
            result=result.get("content", ""),
            duration=round(max(0.0, self._clock() - started - waited), 4),
            metadata=dict(result.get("metadata") or {}),
            waited=round(waited, 4),
        )

    async def _decide_and_execute(self, call: ToolCall, argument_error: str | None) -> tuple[TaskResult, str]:
        """The call's result and its status when known here (``denied``), else ""."""
        spec = self._registered_tools.get(call.name)
        if spec is None:
            available = ", ".join(sorted(self._registered_tools)) or "none"
            return error_result(f"Unknown tool {call.name!r} (ToolNotFound). Available tools: {available}.", error="ToolNotFound"), ""
        if argument_error:
            return error_result(f"Invalid arguments for {call.name}: {argument_error}. Send a JSON object matching the tool's schema."), ""
        if problem := validate_arguments(spec.get("input_schema") or {}, call.parameters):
            return error_result(f"Invalid arguments for {call.name}: {problem}"), ""
        ruling = await self._approval_for(call, spec)
        if ruling is not None and ruling.automatic:
            self.emit(ev.ApprovalRecorded(call=call, decision=ruling.decision, automatic=True))
        if ruling is not None and not ruling.allowed:
            return error_result(f"Denied: {ruling.reason}", reason="denied"), ToolStatus.DENIED

        def sink(text: str, stream: str) -> None:
            self.emit(ev.ToolOutputChunk(call_id=call.id, text=text, stream="stderr" if stream == "stderr" else "stdout"))

        token = output_sink.set(sink)  # the tool's live output (a sandboxed command's) becomes events
        try:
            run = lambda: self._execute_tool(call.name, call.parameters, call_id=call.id)  # noqa: E731
            return await checkpointed_call(self, call, spec, changes_things(call.name, spec), run), ""  # issue 26
        except ToolNotFound:
            return error_result(f"Unknown tool {call.name!r}", error="ToolNotFound"), ""
        finally:
            output_sink.reset(token)

    def emit(self, event: ev.Event) -> None:
        """Send ``event`` to the consumer of the running turn as soon as it can take it.

        For what happens while a tool call is decided or runs (approval prompts,
        output chunks); ignored between turns.
        """
        if self._turn is not None and not self._turn.finished:
            self._turn.events.put_nowait(event)

    async def ask_user(self, request: ApprovalRequest) -> Decision:
        """Ask the user's approver about ``request``, reporting the wait as events.

        ``ApprovalRequested`` goes out before the prompt opens, ``ApprovalRecorded``
        (with the seconds waited) the moment the user answers.
        """
        if not self._approvals.can_ask:
            return Decision.DENY
        call = request.tool_call
        self.emit(ev.ApprovalRequested(call=call, title=request.title))
        asked = self._clock()
        try:
            decision = await self._approvals.ask(request)
        finally:
            waited = self._clock() - asked
            if self._turn is not None:
                self._turn.waited[call.id] = self._turn.waited.get(call.id, 0.0) + waited
        self.emit(ev.ApprovalRecorded(call=call, decision=decision, waited=round(waited, 4)))
        return decision

    async def approve_task(self, key: str, inputs: dict[str, Any]) -> str | None:
        """Whether a ``/task`` run that changes files (aider) may go ahead: None, or why not.

        In read-only mode (``approval_mode=deny``) it asks the user every time (no "always"):
        the user typed the task, but read-only means nothing changes unless they say so now.
        """
        shown = "\n".join(f"{name}: {value}" for name, value in inputs.items())
        request = ApprovalRequest(
            tool_call=ToolCall(id=f"task-{uuid.uuid4().hex[:8]}", name=f"/task {key}", parameters=dict(inputs)),
            title=f"Run /task {key} in read-only mode?",
            detail=shown,
            reason="The approval mode is read-only (deny), and this task changes files.",
        )
        ruling = await self._approvals.confirm_typed(request)
        if ruling is None or ruling.allowed:
            return None
        if ruling.via == "nobody":
            return f"the approval mode is read-only (deny) and nobody can approve /task {key} here."
        return f"you declined /task {key} (the approval mode is read-only)."

    async def _approval_for(self, call: ToolCall, spec: dict[str, Any]) -> Ruling | None:
        """None when no approval is needed; else how :class:`core.approvals.Approvals` ruled."""
        policy = spec.get("approval_policy")
        changes = changes_things(call.name, spec)
        if callable(policy) and not (changes and self._approvals.mode == "deny"):
            verdict = await call_sync_or_async(policy, call.parameters)
            need = Need(
                keys=(verdict.session_key,) if verdict.session_key else (),
                project_key=getattr(verdict, "project_key", ""),  # editFile: "always for the project" (issue 26)
                changes=changes,
                policy=verdict.action,
                policy_reason=verdict.reason,
                routine=bool(getattr(verdict, "routine", False)),
                nobody_reason="it needs the user's approval, and nobody can approve it here (headless mode); tell the user what you wanted to run.",
            )

            async def prepare(keys: tuple[str, ...]) -> ApprovalRequest:
                detail = verdict.detail or _describe_parameters(call.parameters)
                title = f"{call.name}: {verdict.title}" if verdict.title else f"Allow {call.name}?"
                return ApprovalRequest(tool_call=call, title=title, detail=detail, session_key=verdict.session_key,
                                       project_key=getattr(verdict, "project_key", ""))

            return await self._approvals.decide(need, prepare, ask=self.ask_user)
        if not (spec.get("requires_approval") or changes and self._approvals.mode == "deny"):
            return None
        describe = spec.get("describe")

        async def prepare_call(keys: tuple[str, ...]) -> ApprovalRequest:
            try:
                detail = await call_sync_or_async(describe, call.parameters) if callable(describe) else _describe_parameters(call.parameters)
            except Exception as exc:  # noqa: BLE001 - the tool itself will report the problem
                detail = f"{_describe_parameters(call.parameters)}\n(could not prepare: {exc})"
            return ApprovalRequest(tool_call=call, title=f"Allow {call.name}?", detail=detail, session_key=call.name)

        need = Need(keys=(call.name,), changes=changes,
                    read_only_reason=DENY_MODE_REASON if changes else "tool calls that change files are denied by the approval mode (approval_mode=deny).")
        return await self._approvals.decide(need, prepare_call, ask=self.ask_user)

    def _answer(self, turn: _Turn, call: ToolCall, result: TaskResult) -> None:
        self._history.append_tool_result(call.id, call.name, result.get("content", ""), is_error=is_error(result))
        if call in turn.unanswered:
            turn.unanswered.remove(call)

    def _book_unfinished(self, turn: _Turn) -> dict[str, Any] | None:
        """Book the response that started and ended without its final usage report, as a lower bound.

        Returns its usage record (None when no response had started: nothing was billed).
        """
        raw, turn.started_usage = turn.started_usage, None
        if raw is None:
            return None
        return self._spending.usage_record(self._spending.record_usage(raw, len(self._history), reported=False), reported=False)

    def _close_interrupted(self, turn: _Turn) -> None:
        """Keep what the interrupted turn produced and leave the history valid.

        What the observers should save (the partial message with the usage reported, or the
        abandoned response) waits in ``_closing`` for ``stream_query`` to hand over.
        """
        partial = "".join(turn.partial)
        spent = self._book_unfinished(turn)
        if partial or spent is not None:
            self._closing = ev.AssistantMessage(content=partial, interrupted=True, usage=spent or {}) if partial else ev.ResponseAbandoned(usage=spent or {})
        if partial or not turn.unanswered:
            self._history.append_assistant(partial, interrupted=True)
        for call in list(turn.unanswered):
            self._answer(turn, call, error_result(INTERRUPTED_RESULT, reason="interrupted"))
        turn.finished = True
        log.info("turn interrupted after %d chars and %d unanswered tool calls", len(partial), len(turn.unanswered))

    def _fail(self, reason: str, message: str, relevant: list[str], **details: Any) -> ev.TurnFailed:
        """End the turn with a failure.

        A turn that failed before any answer takes its user message back out of the
        history (``metadata["retracted"]``): the UI puts the text back in the prompt, and
        sending it again then makes exactly the request a first send would have made.
        """
        turn = self._turn
        if turn is not None:
            turn.finished = True
            if turn.user_message is not None and self._history.retract(turn.user_message):
                # nothing was answered: the resend is this turn again (its number with it)
                self._conversation_files.rebuild(self._history)  # its file copies left with it: a resend carries them again
                details["retracted"] = True
        metadata = {
            "reason": reason,
            "subtask_id": self._active_subtask_id,
            "relevant_files": relevant,
            "resource_metrics": self.get_resource_metrics(),
            **details,
        }
        log.warning("turn failed (%s): %s", reason, message)
        return ev.TurnFailed(reason=reason, message=message, result={"status": TaskStatus.FAILED.value, "content": message, "metadata": metadata})

    def _display_path(self, path: str) -> str:
        try:
            return str(Path(path).relative_to(self._project_root))
        except ValueError:
            return path

    # -- tools registered by the handler -----------------------------------------
    async def _file_path_command(self, params: dict[str, Any], tool_call_id: str = "") -> TaskResult:
        """``executeFilePathCommand``; ``tool_call_id`` is the call being answered (its approval names it)."""
        return await run_file_path_command(
            params,
            project_root=self._project_root,
            timeout=self._config.command_timeout,
            secrets=self._config.secrets(),
            approvals=self._approvals,
            ask=self.ask_user,
            tool_call_id=tool_call_id,
        )

def split_mode(query: str) -> tuple[str, str]:
    """``("plan", rest)`` for ``/plan rest``, ``("aider", rest)`` for ``/aider rest``, else ``("chat", query)``."""
    stripped = query.lstrip()
    for mode in ("plan", "aider"):
        prefix = f"/{mode}"
        if stripped == prefix or stripped.startswith(prefix + " ") or stripped.startswith(prefix + "\n"):
            return mode, stripped[len(prefix) :].strip()
    return "chat", query


async def idle_guard(stream: AsyncIterator[Any], idle_timeout: float) -> AsyncIterator[Any]:
    """Re-yield ``stream``, abandoning it when no item arrives for ``idle_timeout`` seconds."""
    iterator = stream.__aiter__()
    try:
        while True:
            try:
                # Not asyncio.wait_for: on Python 3.11 it drops a cancellation (Esc) that
                # arrives together with the next item, and the turn would run on.
                async with asyncio.timeout(idle_timeout):
                    item = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise ProviderError(
                    "timeout", f"The provider sent nothing for {idle_timeout:g} seconds, so the response was abandoned"
                ) from None
            yield item
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()


def _describe_parameters(params: dict[str, Any]) -> str:
    lines = []
    for key, value in params.items():
        if isinstance(value, list):
            value = ", ".join(map(str, value)) or "(none)"
        lines.append(f"{key}: {value}")
    return "\n".join(lines)
