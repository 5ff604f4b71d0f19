"""Rewinding: the files, the conversation, or both, to before a user turn (issue 26).

:func:`plan` works out, for every path a checkpoint from that point on changed, what it held
before the first of them (the target) and what the last of them left (what the app expects on
disk). A file whose content is neither was changed outside the app since (the user's editor):
it is named and left alone unless ``force``. :func:`apply` writes the targets (each file
atomically, its mode kept), records the rewind as a checkpoint of its own (so it can be undone)
and, for the conversation, cuts the history before the turn and records a ``rewind`` record
(so ``--continue`` resumes the rewound conversation).
"""

from __future__ import annotations

import contextlib
import difflib
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.checkpoints.log import Row
from core.checkpoints.manager import Checkpoints
from core.checkpoints.shadow import SYMLINK, EXECUTABLE, CheckpointError, Entry, disk_entry

log = logging.getLogger(__name__)

MAX_DIFF_LINES = 4000


@dataclass(frozen=True)
class FilePlan:
    """One path of a rewind: what it will hold (None: removed), and what it holds now."""

    path: str
    target: Entry | None
    expected: Entry | None
    current: Entry | None

    @property
    def outside(self) -> bool:
        """Changed outside the app since the app last wrote it."""
        return self.current != self.expected and self.current != self.target

    @property
    def needed(self) -> bool:
        return self.current != self.target


@dataclass
class RewindPlan:
    """What rewinding to before ``row`` would do."""

    row: Row
    files: list[FilePlan] = field(default_factory=list)
    diff: str = ""

    @property
    def changes(self) -> list[FilePlan]:
        """Paths the rewind writes (those changed outside the app excluded)."""
        return [f for f in self.files if f.needed and not f.outside]

    @property
    def outside(self) -> list[FilePlan]:
        return [f for f in self.files if f.needed and f.outside]


@dataclass
class RewindOutcome:
    """What a rewind did."""

    restored: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    conversation: bool = False
    checkpoint: int | None = None
    undo_key: str = ""

    def message(self, row: Row) -> str:
        where = f"before turn {row.turn}" if row.is_turn else f"before {row.label}"
        parts = []
        if self.restored:
            parts.append(f"restored {len(self.restored)} file(s) to {where}: {', '.join(self.restored[:10])}"
                         + (" ..." if len(self.restored) > 10 else ""))
        elif not self.conversation:
            parts.append(f"no file needed restoring to {where}")
        if self.conversation:
            parts.append(f"the conversation now ends {where}")
        if self.kept:
            parts.append(f"left alone (changed outside the app since): {', '.join(self.kept)}; "
                         "use --force (or 'f' in /rewind) to overwrite them")
        if self.undo_key:
            parts.append(f"this rewind is itself a checkpoint: undo it by rewinding to {self.undo_key}")
        text = "; ".join(parts)
        return text[:1].upper() + text[1:] + "."


def find_row(checkpoints: Checkpoints, key: str) -> tuple[Row, list[Row]]:
    """The row the user named (``3`` or ``r1``), and all rows.

    Raises:
        CheckpointError: No such row (the message lists what exists).
    """
    rows = list_rows(checkpoints)
    for row in rows:
        if row.key == key.strip().lower():
            return row, rows
    known = ", ".join(r.key for r in rows) or "none yet"
    raise CheckpointError(f"There is no turn or rewind {key!r} in this session (there are: {known}).")


def list_rows(checkpoints: Checkpoints) -> list[Row]:
    """The rewind list of the open session (blocking)."""
    turns = []
    for message in checkpoints.history():
        number = message.get("turn")
        if message.get("role") == "user" and isinstance(number, int) and not isinstance(number, bool):
            turns.append((number, " ".join(str(message.get("content") or "").split())))
    return checkpoints.sync().rows(turns)


def plan(checkpoints: Checkpoints, row: Row) -> RewindPlan:
    """What rewinding the files to before ``row`` would change (blocking)."""
    repo = checkpoints.repo
    targets: dict[str, Entry | None] = {}
    expected: dict[str, Entry | None] = {}
    for record in checkpoints.sync().checkpoints_from(row.position):
        for change in repo.changes(record["before"], record["after"]):
            targets.setdefault(change.path, change.before)
            expected[change.path] = change.after
    result = RewindPlan(row=row)
    for path in sorted(targets):
        result.files.append(FilePlan(path, targets[path], expected[path], disk_entry(checkpoints.root / path)))
    result.diff = render_diff(checkpoints, result.files)
    return result


def render_diff(checkpoints: Checkpoints, files: list[FilePlan]) -> str:
    """The unified diff from the files now to what the rewind writes (those it leaves alone marked)."""
    needed = [f for f in files if f.needed]
    blobs = checkpoints.repo.read_blobs([f.target.sha for f in needed if f.target is not None])
    lines: list[str] = []
    for item in needed:
        if item.outside:
            lines.append(f"# {item.path}: changed outside the app since; left alone")
            continue
        now = _read(checkpoints.root / item.path) if item.current is not None else b""
        then = blobs.get(item.target.sha, b"") if item.target is not None else b""
        old_name = f"a/{item.path}" if item.current is not None else "/dev/null"
        new_name = f"b/{item.path}" if item.target is not None else "/dev/null"
        if b"\0" in now[:8000] or b"\0" in then[:8000]:
            lines += [f"--- {old_name}", f"+++ {new_name}", "Binary file differs"]
            continue
        old_text = now.decode("utf-8", "replace").splitlines()
        new_text = then.decode("utf-8", "replace").splitlines()
        diff = list(difflib.unified_diff(old_text, new_text, old_name, new_name, lineterm=""))
        lines += diff or [f"--- {old_name}", f"+++ {new_name}", "(mode changes only)"]
        if len(lines) > MAX_DIFF_LINES:
            lines.append(f"... (diff cut at {MAX_DIFF_LINES:,} lines)")
            break
    return "\n".join(lines)


def apply(checkpoints: Checkpoints, rewind_plan: RewindPlan, *, files: bool = True, conversation: bool = True,
          force: bool = False) -> RewindOutcome:
    """Rewind what was asked (blocking).

    Raises:
        CheckpointError: A conversation rewind asked of a row that is not a turn, or a file could not be written.
    """
    row = rewind_plan.row
    outcome = RewindOutcome()
    if conversation and not row.is_turn:
        raise CheckpointError(f"{row.key} is a rewind, not a turn: only its files can be rewound.")
    trees: tuple[str, str] | None = None
    if files:
        chosen = [f for f in rewind_plan.files if f.needed and (force or not f.outside)]
        outcome.kept = [f.path for f in rewind_plan.outside if not force]
        if chosen:
            paths = [f.path for f in chosen]
            before = checkpoints.repo.snapshot_paths(paths)
            try:
                _write_files(checkpoints, chosen)
            finally:
                trees = (before, checkpoints.repo.snapshot_paths(paths))
            outcome.restored = paths
    if conversation and not any(m.get("role") == "user" and m.get("turn") == row.turn for m in checkpoints.history()):
        raise CheckpointError(f"Turn {row.turn} is not in the conversation.")
    checkpoints.write("rewind", {"turn": row.turn, "key": row.key, "files": files, "conversation": conversation,
                                 "kept": outcome.kept})
    if conversation:
        reload_conversation(checkpoints, row.turn)
        outcome.conversation = True
    if trees is not None:
        label = f"rewind to before turn {row.turn}" if row.is_turn else f"undo of {row.label}"
        record = checkpoints.record("rewind", label, *trees, turn=row.turn - 1 if conversation else None)
        if record is not None:
            outcome.checkpoint = record["seq"]
            undo = sum(1 for r in checkpoints.log.records if r["kind"] == "checkpoint" and r.get("tool") == "rewind")
            outcome.undo_key = f"r{undo}"
    return outcome


def reload_conversation(checkpoints: Checkpoints, turn: int) -> None:
    """Make the open conversation end before turn ``turn``, as ``--continue`` would read it back.

    The transcript (its ``rewind`` record just written) is read again and handed to the handler,
    so a compacted conversation gets its view rebuilt; when it cannot be read, the history is cut
    in memory.
    """
    session = checkpoints.session
    handler = getattr(session, "handler", None)
    stored = getattr(session, "stored", None)
    restore = getattr(handler, "restore_conversation", None)
    path = getattr(stored, "path", None)
    if restore is not None and path is not None and Path(path).exists():
        from core.sessions import SessionError, load_session

        try:
            loaded = load_session(Path(path))
        except SessionError as exc:
            log.warning("reading the transcript back after the rewind failed: %s", exc)
        else:
            if any(m.get("role") == "user" and m.get("turn") == turn for m in loaded.messages):
                log.warning("the rewind record is not on disk yet; cutting the conversation in memory")
            else:
                restore(loaded.messages, loaded.usage, loaded.compactions)
                if hasattr(session, "rewound"):
                    session.rewound(list(loaded.incidents))
                return
    _cut_in_memory(handler, session, turn)


def _cut_in_memory(handler: Any, session: Any, turn: int) -> None:
    if handler is None:
        return
    index = handler.rewind_to(turn)  # issue 24: the handler's history cuts itself (and its file copies)
    if index is None:
        raise CheckpointError(f"Turn {turn} is not in the conversation the model sees now (it was compacted); "
                              "rewind it from the shell after quitting: assistant-tui rewind --conversation.")
    if hasattr(session, "rewound"):
        session.rewound(before=index)


def _write_files(checkpoints: Checkpoints, chosen: list[FilePlan]) -> None:
    root = checkpoints.root
    blobs = checkpoints.repo.read_blobs([f.target.sha for f in chosen if f.target is not None])
    for item in sorted(chosen, key=lambda f: f.target is not None):  # removals first: a directory may take a file's place
        path = _inside(root, item.path)
        if item.target is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            _prune_empty(path.parent, root)
    for item in chosen:
        if item.target is None:
            continue
        path = _inside(root, item.path)
        data = blobs[item.target.sha]
        if path.is_dir() and not path.is_symlink():
            raise CheckpointError(f"{item.path} is a directory now; move it away and rewind again.")
        path.parent.mkdir(parents=True, exist_ok=True)
        _inside(root, item.path)  # the directories just made are real ones, inside the project
        _replace(path, data, item.target)


def _replace(path: Path, data: bytes, entry: Entry) -> None:
    """Write ``path`` atomically (a temporary file beside it, then a rename)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".rewind", dir=path.parent)
    try:
        if entry.mode == SYMLINK:
            os.close(fd)
            os.unlink(tmp)
            os.symlink(os.fsdecode(data), tmp)
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            try:
                mode = os.stat(path).st_mode & 0o7777
            except OSError:
                mode = 0o666 & ~_umask()
            mode = (mode | (0o111 & ~_umask())) if entry.mode == EXECUTABLE else (mode & ~0o111)
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _inside(root: Path, relative: str) -> Path:
    """``root / relative``, refusing a path that leaves the project through a link or ``..``."""
    path = root / relative
    parent = path.parent.resolve() if path.parent.exists() else path.parent
    if not (parent == root or parent.is_relative_to(root)) or ".." in Path(relative).parts or ".git" in Path(relative).parts:
        raise CheckpointError(f"{relative} leads outside the project now (a link?); it was not rewound.")
    return path


def _prune_empty(directory: Path, root: Path) -> None:
    while directory != root and directory.is_relative_to(root):
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _read(path: Path) -> bytes:
    try:
        if path.is_symlink():
            return os.fsencode(os.readlink(path))
        return path.read_bytes()
    except OSError:
        return b""
