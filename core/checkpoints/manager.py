"""Checkpoints around every writer: a snapshot before it, the difference after it, a transcript record.

:class:`Checkpoints` belongs to one Application (``application.checkpoints``, also
``handler.checkpoints`` for the tool loop's hook). It follows the open session's transcript:
when the session changes (``/new``, a switch, a resume) it reads that transcript's
``checkpoint`` and ``rewind`` records again.

A writer that says what it writes (``editFile``, aider's automatic edit) is snapshotted by
those paths alone; anything else (commands, interactive aider, MCP tools) by the whole tree.
A call that changed nothing leaves no record. Everything blocking runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from core.checkpoints.log import CheckpointLog
from core.checkpoints.shadow import CheckpointError, ShadowRepo
from core.checkpoints.summary import describe, summarise
from core.checkpoints.watch import ignored_signature
from core.turns import current_turn
from core.types import TaskResult

log = logging.getLogger(__name__)


class Checkpoints:
    """The checkpoints of one project's open session.

    Args:
        project_root: The project.
        session: The ``core.session.Session`` whose transcript records them (None: kept in memory only).
        repo: The shadow repository (default: the project's, in the state directory, its directories watched).
    """

    def __init__(self, project_root: Path, session: Any = None, *, repo: ShadowRepo | None = None) -> None:
        self.root = Path(project_root).resolve()
        self.session = session
        self.repo = repo or ShadowRepo(self.root, watch=True)
        self.log = CheckpointLog()
        self._bound: str | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        """Release the project's watch (the application is closing)."""
        self.repo.close()

    # -- the session's transcript ---------------------------------------------------------
    def sync(self) -> CheckpointLog:
        """The log of the open session (re-read from its transcript when the session changed; blocking)."""
        session_id = getattr(self.session, "id", None)
        if session_id != self._bound:
            self._bound = session_id
            self.log = CheckpointLog()
            stored = getattr(self.session, "stored", None)
            path = getattr(stored, "path", None)
            if path is not None and Path(path).exists():
                from core.sessions import load_session

                try:
                    self.log = CheckpointLog.from_records(load_session(Path(path)).records)
                except Exception:  # noqa: BLE001 - a broken transcript leaves no checkpoints, never a crash
                    log.exception("reading the checkpoints of %s failed", path)
        return self.log

    def history(self) -> list[dict[str, Any]]:
        """The whole conversation (compacted parts included: a turn the model sees only summarised is still a turn)."""
        whole = getattr(self.session, "history", None)
        if isinstance(whole, list):
            return whole
        handler = getattr(self.session, "handler", None)
        return list(getattr(handler, "conversation_history", None) or [])

    def write(self, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Append a record to the log and the transcript (blocking)."""
        record = {"kind": kind, **fields}
        self.log.records.append(record)
        recorder = getattr(self.session, "recorder", None)
        if recorder is not None:
            try:
                recorder.writer.append(kind, **fields)
            except Exception as exc:  # noqa: BLE001 - the writer keeps it pending and says so on the next write
                log.warning("the %s record was not saved yet: %s", kind, exc)
        return record

    # -- around a writer ----------------------------------------------------------------
    def relative(self, paths: Sequence[str] | None) -> list[str] | None:
        """Project-relative forms of ``paths``; None when one is outside the project (snapshot everything)."""
        if paths is None:
            return None
        found = []
        for raw in paths:
            candidate = Path(raw) if os.path.isabs(raw) else self.root / raw
            try:
                parent = candidate.parent.resolve()
                relative = (parent / candidate.name).relative_to(self.root)
            except (OSError, ValueError):
                return None
            if not relative.parts or relative.parts[0] == ".git":
                return None
            found.append(relative.as_posix())
        return found

    def snapshot(self, paths: Sequence[str] | None) -> tuple[str, dict[str, Any]]:
        """A tree id of ``paths`` (or the whole tree) and, for the whole tree, the ignored directories' state."""
        if paths is None:
            return self.repo.snapshot_all(), ignored_signature(self.repo)
        return self.repo.snapshot_paths(paths), {}

    def record(self, tool: str, label: str, before: str, after: str, ignored: Sequence[str] = (), *,
               turn: int | None = None) -> dict[str, Any] | None:
        """Write the checkpoint record of a call that went from ``before`` to ``after``; None when nothing changed."""
        changes, counts = self.repo.diff(before, after)
        if not changes and not ignored:
            return None
        files = summarise(changes, counts, ignored)
        with self._lock:
            log_ = self.sync()
            fields = {
                "seq": log_.next_seq(),
                "turn": current_turn(self.history()) if turn is None else turn,
                "tool": tool,
                "label": label[:200],
                "before": before,
                "after": after,
                "files": files,
            }
            return self.write("checkpoint", fields)

    async def around(self, tool: str, run: Callable[[], Awaitable[TaskResult]], *,
                     writes: Sequence[str] | None = None, label: str = "") -> TaskResult:
        """Run a writer between two snapshots; its result says what it changed (``metadata["files_changed"]``)."""
        paths = self.relative(writes)
        try:
            before, watched = await asyncio.to_thread(self.snapshot, paths)
        except CheckpointError as exc:
            log.warning("no checkpoint before %s: %s", tool, exc)
            result = await run()
            return _with_note(result, f"(No checkpoint was taken, so this cannot be rewound: {exc})")
        try:
            result = await run()
        except asyncio.CancelledError:
            # what the call changed before Esc stopped it is still recorded, so it can be rewound
            try:
                await asyncio.shield(asyncio.to_thread(self._after, tool, label, before, paths, watched))
            except CheckpointError as exc:
                log.warning("no checkpoint after the interrupted %s: %s", tool, exc)
            raise
        try:
            record = await asyncio.to_thread(self._after, tool, label, before, paths, watched)
        except CheckpointError as exc:
            log.warning("no checkpoint after %s: %s", tool, exc)
            return result
        if record is None:
            return result
        return annotate(result, record)

    def _after(self, tool: str, label: str, before: str, paths: list[str] | None, watched: dict[str, Any]) -> dict[str, Any] | None:
        after, now = self.snapshot(paths)
        ignored = [name for name, state in now.items() if watched.get(name) != state] if paths is None else []
        ignored += [name for name in watched if name not in now]
        return self.record(tool, label, before, after, ignored)


def annotate(result: TaskResult, record: dict[str, Any]) -> TaskResult:
    """``result`` with the files its call changed: in the metadata (the trace) and the text (the model)."""
    files = record.get("files") or {}
    text = describe(files)
    metadata = {**(result.get("metadata") or {}), "files_changed": files, "checkpoint": record.get("seq")}
    return {**result, "content": f"{result.get('content', '')}\nFiles: {text}" if text else result.get("content", ""),
            "metadata": metadata}


def _with_note(result: TaskResult, note: str) -> TaskResult:
    return {**result, "content": f"{result.get('content', '')}\n{note}"}
