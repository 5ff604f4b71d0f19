"""File-context operations behind ``/add``, ``/drop`` and the context pane (no widgets here)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from core.memory.policy import FilePolicy, file_tokens

__all__ = ["AddOutcome", "display_path", "file_tokens", "match_current", "plan_add"]


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
