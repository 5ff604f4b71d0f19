"""git objects written directly, for the snapshots of named paths: no git process, so milliseconds.

A writer that names its files (``editFile``, aider's automatic edit) is snapshotted by hashing
those files, writing each as a loose blob (``zlib`` of ``blob <size>\\0<bytes>``, git's own
format) and a tree holding them alone. git reads these like any object it wrote itself.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import stat
import tempfile
import zlib
from pathlib import Path
from dataclasses import dataclass
from typing import Mapping

REGULAR, EXECUTABLE, SYMLINK, GITLINK, TREE = "100644", "100755", "120000", "160000", "40000"


@dataclass(frozen=True)
class Entry:
    """One file as git stores it: its mode and blob id."""

    mode: str
    sha: str


@dataclass(frozen=True)
class Change:
    """One path that differs between two trees (``None``: absent on that side)."""

    path: str
    before: Entry | None
    after: Entry | None

    @property
    def kind(self) -> str:
        """``created``, ``deleted`` or ``changed``."""
        if self.before is None:
            return "created"
        if self.after is None:
            return "deleted"
        return "changed"


def read_disk(path: Path) -> tuple[Entry, bytes] | None:
    """What ``path`` holds (mode, blob id) and its bytes; None when missing or not a file or link."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            data, mode = os.fsencode(os.readlink(path)), SYMLINK
        elif stat.S_ISREG(info.st_mode):
            data, mode = path.read_bytes(), EXECUTABLE if info.st_mode & stat.S_IXUSR else REGULAR
        else:
            return None
    except OSError:
        return None
    return Entry(mode, object_id("blob", data)), data


def object_id(kind: str, data: bytes) -> str:
    """git's id of an object of ``kind`` holding ``data``."""
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data, usedforsecurity=False).hexdigest()


def write_object(git_dir: Path, kind: str, data: bytes) -> str:
    """Store ``data`` as a loose object (unless present); returns its id."""
    sha = object_id(kind, data)
    target = git_dir / "objects" / sha[:2] / sha[2:]
    if target.exists():
        return sha
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(zlib.compress(f"{kind} {len(data)}\0".encode() + data, 1))
        os.chmod(tmp, 0o444)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return sha


def write_tree(git_dir: Path, entries: Mapping[str, Entry]) -> str:
    """A tree (and its subtrees) holding ``entries`` (project-relative POSIX paths); returns its id."""
    files: dict[str, Entry] = {}
    folders: dict[str, dict[str, Entry]] = {}
    for path, entry in entries.items():
        head, sep, rest = path.partition("/")
        if sep:
            folders.setdefault(head, {})[rest] = entry
        else:
            files[head] = entry
    items: list[tuple[bytes, bytes]] = []
    for name, entry in files.items():
        items.append((os.fsencode(name), f"{entry.mode} ".encode() + os.fsencode(name) + b"\0" + bytes.fromhex(entry.sha)))
    for name, inner in folders.items():
        sha = write_tree(git_dir, inner)
        items.append((os.fsencode(name) + b"/", f"{TREE} ".encode() + os.fsencode(name) + b"\0" + bytes.fromhex(sha)))
    items.sort(key=lambda item: item[0])  # git's order: a directory sorts as its name with a trailing slash
    return write_object(git_dir, "tree", b"".join(raw for _key, raw in items))


def write_commit(git_dir: Path, tree: str, identity: tuple[tuple[str, str], ...]) -> str:
    """A commit of ``tree`` (no parent, a fixed date: the same tree gives the same commit); returns its id."""
    who = dict(identity)
    person = f"{who.get('user.name', 'assistant-tui')} <{who.get('user.email', 'checkpoints@assistant-tui.invalid')}> 0 +0000"
    body = f"tree {tree}\nauthor {person}\ncommitter {person}\n\nassistant-tui checkpoint\n"
    return write_object(git_dir, "commit", body.encode())


def commit_tree(git_dir: Path, commit: str) -> str | None:
    """The tree of a loose commit ``commit`` (None: not a commit id, missing, or not loose)."""
    if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit):
        return None
    try:
        raw = zlib.decompress((git_dir / "objects" / commit[:2] / commit[2:]).read_bytes())
    except (OSError, zlib.error):
        return None
    header, _, body = raw.partition(b"\0")
    if not header.startswith(b"commit ") or not body.startswith(b"tree ") or object_id("commit", body) != commit:
        return None
    tree = body[5:45].decode("ascii", "replace")
    return tree if all(c in "0123456789abcdef" for c in tree) else None


def line_counts(old: bytes | None, new: bytes | None) -> tuple[int, int]:
    """Lines added and removed from ``old`` to ``new`` (0, 0 for binary content)."""
    if (old and b"\0" in old[:8000]) or (new and b"\0" in new[:8000]):
        return 0, 0
    before = (old or b"").splitlines()
    after = (new or b"").splitlines()
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed
