"""The TUI's file context, in one place: which files are picked, read-only and suggested, and every operation on them.

The pure functions (``plan_add``, ``match_current`` …) decide; :class:`FileContext` is the one
controller behind ``@``, the picker, ``/add``, ``/drop``, the context pane and the suggestions
of a turn. It writes to the pane and the chat it was given, nothing else.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.memory.policy import FilePolicy, file_tokens
from tui.format import format_tokens
from tui.widgets.chat import NoteMessage
from tui.widgets.context import ContextEntry, ContextPane, EntryMessage

if TYPE_CHECKING:
    from textual.app import App

    from tui.engine import Engine
    from tui.widgets.chat import ChatView

log = logging.getLogger(__name__)

__all__ = ["AddOutcome", "FileContext", "display_path", "file_tokens", "match_current", "plan_add"]


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except ValueError:
        return False
    return True


@dataclass
class AddOutcome:
    """What ``/add`` did: files added, and files refused with the reason."""

    added: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)
    already: list[Path] = field(default_factory=list)
    tokens: int = 0
    """Token estimate of the files to add."""
    confirming: bool = False
    """The files go past the budget: the user is being asked before they are added."""
    glob: bool = False
    """The pattern was a glob or a directory (files git ignores are left out of those)."""


def plan_add(pattern: str, root: Path, current: list[str], policy: FilePolicy | None = None) -> AddOutcome:
    """Which files of ``pattern`` may be added to ``current`` (blocking: run in a thread).

    Args:
        pattern: A path, a directory or a glob, relative to ``root`` or absolute.
        root: The project root.
        current: Absolute paths already in the context.
        policy: The project's file policy (the engine's, sharing its index); a private one when None.
    """
    policy = policy or FilePolicy(root)
    expansion = policy.expand(pattern)
    outcome = AddOutcome(glob=expansion.glob)
    present = set(current)
    for path in expansion.files:
        if str(path) in present:
            outcome.already.append(path)
        elif refusal := policy.check(path, chosen=True):
            outcome.refused.append((path, refusal.reason))
        else:
            outcome.added.append(path)
            outcome.tokens += policy.tokens(path)
    return outcome


def match_current(pattern: str, root: Path, current: list[str]) -> list[str]:
    """Entries of ``current`` matched by a path or glob (for ``/drop``)."""
    root = root.resolve()
    matched: list[str] = []
    for entry in current:
        path = Path(entry)
        relative = str(path.relative_to(root)) if _inside(path, root) else entry
        if pattern in {entry, relative} or fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(entry, pattern) or relative.startswith(pattern.rstrip("/") + "/"):
            matched.append(entry)
    return matched


def display_path(path: str, root: Path) -> str:
    """A path relative to the project when inside it."""
    try:
        return str(Path(path).relative_to(root.resolve()))
    except ValueError:
        return path


class FileContext:
    """The files the next request carries: picked (some read-only) and suggested.

    Args:
        engine: the engine link (project root, the handler's list of picked files, the session recorder).
        pane: the context pane it redraws.
        chat: where it reports refused and missing files.
        host: the running app, for the over-budget question and notifications.
    """

    def __init__(self, engine: "Engine", pane: ContextPane, chat: "ChatView", host: "App[Any]") -> None:
        self.engine = engine
        self.pane = pane
        self.chat = chat
        self.host = host
        self.read_only: set[str] = set()
        self.suggested: list[str] = []
        self._local_pinned: list[str] = []
        self.recorded: list[dict[str, Any]] | None = None
        """The context as last written to the session (None: not yet in this transcript)."""

    @property
    def root(self) -> Path:
        return self.engine.project_root

    @property
    def pinned(self) -> list[str]:
        """Absolute paths the user picked into the context (the handler's list when there is one)."""
        handler = self.engine.handler
        if handler is not None and isinstance(getattr(handler, "pinned_files", None), list):
            return handler.pinned_files
        return self._local_pinned

    def sync_read_only(self) -> None:
        """Tell the handler which picked files are read-only (aider receives them as such)."""
        handler = self.engine.handler
        if handler is not None and hasattr(handler, "read_only_files"):
            handler.read_only_files = sorted(self.read_only)

    async def add_files(self, pattern: str) -> AddOutcome:
        """Add files matching a path or glob; refused ones are reported with their reason.

        When the files would take the context past its budget, the user is asked first.
        """
        root = self.root
        outcome = await asyncio.to_thread(plan_add, pattern, root, list(self.pinned))
        for path, reason in outcome.refused:
            await self.chat.add(NoteMessage(f"{display_path(str(path), root)} was not added: it {reason}.", kind="warning", title="Not added"))
        if not (outcome.added or outcome.refused or outcome.already):
            await self.chat.add(NoteMessage(f"No file matches {pattern!r} in {root}.", kind="warning"))
        budget = self.pane.budget
        after = self.pane.picked_tokens + outcome.tokens
        if outcome.added and budget and after > budget:
            from tui.screens.confirm import ConfirmScreen

            files = len(outcome.added)
            question = (
                f"Adding {files} file{'s' if files != 1 else ''} ({format_tokens(outcome.tokens)} tokens) puts the context at "
                f"{format_tokens(after)} of its {format_tokens(budget)}-token budget ({after * 100 // budget}%). "
                "Requests over the budget are not sent. Add anyway?"
            )

            async def answered(yes: bool | None) -> None:
                if yes:
                    self._commit(outcome)

            outcome.confirming = True
            self.host.push_screen(ConfirmScreen("Over the context budget", question, yes="Add anyway"), answered)
            return outcome
        self._commit(outcome)
        return outcome

    def _commit(self, outcome: AddOutcome) -> None:
        self.pinned.extend(str(path) for path in outcome.added if str(path) not in self.pinned)
        self.suggested = [path for path in self.suggested if path not in self.pinned]
        self.refresh()

    def drop_files(self, pattern: str) -> list[str]:
        """Drop context entries matching a path or glob; returns what was dropped."""
        dropped = match_current(pattern, self.root, list(self.pinned))
        for path in dropped:
            self.pinned.remove(path)
            self.read_only.discard(path)
        self.refresh()
        return dropped

    async def handle(self, message: EntryMessage) -> None:
        """What the user did to an entry of the context pane (its messages bubble up to the app, which hands them here)."""
        entry = message.entry
        if isinstance(message, ContextPane.Accepted):
            await self.add_files(entry.path)
        elif isinstance(message, ContextPane.ReadOnlyToggled):
            self.read_only ^= {entry.path}
            self.refresh()
        elif isinstance(message, ContextPane.PreviewRequested):
            self.preview(entry)
        elif entry.source == "suggested":  # Dropped: dismiss a suggestion, or drop a picked file
            self.suggested.remove(entry.path)
            self.refresh()
        else:
            self.drop_files(entry.path)

    def suggest(self, paths: list[str]) -> None:
        """Files the memory system suggests for the current query (not yet picked)."""
        root = self.root
        resolved = [str((root / path).resolve()) if not Path(path).is_absolute() else path for path in paths]
        self.suggested = [path for path in resolved if path not in self.pinned]
        self.refresh()

    def clear(self, *, keep_files: bool = True) -> None:
        """Forget the suggestions (and, unless ``keep_files``, the picked files)."""
        self.suggested = []
        if not keep_files:
            self.pinned.clear()
            self.read_only.clear()

    def restore(self, context: dict[str, Any] | None) -> None:
        """Take the read-only flags of a resumed session's recorded context (the handler restored the files)."""
        files = (context or {}).get("files") or []
        self.read_only = {f["path"] for f in files if f.get("read_only") and f.get("path") in self.pinned}

    def preview(self, entry: ContextEntry) -> None:
        """Show a context file's text."""
        from tui.screens.text_view import TextViewScreen

        try:
            text = Path(entry.path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.host.notify(f"Cannot read {entry.display}: {exc.strerror}", severity="error")
            return
        self.host.push_screen(TextViewScreen(entry.display, text))

    def refresh(self) -> None:
        """Redraw the context pane from the picked and suggested files, and record it in the session."""
        root = self.root
        entries = [ContextEntry(path, display_path(path, root), file_tokens(Path(path)), "picked", path in self.read_only) for path in self.pinned]
        entries += [ContextEntry(path, display_path(path, root), file_tokens(Path(path)), "suggested") for path in self.suggested]
        self.pane.set_entries(entries)
        self.record()

    def forget_recorded(self) -> None:
        """A new transcript was opened: the next :meth:`record` writes the context even if it did not change."""
        self.recorded = None

    def record(self) -> None:
        """Write the picked files to the session's transcript when they changed."""
        application = self.engine.application
        recorder = getattr(application, "record_context", None)
        if recorder is None or getattr(application, "session", None) is None:
            return
        files = [{"path": path, "read_only": path in self.read_only} for path in self.pinned]
        if files == self.recorded:
            return
        self.recorded = files
        try:
            for warning in recorder(files) or []:
                self.host.notify(warning.message, severity="warning")
        except Exception:  # recording the pane is best effort; the writer reports its own failures
            log.exception("could not record the context")
