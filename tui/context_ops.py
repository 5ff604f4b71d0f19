"""The TUI's file-context controller: ``@``, the picker, ``/add``, ``/drop`` and the context pane.

The state (picked, read-only, suggested files) and the rules (``core.file_context``,
``core.memory.policy``) are the engine's: :class:`FileContext` commands
``core.session.Session`` and draws what it holds. It writes to the pane and the chat
it was given, nothing else, and never to the handler.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from tui.format import format_tokens
from tui.widgets.context import ContextEntry, ContextPane, EntryMessage

if TYPE_CHECKING:
    from tui.hosts import FileHost

    from core.file_context import AddOutcome
    from core.session import Session
    from tui.engine import Engine
    from tui.widgets.chat import ChatView

log = logging.getLogger(__name__)


class FileContext:
    """What the user does to the files the next request carries, and the pane that shows them.

    Args:
        engine: the engine link (its session holds the files).
        pane: the context pane it redraws.
        chat: where it reports refused and missing files.
        host: the running app, for the over-budget question and notifications.
    """

    def __init__(self, engine: "Engine", pane: ContextPane, chat: "ChatView", host: "FileHost") -> None:
        self.engine = engine
        self.pane = pane
        self.chat = chat
        self.host = host
        self._listening: "Session | None" = None
        self._removed: list[ContextEntry] = []
        """What the pane's single-key drop removed, newest last: u puts it back."""
        self.on_change: Callable[[], None] | None = None
        """Called after each redraw: the picked files count in the context figure, so the status line re-reads it."""

    @property
    def session(self) -> "Session":
        session = self.engine.session
        if session is not self._listening:  # warnings of writes outside a turn (the disk is full) become notices
            session.warning_listeners.append(lambda warning: self.host.notify(warning.message, severity="warning"))
            self._listening = session
        return session

    @property
    def pinned(self) -> list[str]:
        """Absolute paths the user picked (a copy)."""
        return self.session.context.picked

    async def add_files(self, pattern: str) -> AddOutcome:
        """Add files matching a path or glob; refused ones are reported with their reason.

        When the files would take the context past its budget, the user is asked first.
        """
        from tui.widgets.chat import NoteMessage

        session = self.session
        outcome = await session.plan_add(pattern)
        for path, reason in outcome.refused:
            await self.chat.add(NoteMessage(f"{session.context.display(str(path))} was not added: it {reason}.", kind="warning", title="Not added"))
        if not (outcome.added or outcome.refused or outcome.already):
            ignored = " Files git ignores are left out of globs and directories: name one to add it." if outcome.glob else ""
            await self.chat.add(NoteMessage(f"No file matches {pattern!r} in {session.project_root}.{ignored}", kind="warning"))
        if outcome.over_budget:  # core weighs the files against the window (issue 24), the pane only shows figures
            budget, after = outcome.budget, outcome.context_after
            from tui.screens.confirm import ConfirmScreen

            files = len(outcome.added)
            question = (
                f"Adding {files} file{'s' if files != 1 else ''} ({format_tokens(outcome.tokens)} tokens) puts the context at "
                f"{format_tokens(after)} of its {format_tokens(budget)}-token budget ({after * 100 // budget}%). "
                "Requests over the budget are not sent. Add anyway?"
            )

            async def answered(yes: bool | None) -> None:
                if yes:
                    await self._commit(outcome)

            outcome.confirming = True
            self.host.push_screen(ConfirmScreen("Over the context budget", question, yes="Add anyway"), answered)
            return outcome
        await self._commit(outcome)
        return outcome

    async def _commit(self, outcome: AddOutcome) -> None:
        await self.session.commit_add(outcome)
        self.refresh()

    async def drop_files(self, pattern: str) -> list[str]:
        """Drop context entries matching a path or glob; returns what was dropped."""
        dropped = await self.session.drop_files(pattern)
        self.refresh()
        return dropped

    async def handle(self, message: EntryMessage | ContextPane.UndoRequested) -> None:
        """What the user did to an entry of the context pane (its messages bubble up to the app, which hands them here)."""
        if isinstance(message, ContextPane.UndoRequested):
            await self.undo()
            return
        entry = message.entry
        if isinstance(message, ContextPane.Accepted):
            await self.add_files(entry.path)
        elif isinstance(message, ContextPane.ReadOnlyToggled):
            await self.session.toggle_read_only(entry.path)
            self.refresh()
        elif isinstance(message, ContextPane.PreviewRequested):
            self.preview(entry)
        else:  # Dropped: dismiss a suggestion, or drop a picked file; one key did it, so one key undoes it
            if entry.source == "suggested":
                self.session.dismiss(entry.path)
                self.refresh()
            else:
                await self.drop_files(entry.path)
            self._removed.append(entry)
            self.pane.set_undoable(True)
            self.host.notify(f"{'Dismissed' if entry.source == 'suggested' else 'Dropped'} {entry.display} · u undoes")

    async def undo(self) -> None:
        """Put back the entry the pane dropped (or dismissed) last, read-only flag included."""
        if not self._removed:
            return
        entry = self._removed.pop()
        self.pane.set_undoable(bool(self._removed))
        session = self.session
        if entry.source == "suggested":
            session.suggest([*session.context.suggested, entry.path])
        else:
            outcome = await session.plan_add(entry.path)
            if not (outcome.added or outcome.already):
                reason = outcome.refused[0][1] if outcome.refused else "is no longer there"
                self.host.notify(f"{entry.display} was not put back: it {reason}.", severity="warning")
                self.refresh()
                return
            await session.commit_add(outcome)
            if entry.read_only and entry.path in session.context.picked:
                await session.toggle_read_only(entry.path)
        self.refresh()
        self.host.notify(f"Put back {entry.display}")

    def suggest(self, paths: list[str]) -> None:
        """Files the memory system suggests for the current query (not yet picked)."""
        self.session.suggest(paths)
        self.refresh()

    def preview(self, entry: ContextEntry) -> None:
        """Show a context file's text."""
        from tui.screens.text_view import TextViewScreen

        try:
            text = Path(entry.path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.host.notify(f"Cannot read {entry.display}: {exc.strerror}", severity="error")
            return
        self.host.push_screen(TextViewScreen(entry.display, text))

    def show_figure(self, metrics: dict[str, Any]) -> None:
        """Show the context figure the session's metrics give (computed in core: ``core.usage.ContextMeter``) in the pane."""
        self.pane.show_context(metrics)

    def refresh(self) -> None:
        """Redraw the context pane from the session's file context (a stat per file, nothing read)."""
        rows = self.session.entries()
        self.pane.set_entries([ContextEntry(r.path, r.display, r.tokens, "suggested" if r.source == "suggested" else "picked", r.read_only) for r in rows])
        if self.on_change is not None:
            self.on_change()


__all__ = ["FileContext"]
