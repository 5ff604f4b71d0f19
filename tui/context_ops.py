"""File-context operations behind ``/add``, ``/drop`` and the context pane (no widgets here)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from core.handlers.budget import estimate_text_tokens
from core.tools.secrets import is_secret_path, looks_like_private_key

MAX_FILE_BYTES = 512_000
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache"}


def exclusion_reason(path: Path) -> str | None:
    """Why a file may not go into the context, or None when it may."""
    if secret := is_secret_path(path):
        return f"is never sent to the model: {secret}"
    try:
        size = path.stat().st_size
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if size > MAX_FILE_BYTES:
        return f"is too large ({size // 1024} KiB; the cap is {MAX_FILE_BYTES // 1024} KiB)"
    try:
        with path.open("rb") as fh:
            head = fh.read(8192)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if looks_like_private_key(head):
        return "is never sent to the model: it contains a private key"
    if b"\0" in head:
        return "is a binary file"
    return None


def file_tokens(path: Path) -> int:
    """Token estimate of a file's text (0 when unreadable)."""
    try:
        return estimate_text_tokens(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return 0


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except ValueError:
        return False
    return True


def expand(pattern: str, root: Path) -> list[Path]:
    """Files matching a path or glob, relative to ``root`` (or absolute), never outside it."""
    root = root.resolve()
    candidate = Path(pattern).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    if candidate.is_file():
        return [candidate.resolve()] if _inside(candidate, root) else []
    if candidate.is_dir():
        pattern = str(candidate.relative_to(root) / "**" / "*") if _inside(candidate, root) else ""
        if not pattern:
            return []
    elif Path(pattern).is_absolute():
        if not _inside(Path(pattern).parent, root):
            return []
        pattern = str(Path(pattern).relative_to(root))
    found: list[Path] = []
    for path in sorted(root.glob(pattern)):
        if path.is_file() and not (set(path.relative_to(root).parts[:-1]) & _SKIP_DIRS):
            found.append(path.resolve())
    return found


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


def plan_add(pattern: str, root: Path, current: list[str]) -> AddOutcome:
    """Which files of ``pattern`` may be added to ``current`` (blocking: run in a thread)."""
    outcome = AddOutcome()
    present = set(current)
    for path in expand(pattern, root):
        if str(path) in present:
            outcome.already.append(path)
        elif reason := exclusion_reason(path):
            outcome.refused.append((path, reason))
        else:
            outcome.added.append(path)
            outcome.tokens += file_tokens(path)
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
