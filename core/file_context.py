"""The file context of a conversation: picked, read-only and suggested files (no UI here).

One :class:`FileContext` per conversation, held by the handler (which reads it
for each turn's files and for aider's read-only list) and commanded only through
:class:`core.session.Session`, which records each change in the transcript.
The functions below are the rules behind ``/add``, ``/drop`` and the pane
(moved from ``tui/context_ops.py``, so every consumer applies the same ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from core.globs import select

if TYPE_CHECKING:  # imported where used: the policy pulls in the index, git and pathspec, not needed for the first frame
    from core.memory.policy import FilePolicy


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
    context_after: int = 0
    """The context's token figure once these files are added (0 when nothing measures it)."""
    budget: int = 0
    """The context window those tokens are weighed against (0 when unknown)."""

    @property
    def over_budget(self) -> bool:
        """Adding the files would take the context past its window: the user is asked first."""
        return bool(self.added and self.budget and self.context_after > self.budget)


def plan_add(pattern: str, root: Path, current: list[str], policy: FilePolicy | None = None) -> AddOutcome:
    """Which files of ``pattern`` may be added to ``current`` (blocking: run in a thread).

    Args:
        pattern: A path, a directory or a glob, relative to ``root`` or absolute.
        root: The project root.
        current: Absolute paths already in the context.
        policy: The project's file policy (the engine's, sharing its index); a private one when None.
    """
    if policy is None:
        from core.memory.policy import FilePolicy

        policy = FilePolicy(root)
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
    """Entries of ``current`` a path, directory or glob names (for ``/drop``): the rule ``/add`` uses (:mod:`core.globs`)."""
    return select(pattern, root.resolve(), current)


def display_path(path: str, root: Path) -> str:
    """A path relative to the project when inside it."""
    try:
        return str(Path(path).relative_to(root.resolve()))
    except ValueError:
        return path


@dataclass(frozen=True, kw_only=True)
class ContextFile:
    """One row of the context pane: a picked or suggested file and its token figure."""

    path: str
    """Absolute path."""
    display: str
    """Path as shown (relative to the project when inside it)."""
    tokens: int
    source: str = "picked"
    """``picked`` or ``suggested``."""
    read_only: bool = False


class FileContext:
    """Picked, read-only and suggested files of one conversation.

    Args:
        project_root: The project the paths belong to.
    """

    def __init__(self, project_root: Path, policy: FilePolicy | None = None) -> None:
        self.project_root = Path(project_root).resolve()
        self._policy = policy
        self._picked: list[str] = []
        self._read_only: set[str] = set()
        self._suggested: list[str] = []

    @property
    def policy(self) -> FilePolicy:
        """The project's one file policy (size, binary, secrets, ignore rules): what may be picked.

        Built on first use: the TUI opens a file context before its first frame, and the policy's ignore rules are not needed then.
        """
        if self._policy is None:
            from core.memory.policy import FilePolicy

            self._policy = FilePolicy(self.project_root)
        return self._policy

    # -- reading -------------------------------------------------------------
    @property
    def picked(self) -> list[str]:
        """Absolute paths the user picked, in order (a copy)."""
        return list(self._picked)

    @property
    def read_only(self) -> list[str]:
        """Picked files aider may read but not edit, sorted (a copy)."""
        return sorted(self._read_only)

    @property
    def suggested(self) -> list[str]:
        """Files the memory system suggested for the last query and the user has not picked (a copy)."""
        return list(self._suggested)

    def snapshot(self) -> list[dict[str, Any]]:
        """What the transcript records: each picked file and its read-only flag."""
        return [{"path": path, "read_only": path in self._read_only} for path in self._picked]

    def entries(self) -> list[ContextFile]:
        """What the pane shows, picked files first (one stat per file)."""
        rows = [ContextFile(path=p, display=self.display(p), tokens=self.tokens(p), read_only=p in self._read_only) for p in self._picked]
        rows += [ContextFile(path=p, display=self.display(p), tokens=self.tokens(p), source="suggested") for p in self._suggested]
        return rows

    def tokens(self, path: str) -> int:
        """The token figure of one file, from its size (a stat: nothing is read)."""
        return self.policy.tokens(path)

    def display(self, path: str) -> str:
        return display_path(path, self.project_root)

    # -- changing (through core.session.Session) --------------------------------
    def plan_add(self, pattern: str) -> AddOutcome:
        """Which files of ``pattern`` may be added (blocking: run in a thread)."""
        return plan_add(pattern, self.project_root, self._picked, self.policy)

    def commit(self, outcome: AddOutcome) -> list[str]:
        """Pick the files ``outcome`` allows; returns the paths newly picked."""
        added = [str(path) for path in outcome.added if str(path) not in self._picked]
        self._picked.extend(added)
        self._suggested = [path for path in self._suggested if path not in self._picked]
        return added

    def drop(self, pattern: str) -> list[str]:
        """Unpick the files matching a path or glob; returns what was dropped."""
        dropped = match_current(pattern, self.project_root, self._picked)
        for path in dropped:
            self._picked.remove(path)
            self._read_only.discard(path)
        return dropped

    def toggle_read_only(self, path: str) -> bool:
        """Flip a picked file's read-only flag; returns the new flag (False for a file not picked)."""
        if path not in self._picked:
            return False
        self._read_only ^= {path}
        return path in self._read_only

    def suggest(self, paths: Iterable[str]) -> None:
        """Replace the suggestions (relative paths are taken from the project root)."""
        resolved = [p if Path(p).is_absolute() else str((self.project_root / p).resolve()) for p in paths]
        self._suggested = [p for p in dict.fromkeys(resolved) if p not in self._picked]

    def dismiss(self, path: str) -> bool:
        """Remove one suggestion; False when it was not suggested."""
        if path not in self._suggested:
            return False
        self._suggested.remove(path)
        return True

    def replace(self, picked: Iterable[str], read_only: Iterable[str] = ()) -> None:
        """Set the picked files (and which of them are read-only) at once."""
        self._picked = list(dict.fromkeys(str(p) for p in picked))
        self._read_only = {str(p) for p in read_only} & set(self._picked)
        self._suggested = [p for p in self._suggested if p not in self._picked]

    def restore(self, files: Iterable[Mapping[str, Any]]) -> None:
        """Restore a recorded context whole (files that no longer exist are left out)."""
        kept = [f for f in files if isinstance(f, Mapping) and Path(str(f.get("path", ""))).exists()]
        self.replace([f["path"] for f in kept], [f["path"] for f in kept if f.get("read_only")])
        self._suggested = []

    def clear(self, *, keep_picked: bool = True) -> None:
        """Forget the suggestions, and the picked files too unless ``keep_picked``."""
        self._suggested = []
        if not keep_picked:
            self._picked = []
            self._read_only = set()
