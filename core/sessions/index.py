"""Summaries of a project's sessions for the picker, kept fast by a small cache.

Each transcript is scanned once; ``index.json`` in the project directory keeps
what was learnt (created, first prompt, turn count, how far it was read) keyed
by the transcript's inode, size and mtime, so later listings only ``stat``
unchanged files and read just the bytes appended since. The cache is rewritten
atomically and is only a cache: losing or corrupting it costs one full rescan.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from core.sessions.fsutil import atomic_write
from core.sessions.records import NOTE_SUFFIX, RETRACTED_SUFFIX, SIDECAR_SUFFIX, TRANSCRIPT_SUFFIX, USER_PREFIX, id_timestamp, one_line

log = logging.getLogger(__name__)

INDEX_NAME = "index.json"
_INDEX_VERSION = 1
_BLOCK = 1 << 20


def summarize(directory: Path) -> dict[str, dict[str, Any]]:
    """Summaries of every transcript in ``directory``, keyed by session id.

    Each summary has ``created``, ``updated`` (mtime), ``size``, ``first_prompt``,
    ``turns``, ``title`` and ``project_root`` (from the meta line, may be "").

    Raises:
        OSError: The directory cannot be listed.
    """
    index_path = directory / INDEX_NAME
    cache = _load(index_path)
    transcripts: dict[str, os.stat_result] = {}
    sidecars: dict[str, int] = {}
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            try:
                if name.endswith(TRANSCRIPT_SUFFIX):
                    transcripts[name[: -len(TRANSCRIPT_SUFFIX)]] = entry.stat()
                elif name.endswith(SIDECAR_SUFFIX):
                    sidecars[name[: -len(SIDECAR_SUFFIX)]] = entry.stat().st_mtime_ns
            except OSError:  # vanished or unreadable: leave it out
                continue
    changed = set(cache) != set(transcripts)
    result: dict[str, dict[str, Any]] = {}
    for session_id, st in transcripts.items():
        entry = cache.get(session_id)
        fresh = entry is None or entry.get("ino") != st.st_ino or st.st_size < entry.get("scanned", 0)
        if fresh:
            entry = {"ino": st.st_ino, "scanned": 0, "turns": 0, "first_prompt": "", "created": id_timestamp(session_id), "project_root": "", "title": None, "sidecar_mtime_ns": 0}
        assert entry is not None
        if fresh or entry.get("size") != st.st_size or entry.get("mtime_ns") != st.st_mtime_ns:
            try:
                _scan(directory / f"{session_id}{TRANSCRIPT_SUFFIX}", entry)
            except OSError as exc:
                log.warning("cannot read session %s: %s", session_id, exc)
                continue
            entry["size"], entry["mtime_ns"] = st.st_size, st.st_mtime_ns
            changed = True
        sidecar_mtime = sidecars.get(session_id, 0)
        if entry.get("sidecar_mtime_ns") != sidecar_mtime:
            entry["title"] = read_title(directory / f"{session_id}{SIDECAR_SUFFIX}") if sidecar_mtime else None
            entry["sidecar_mtime_ns"] = sidecar_mtime
            changed = True
        cache[session_id] = entry
        result[session_id] = {**entry, "updated": st.st_mtime_ns / 1e9}
    if changed:
        payload = {"version": _INDEX_VERSION, "sessions": {k: v for k, v in cache.items() if k in transcripts}}
        try:
            atomic_write(index_path, json.dumps(payload, ensure_ascii=False).encode("utf-8"), durable=False)
        except OSError as exc:  # a read-only directory still lists, only slower
            log.debug("session index not saved in %s: %s", directory, exc)
    return result


def read_title(sidecar: Path) -> str | None:
    """The title stored in a ``<id>.meta.json`` sidecar, or None."""
    try:
        data = json.loads(sidecar.read_bytes())
    except (OSError, ValueError):
        return None
    title = data.get("title") if isinstance(data, dict) else None
    return title if isinstance(title, str) and title else None


def has_message(transcript: Path, limit: int = _BLOCK) -> bool:
    """True when the transcript's first ``limit`` bytes hold a user record (a prompt or command output).

    Every session written now starts with its first message after the meta line;
    only pane records (at most a few) can come before it in older transcripts.
    """
    try:
        with open(transcript, "rb") as handle:
            head = b"\n" + handle.read(limit)
    except OSError:
        return False
    return (b"\n" + USER_PREFIX) in head


def _load(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.debug("ignoring unreadable session index %s: %s", path, exc)
        return {}
    if not isinstance(data, dict) or data.get("version") != _INDEX_VERSION or not isinstance(data.get("sessions"), dict):
        return {}
    return {k: v for k, v in data["sessions"].items() if isinstance(v, dict)}


def _scan(path: Path, entry: dict[str, Any]) -> None:
    """Read the complete lines after ``entry["scanned"]`` and update the summary in place."""
    with open(path, "rb") as handle:
        handle.seek(entry["scanned"])
        offset = entry["scanned"]
        carry = b""
        while block := handle.read(_BLOCK):
            chunk = carry + block
            end = chunk.rfind(b"\n") + 1
            if end == 0:
                carry = chunk
                continue
            complete, carry = chunk[:end], chunk[end:]
            if offset == 0:
                _read_meta(complete[: complete.find(b"\n")], entry)
            lines = b"\n" + complete
            # A question taken back after a failure with no answer is not a turn (it is sent again),
            # nor is a note (/run output, a /task result): the numbering of core.turns.
            entry["turns"] += lines.count(b"\n" + USER_PREFIX) - lines.count(RETRACTED_SUFFIX) - lines.count(NOTE_SUFFIX)
            if not entry["first_prompt"]:
                at = lines.find(b"\n" + USER_PREFIX)
                if at >= 0:
                    line = lines[at + 1 : lines.find(b"\n", at + 1)]
                    with contextlib.suppress(ValueError, AttributeError, TypeError):
                        entry["first_prompt"] = one_line(str(json.loads(line).get("content", "")))
            offset += end
        entry["scanned"] = offset


def _read_meta(line: bytes, entry: dict[str, Any]) -> None:
    try:
        meta = json.loads(line)
    except ValueError:
        return
    if isinstance(meta, dict) and meta.get("kind") == "meta":
        if isinstance(meta.get("created"), (int, float)):
            entry["created"] = float(meta["created"])
        entry["project_root"] = str(meta.get("project_root") or "")
