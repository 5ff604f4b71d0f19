"""Value types naming a session and summarising it for a picker."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.sessions.records import LOCK_SUFFIX, SIDECAR_SUFFIX


@dataclass(frozen=True, kw_only=True)
class StoredSession:
    """A saved session: its id, transcript and project (the open conversation is ``core.session.Session``).

    Attributes:
        id: Sortable id, creation time (UTC) then a random suffix.
        path: The JSONL transcript (it may not exist until the first record is written).
        project_root: The resolved project directory the session belongs to.
        created: Creation time, a Unix timestamp.
    """

    id: str
    path: Path
    project_root: Path
    created: float

    @property
    def sidecar_path(self) -> Path:
        """The ``<id>.meta.json`` file holding the title (rewritten atomically)."""
        return self.path.with_name(self.id + SIDECAR_SUFFIX)

    @property
    def lock_path(self) -> Path:
        """The ``<id>.lock`` file an open writer holds an exclusive ``flock`` on."""
        return self.path.with_name(self.id + LOCK_SUFFIX)


@dataclass(frozen=True, kw_only=True)
class SessionInfo:
    """What the session picker shows about a session.

    Attributes:
        id: The session id.
        path: The JSONL transcript.
        project_root: The project the session belongs to.
        created: Creation time (Unix timestamp).
        updated: Time of the last write to the transcript (its mtime).
        first_prompt: The first user prompt on one line, cut to 200 characters ("" if none yet).
        turn_count: Number of user prompts in the session.
        title: The title set by the user, or None.
        size: Transcript size in bytes.
    """

    id: str
    path: Path
    project_root: Path
    created: float
    updated: float
    first_prompt: str
    turn_count: int
    title: str | None
    size: int

    @property
    def label(self) -> str:
        """The title if set, else the first prompt, else ``(no prompt yet)``."""
        return self.title or self.first_prompt or "(no prompt yet)"
