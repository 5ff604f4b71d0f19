"""The open conversation: one object that owns its state, for every consumer (TUI, ``-p``, ACP).

:class:`Session` is built by :class:`core.app.Application` (``application.session_state``).
It owns, and is the only writer of (outside ``core/handlers``):

- the conversation (the handler's history: turns go through :meth:`Session.stream_query`,
  notes such as ``/run`` output and ``/task`` results through the session), and what
  happened beside it (errors, warnings, interruptions: :attr:`Session.incidents`), which is
  everything a transcript view or ``/export`` shows, pruned chat widgets or not;
- the file context (picked, read-only, suggested: ``core.file_context.FileContext``),
  recorded in the transcript by the session whenever it changes and restored whole on resume;
- approvals: the "always allow" set, forgotten by :meth:`Session.new` and :meth:`Session.switch`;
- the transcript: the store, the writer and the recorder (start, resume, fork, new, switch, close);
- metrics: :meth:`Session.metrics` is the one place to read them between events.

Blocking methods (``start``, ``new``, ``switch``, ``close``: files and locks) run in a
thread when called from the event loop; the async ones keep their disk writes off it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Sequence

from core import events as ev
from core.file_context import AddOutcome, ContextFile, FileContext
from core.types import Approver, Message, TaskResult, is_error

if TYPE_CHECKING:
    from core.sessions import LoadedSession, SessionRecorder, SessionStore
    from core.sessions import StoredSession
    from core.sessions.load import Incident

log = logging.getLogger(__name__)

WarningListener = Callable[[ev.Warning], None]


class Session:
    """One open conversation.

    Args:
        handler: The handler that holds the conversation and runs the turns; None when
            the engine could not start (the session then holds a file context of its own).
        application: The Application it belongs to (``/task`` needs its task system);
            None for a bare handler (tests, embedding).
        project_root: The project, when there is no handler.
    """

    def __init__(self, handler: Any, *, application: Any = None, project_root: Path | None = None) -> None:
        self.application = application
        self.handler = handler
        own = getattr(handler, "file_context", None)
        self._detached = None if own is not None else FileContext(Path(project_root or getattr(handler, "project_root", None) or "."))
        self.store: SessionStore | None = None
        self.stored: StoredSession | None = None
        """The transcript's identity (id, path); None until :meth:`start`, or when saving failed."""
        self.recorder: SessionRecorder | None = None
        self.loaded: LoadedSession | None = None
        """The transcript read back by the last :meth:`start`, until a consumer takes it to redraw (:meth:`take_loaded`)."""
        self._incidents: list[Incident] = []
        self.warning_listeners: list[WarningListener] = []
        """Called with each warning a write outside a turn produced (e.g. the disk is full)."""
        self._recorded_context: list[dict[str, Any]] | None = None

    # -- what consumers read ----------------------------------------------------------
    @property
    def id(self) -> str | None:
        """The session id, or None while no transcript is open."""
        return self.stored.id if self.stored is not None else None

    @property
    def project_root(self) -> Path:
        return self.context.project_root

    @property
    def context(self) -> FileContext:
        """The file context (read it freely; change it with this session's methods)."""
        return self._detached if self._detached is not None else self.handler.file_context

    @property
    def history(self) -> list[Message]:
        """The conversation so far (a copy), tool requests and results included."""
        compactor = getattr(self.handler, "compactor", None)  # issue 27: the whole conversation, compacted or not
        return compactor.full_history() if compactor is not None else list(getattr(self.handler, "conversation_history", []))

    @property
    def incidents(self) -> list[Incident]:
        """Errors, warnings and interruptions so far (a copy), each with ``at``, its place in :attr:`history`."""
        return list(self._incidents)

    def rewound(self, incidents: list[Incident] | None = None, *, before: int | None = None) -> None:
        """A rewind cut the conversation: keep ``incidents`` (read back from the transcript), or
        those before message ``before`` (the history was cut in memory at that index)."""
        if incidents is not None:
            self._incidents = list(incidents)
        elif before is not None:
            self._incidents = [i for i in self._incidents if int(i.get("at") or 0) < before]

    def take_loaded(self) -> LoadedSession | None:
        """The transcript the last :meth:`start` read, once: the consumer redraws it, the session keeps only the conversation."""
        loaded, self.loaded = self.loaded, None
        return loaded

    @property
    def approvals(self) -> frozenset[str]:
        """What the user allowed for the rest of the session (tool names and command keys)."""
        return self.handler.approvals.allowed if self.handler is not None else frozenset()

    def set_approver(self, approve: Approver | None) -> None:
        """Who answers tool calls that need approval (the TUI's dialog, the ACP client); None denies them."""
        if self.handler is not None:
            self.handler.approvals.set_approver(approve)

    @property
    def approval_mode(self) -> str:
        """``ask``, ``allow`` or ``deny``: how tool calls that change things are approved."""
        return self.handler.approvals.mode if self.handler is not None else "ask"

    def set_approval_mode(self, mode: str) -> None:
        """Switch the approval mode (ACP's session modes); it applies from the next tool call.

        Raises:
            ValueError: ``mode`` is not ``ask``, ``allow`` or ``deny``.
        """
        if self.handler is not None:
            self.handler.approvals.set_mode(mode)

    def metrics(self) -> dict[str, Any]:
        """Resource use so far: turns, tool calls, tokens, context, usage and cost (SPEC 4)."""
        return self.handler.get_resource_metrics() if self.handler is not None else {}

    @property
    def usage(self) -> Any:
        """The provider-reported usage of every response (``core.usage.UsageLedger``), None without an engine."""
        return getattr(self.handler, "usage", None)

    @property
    def budget(self) -> Any:
        """The token and money limits (``core.handlers.budget``), None without an engine."""
        return getattr(self.handler, "budget", None)

    def refresh_budget(self) -> str:
        """``/budget``: a fresh session allowance; what it allows ("" when only per-turn limits are set)."""
        return self.handler.spending.refresh_budget()

    def entries(self) -> list[ContextFile]:
        """The context pane's rows with their token figures (may read new files: call off the loop)."""
        return self.context.entries()

    # -- turns ---------------------------------------------------------------------------
    async def stream_query(self, query: str, images: Sequence[dict[str, str]] = ()) -> AsyncIterator[ev.Event]:
        """Run one user turn, yielding every event; consume it with ``contextlib.aclosing``.

        ``images`` (checked by :func:`core.images.checked`) go to the model with the query.

        The turn's relevance suggestions become the context's suggested files. Closing
        the iterator (or cancelling its consumer) ends the turn at once, so the handler
        is free for the next query.
        """
        finished = False
        first = len(self._incidents)  # this turn's incidents start here
        try:
            async with contextlib.aclosing(self.handler.stream_query(query, images) if images else self.handler.stream_query(query)) as events:
                async for event in events:
                    if isinstance(event, ev.TurnStarted):
                        self.context.suggest(event.relevant_files)
                    elif isinstance(event, ev.Warning):
                        self._incident({"kind": "warning", "message": event.message, "code": event.code})
                    elif isinstance(event, (ev.TurnCompleted, ev.TurnFailed)):
                        finished = True
                        if isinstance(event, ev.TurnFailed):
                            self._failed(event, query, first)
                    yield event
        finally:
            if not finished:
                self._incident({"kind": "interruption"})

    def _incident(self, incident: Incident) -> None:
        self._incidents.append({**incident, "at": len(self.history)})

    def _failed(self, event: ev.TurnFailed, query: str, first: int) -> None:
        incident: Incident = {"kind": "error", "message": event.message, "reason": event.reason}
        if ((event.result or {}).get("metadata") or {}).get("retracted"):
            # The question left the history (it went back to the prompt): what happened under it
            # (retry warnings) stays with it, the question heading them, not under the next message.
            at = len(self.history)
            for earlier in self._incidents[first:]:
                earlier["at"] = at
            (self._incidents[first] if len(self._incidents) > first else incident)["query"] = query
        self._incident(incident)

    async def run_task(self, text: str) -> TaskResult:
        """``/task ...`` through the task system, its result kept in the conversation and transcript.

        Raises:
            TaskCommandError: the command cannot be parsed (nothing is recorded).
        """
        if self.application is None:
            from core.types import error_result

            return error_result("The task system is not available: the engine did not start.")
        result = await self.application.run_task_command(text)
        if (result.get("metadata") or {}).get("error") != "invalid_task_command":
            status = "failed" if is_error(result) else "done"
            await self.add_note(f"I ran `{text}` ({status}); its result:\n\n{result.get('content') or '(no output)'}")
        return result

    async def compact(self, focus: str = "") -> str:
        """``/compact [focus]``: compact the conversation now (issue 27); returns the line to show.

        Raises:
            CompactionFailed: a turn is running, there is nothing to compact, or the summary failed.
        """
        from core.compaction.commands import compact_now

        line = await compact_now(self.handler, focus)
        await self._say(ev.Warning(code="compacted", message=line))
        return line

    async def switch_model(self, choice: str) -> str:
        """``/model NAME``: the next turns go to another model, the conversation carried over (issue 27).

        Raises:
            ModelSwitchError: no such model among the configured providers.
        """
        from core.compaction.commands import switch_model

        line = await switch_model(self.handler, choice)
        await self._say(ev.Warning(code="model_switched", message=line))
        return line

    async def _say(self, warning: ev.Warning) -> None:
        """A line outside any turn, kept where it happened (f2, ``/export``) and in the transcript."""
        self._incident({"kind": "warning", "message": warning.message, "code": warning.code})
        if self.recorder is not None:
            self._warn(await asyncio.to_thread(self.recorder.record, warning))

    async def add_note(self, content: str) -> None:
        """Add a user message that starts no turn (``/run`` output, a ``/task`` result) and record it."""
        self.handler.add_message("user", content)
        if self.recorder is not None:
            self._warn(await asyncio.to_thread(self.recorder.user, content))

    # -- file context ------------------------------------------------------------------
    async def plan_add(self, pattern: str) -> AddOutcome:
        """Which files of ``pattern`` may be added (refused ones with the reason) and where they would
        take the context (:attr:`AddOutcome.over_budget`); nothing changes yet."""
        outcome = await asyncio.to_thread(self.context.plan_add, pattern)
        figure = self.metrics()
        outcome.budget = int(figure.get("context_window") or 0)
        outcome.context_after = int(figure.get("estimated_tokens") or 0) + outcome.tokens
        return outcome

    async def commit_add(self, outcome: AddOutcome) -> list[str]:
        """Pick the files a :meth:`plan_add` allowed; returns the paths newly picked."""
        added = self.context.commit(outcome)
        await self._context_changed()
        return added

    async def drop_files(self, pattern: str) -> list[str]:
        """Unpick the files matching a path or glob; returns what was dropped."""
        dropped = self.context.drop(pattern)
        await self._context_changed()
        return dropped

    async def toggle_read_only(self, path: str) -> bool:
        """Flip a picked file's read-only flag (aider may read it, not edit it); returns the new flag."""
        flag = self.context.toggle_read_only(path)
        await self._context_changed()
        return flag

    def suggest(self, paths: list[str]) -> None:
        """Show ``paths`` as suggestions (not recorded: a resumed session has none)."""
        self.context.suggest(paths)

    def dismiss(self, path: str) -> bool:
        """Remove one suggestion."""
        return self.context.dismiss(path)

    async def _context_changed(self) -> None:
        files = self.context.snapshot()
        if self.recorder is None or files == self._recorded_context:
            return
        self._recorded_context = files
        self._warn(await asyncio.to_thread(self.recorder.context, files))

    def _record_context_now(self) -> None:
        """Record the context in the transcript just opened (blocking: already in a thread)."""
        files = self.context.snapshot()
        if self.recorder is not None and files:
            self._recorded_context = files
            self._warn(self.recorder.context(files))
        else:
            self._recorded_context = files

    def _warn(self, warnings: list[ev.Warning]) -> None:
        for warning in warnings:
            log.warning("session %s: %s", self.id, warning.message)
            for listener in list(self.warning_listeners):
                try:
                    listener(warning)
                except Exception:  # noqa: BLE001 - a listener must not stop the write path
                    log.exception("warning listener failed")

    # -- the transcript (blocking: run in a thread from the loop) -----------------------------
    def start(self, *, continue_latest: bool = False, resume: str | None = None, fork_if_locked: bool = False) -> list[str]:
        """Open (or create) this project's transcript and restore it: conversation, usage and file context.

        Returns notices for the user (repairs made while loading, a fork, a fresh
        start when there was nothing to continue).

        Raises:
            SessionNotFound: ``resume`` names no session.
            SessionLocked: another assistant-tui has the session open (and no fork was asked).
            SessionError: the data directory cannot be used.
        """
        from core.sessions import SessionLocked, SessionRecorder, SessionStore, load_session

        settings = self.handler.config
        store = self.store = self.store or SessionStore()
        root = self.project_root.resolve()
        notices: list[str] = []
        if resume:
            stored = store.open(resume, root)
        elif continue_latest:
            stored = store.latest(root)
            if stored is None:
                notices.append("No earlier session in this project; starting a new one.")
                stored = store.create(root)
        else:
            stored = store.create(root)
        try:
            writer = store.writer(stored, provider=settings.provider, model=settings.model_name)
        except SessionLocked:
            if not fork_if_locked:
                raise
            stored = store.fork(stored, root)
            notices.append(f"That session is open in another assistant-tui; continuing in a fork, {stored.id}.")
            writer = store.writer(stored, provider=settings.provider, model=settings.model_name)
        self.loaded = None
        if stored.path.exists() and stored.path.stat().st_size:
            loaded = self.loaded = load_session(stored)
            self.handler.restore_conversation(loaded.messages, loaded.usage, loaded.compactions)
            self._incidents = list(loaded.incidents)
            self.context.restore((loaded.context or {}).get("files") or [])
            notices.extend(loaded.warnings)
        self.close()
        self.stored = stored
        self.recorder = SessionRecorder(writer)
        self.handler.add_observer(self.recorder)
        self._recorded_context = self.context.snapshot() if self.loaded is not None else None
        if self.loaded is None:
            self._record_context_now()  # a new transcript starts with the files the user kept
        return notices

    def new(self) -> list[str]:
        """``/new``: a fresh conversation in a new transcript; picked files stay, approvals do not."""
        self.close()
        self.stored = None
        self.reset(keep_files=True)
        return self.start()

    def switch(self, session_id: str) -> list[str]:
        """Open another saved session in place of this one (its files, not this one's; no approvals carried over).

        Raises:
            SessionError: as :meth:`start` (this session is then already closed and forgotten).
        """
        self.close()
        self.stored = None
        self.reset(keep_files=False)
        return self.start(resume=session_id, fork_if_locked=True)

    def reset(self, *, keep_files: bool = True) -> None:
        """Forget the conversation, the "always allow" answers and the suggestions (and the picked files unless ``keep_files``).

        The transcript stays open: :meth:`new` and :meth:`switch` also change it.
        """
        self.loaded = None
        self._incidents = []
        if self.handler is not None:
            self.handler.reset_conversation()
            self.handler.approvals.forget()
        self.context.clear(keep_picked=keep_files)

    def close(self) -> None:
        """Stop recording; the transcript stays on disk."""
        recorder, self.recorder = self.recorder, None
        if recorder is None:
            return
        self.handler.remove_observer(recorder)
        try:
            recorder.writer.close()
        except Exception:  # noqa: BLE001 - pending records are reported by the writer's own error
            log.exception("closing the session writer failed")

    # -- reading the conversation back ------------------------------------------------------
    def transcript_markdown(self) -> str:
        """The whole conversation as Markdown (what ``/export`` writes): ``/task`` results, errors and warnings included."""
        from core.sessions import render_markdown

        history, incidents = self.history, self.incidents
        return render_markdown(history, incidents) if history or incidents else "(nothing yet)"

    def export_markdown(self, path: Path) -> Path:
        """Write :meth:`transcript_markdown` to ``path`` (blocking); returns where it went.

        Raises:
            ExportError: ``path`` cannot be written (the message says why).
        """
        from core.sessions import export_markdown

        return export_markdown(self.history, path, self.incidents)
