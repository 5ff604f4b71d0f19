"""Where sessions live and how they are found, listed, titled and forked.

Layout under ``root`` (default ``$XDG_DATA_HOME/assistant-tui/sessions``)::

    <project-slug>-<hash>/          one directory per project
        project.json                the project's resolved path
        index.json                  cache of the session list (safe to delete)
        <id>.jsonl                  transcript, append-only
        <id>.meta.json              title, replaced atomically
        <id>.lock                   held with flock while a writer has it open

Nothing here deletes a transcript.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path

from core import paths
from core.sessions.errors import SessionNotFound, SessionReadError, SessionWriteError, describe_os_error
from core.sessions.fsutil import atomic_write
from core.sessions.index import has_message, read_title, summarize
from core.sessions.records import (
    TRANSCRIPT_SUFFIX,
    encode,
    id_timestamp,
    is_session_id,
    is_session_id_prefix,
    new_session_id,
    project_key,
)
from core.sessions.session import StoredSession, SessionInfo
from core.sessions.writer import SessionWriter
from core.types import now

log = logging.getLogger(__name__)

_HOW_TO_LIST = "Type /sessions in assistant-tui to pick one, or run `assistant-tui --continue` to reopen the latest."


class SessionStore:
    """The sessions of every project, under one root directory.

    Args:
        root: Directory holding the per-project session directories; defaults to
            ``core.paths.data_dir() / "sessions"``.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else paths.data_dir() / "sessions"

    # Finding ---------------------------------------------------------------

    def project_dir(self, project_root: Path) -> Path:
        """The directory holding ``project_root``'s sessions (it may not exist yet)."""
        return self.root / project_key(Path(project_root))

    def create(self, project_root: Path) -> StoredSession:
        """A new, empty session of ``project_root``.

        Nothing is written until its writer records something, so starting the app
        and quitting leaves no empty session behind, and this never fails on a
        read-only or full disk (the writer reports that, keeping records in memory).
        """
        resolved = Path(project_root).expanduser().resolve()
        created = now()
        directory = self.project_dir(resolved)
        while True:
            session_id = new_session_id(created)
            path = directory / f"{session_id}{TRANSCRIPT_SUFFIX}"
            if not path.exists():
                break
        self._remember_project(directory, resolved)
        return StoredSession(id=session_id, path=path, project_root=resolved, created=created)

    def open(self, session_id: str, project_root: Path | None = None) -> StoredSession:
        """The existing session ``session_id`` (a full id, or an unambiguous prefix).

        ``project_root``'s sessions are searched first, then every project's.

        Raises:
            SessionNotFound: No (or more than one) session matches; the message says
                how to see the sessions.
            SessionReadError: The sessions directory cannot be read.
        """
        wanted = session_id.strip()
        if not is_session_id_prefix(wanted):
            raise SessionNotFound(self._not_found(wanted, project_root))
        directories = [self.project_dir(project_root)] if project_root is not None else []
        for directory in [*directories, None]:
            matches = self._match(wanted, directory)
            if len(matches) == 1:
                return self._session_from_path(matches[0])
            if len(matches) > 1:
                ids = ", ".join(sorted(p.name[: -len(TRANSCRIPT_SUFFIX)] for p in matches)[:5])
                raise SessionNotFound(f"Several sessions start with '{wanted}' ({ids}); give more of the id. {_HOW_TO_LIST}")
        raise SessionNotFound(self._not_found(wanted, project_root))

    def latest(self, project_root: Path) -> StoredSession | None:
        """The session of ``project_root`` with a message written most recently, or None if it has none.

        Raises:
            SessionReadError: The project's sessions directory cannot be read.
        """
        directory = self.project_dir(project_root)
        found: list[tuple[int, str]] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if not entry.name.endswith(TRANSCRIPT_SUFFIX):
                        continue
                    with contextlib.suppress(OSError):
                        found.append((entry.stat().st_mtime_ns, entry.name))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SessionReadError(describe_os_error(exc, directory, "read the sessions in")) from exc
        for _, name in sorted(found, reverse=True):
            if has_message(directory / name):  # one written by an older version may have none
                return self._session_from_path(directory / name)
        return None

    def list(self, project_root: Path) -> list[SessionInfo]:
        """``project_root``'s sessions that hold a message, most recently written first.

        Raises:
            SessionReadError: The project's sessions directory cannot be read.
        """
        directory = self.project_dir(project_root)
        try:
            summaries = summarize(directory)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SessionReadError(describe_os_error(exc, directory, "read the sessions in")) from exc
        fallback_root = Path(project_root).expanduser().resolve()
        infos = [
            SessionInfo(
                id=session_id,
                path=directory / f"{session_id}{TRANSCRIPT_SUFFIX}",
                project_root=Path(s["project_root"]) if s["project_root"] else fallback_root,
                created=s["created"],
                updated=s["updated"],
                first_prompt=s["first_prompt"],
                turn_count=s["turns"],
                title=s["title"],
                size=s["size"],
            )
            for session_id, s in summaries.items()
            if s["turns"] or s["first_prompt"]  # a session with no message is not listed
        ]
        infos.sort(key=lambda info: (info.updated, info.id), reverse=True)
        return infos

    # Changing --------------------------------------------------------------

    def writer(self, session: StoredSession, *, provider: str = "", model: str = "") -> SessionWriter:
        """A writer appending to ``session`` (see ``SessionWriter``).

        Raises:
            SessionLocked: Another assistant-tui has the session open; offer ``fork``.
        """
        return SessionWriter(session, provider=provider, model=model)

    def title(self, session: StoredSession) -> str | None:
        """The session's title, or None when it has none."""
        return read_title(session.sidecar_path)

    def set_title(self, session: StoredSession, title: str) -> None:
        """Name the session; the sidecar is replaced atomically, the transcript untouched.

        Raises:
            SessionWriteError: The sidecar could not be written.
        """
        payload = {"title": title.strip(), "updated": now()}
        try:
            paths.private_dir(session.sidecar_path.parent)
            atomic_write(session.sidecar_path, json.dumps(payload, ensure_ascii=False).encode("utf-8"))
        except OSError as exc:
            raise SessionWriteError(
                describe_os_error(exc, session.sidecar_path, "save the title in"), path=session.sidecar_path, errno=exc.errno
            ) from exc

    def fork(self, session: StoredSession, project_root: Path | None = None) -> StoredSession:
        """A new session holding a copy of ``session``'s transcript, to continue separately.

        The copy gets its own ``meta`` line (with ``forked_from``); a partial last
        line of the source is left out. The source is only read, so it can be
        forked while another instance holds it open.

        Raises:
            SessionReadError: The source cannot be read.
            SessionWriteError: The copy cannot be written.
        """
        try:
            data = session.path.read_bytes()
        except FileNotFoundError:
            data = b""
        except OSError as exc:
            raise SessionReadError(describe_os_error(exc, session.path, "read the session")) from exc
        data = data[: data.rfind(b"\n") + 1]
        first, _, rest = data.partition(b"\n")
        meta: dict = {}
        with contextlib.suppress(ValueError):
            parsed = json.loads(first) if first else {}
            meta = parsed if isinstance(parsed, dict) and parsed.get("kind") == "meta" else {}
        if not meta:
            rest = data  # no meta line: keep every line
        new = self.create(project_root or session.project_root)
        header = {
            "kind": "meta",
            "ts": new.created,
            **{k: v for k, v in meta.items() if k not in ("kind", "ts")},
            "version": meta.get("version", 1),
            "id": new.id,
            "project_root": str(new.project_root),
            "created": new.created,
            "forked_from": session.id,
        }
        try:
            paths.private_dir(new.path.parent)
            atomic_write(new.path, encode(header) + rest)
        except OSError as exc:
            raise SessionWriteError(describe_os_error(exc, new.path, "write the forked session"), path=new.path, errno=exc.errno) from exc
        title = self.title(session)
        if title:
            with contextlib.suppress(SessionWriteError):
                self.set_title(new, f"{title} (fork)")
        return new

    # Internals -------------------------------------------------------------

    def _remember_project(self, directory: Path, project_root: Path) -> None:
        marker = directory / "project.json"
        if marker.exists():
            return
        with contextlib.suppress(OSError):
            paths.private_dir(directory)
            atomic_write(marker, json.dumps({"project_root": str(project_root)}).encode("utf-8"))

    def _match(self, wanted: str, directory: Path | None) -> list[Path]:
        if is_session_id(wanted):
            pattern = f"{wanted}{TRANSCRIPT_SUFFIX}"
        else:
            pattern = f"{wanted}*{TRANSCRIPT_SUFFIX}"
        try:
            if directory is not None:
                return sorted(directory.glob(pattern))
            return sorted(self.root.glob(f"*/{pattern}"))
        except OSError as exc:
            raise SessionReadError(describe_os_error(exc, directory or self.root, "read the sessions in")) from exc

    def _session_from_path(self, path: Path) -> StoredSession:
        session_id = path.name[: -len(TRANSCRIPT_SUFFIX)]
        meta = _read_meta(path)
        root = meta.get("project_root") or _project_of(path.parent)
        created = meta.get("created")
        return StoredSession(
            id=session_id,
            path=path,
            project_root=Path(root) if root else Path.cwd(),
            created=float(created) if isinstance(created, (int, float)) else id_timestamp(session_id),
        )

    def _not_found(self, wanted: str, project_root: Path | None) -> str:
        message = f"No session '{wanted}' was found."
        if project_root is not None:
            # best effort: name a few ids the user may have meant
            with contextlib.suppress(SessionReadError):
                recent = [info.id for info in self.list(project_root)[:5]]
                if recent:
                    message += " Recent sessions of this project: " + ", ".join(recent) + "."
        return f"{message} {_HOW_TO_LIST}"


def _read_meta(path: Path) -> dict:
    """The transcript's ``meta`` line, or ``{}``."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 16)
        meta = json.loads(first)
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) and meta.get("kind") == "meta" else {}


def _project_of(directory: Path) -> str:
    try:
        data = json.loads((directory / "project.json").read_bytes())
    except (OSError, ValueError):
        return ""
    return str(data.get("project_root", "")) if isinstance(data, dict) else ""
