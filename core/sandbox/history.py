"""Secret files in git history: when a repository ever committed one, the sandbox hides git's objects.

A secret file masked in the sandbox (``.env``, a private key) that was ever committed
(or is staged) stays readable through git: ``git show HEAD~1:.env``, ``git log -p``,
``git cat-file --batch-all-objects --batch``, and output redaction does not catch a
hex dump of it. So, for each git directory the project's walk found
(:attr:`core.sandbox.walk.ProjectScan.git_configs`: the project's ``.git``, its
submodules' git directories, nested and bare-shaped repositories), this module asks
git (hardened: :func:`core.gitutil.git_env`) whether any path in its history, its
reflogs or its index names a secret file (:func:`core.secrets.is_secret_path`).
When one does, an empty read-only directory is bound over its ``objects`` directory
(loose objects, pack files, commit-graph and the ``info/alternates`` file all live
there) and over the object directories its alternates name inside the project, and
over ``rr-cache`` (recorded conflict resolutions hold file contents). Refs, the index and
the reflogs hold only object names, so they stay. The host's ``.git`` is untouched.

The answer is cached per git directory, keyed by the state of its refs (``HEAD``,
``packed-refs``, the index, and the names, sizes and times of everything under
``refs/`` and ``reftable/``): a later run with no new commit costs a few ``stat`` calls.

Not covered: objects no ref, reflog or index names (a blob staged and then unstaged
stays in ``objects/`` until git prunes it; nothing names it a secret), and copies of a
repository outside a git directory's shape (a bundle or a tarball of ``.git``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from core.gitutil import GitRefused, git_argv, git_env
from core.secrets import is_secret_name, is_secret_path

log = logging.getLogger(__name__)

GIT_TIMEOUT = 20.0
"""Seconds for one history listing; past it the history is treated as holding a secret."""
_STATE_FILES = ("HEAD", "packed-refs", "shallow")
PSEUDO_REFS = ("FETCH_HEAD", "ORIG_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE",
               "BISECT_HEAD")
"""Files naming commits that ``--all`` and ``--reflog`` leave out (``git show FETCH_HEAD:.env`` reads them)."""
_OBJECT_ID = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})\b", re.M)
MAX_COPIED = 200
"""Masked files whose stored copies are looked for (by blob id) per git directory."""
COPY_CAP = 1024 * 1024
"""Masked files larger than this are not hashed."""
_STATE_DIRS = ("refs", "reftable")
_MAX_STATE_ENTRIES = 20_000
HIDDEN_DIRS = ("objects", "rr-cache")
"""Parts of a git directory that hold file contents."""


@dataclass(frozen=True)
class HistorySecret:
    """A git directory whose history holds a secret file."""

    git_dir: str
    path: str
    """The first secret path found (relative to the repository)."""


_cache: dict[str, tuple[str, str | None, str, str | None]] = {}
"""git dir -> (refs state, secret in history, index state, secret in index)."""
_announced: set[str] = set()
_lock = threading.Lock()


def git_dirs(root: Path, git_configs: Iterable[str]) -> list[str]:
    """The git directories (with an object store) of the project: its ``.git`` and those the walk found."""
    found = [os.path.dirname(config) for config in git_configs if os.path.basename(config) == "config"]
    top = os.path.join(str(root), ".git")
    if os.path.isdir(top) and not os.path.islink(top):
        found.insert(0, top)
    return [d for d in dict.fromkeys(os.path.realpath(d) for d in found) if os.path.isdir(os.path.join(d, "objects"))]


def refs_state(git_dir: str) -> str:
    """A digest of what decides the history's content: HEAD, packed-refs, pseudo-refs, loose refs (stat)."""
    digest = hashlib.sha256(git_dir.encode("utf-8", "surrogateescape"))
    for name in _STATE_FILES + PSEUDO_REFS:
        path = os.path.join(git_dir, name)
        try:
            info = os.stat(path)
            digest.update(f"{name} {info.st_size} {info.st_mtime_ns} {info.st_ino}\n".encode())
            if name == "HEAD":
                with open(path, "rb") as handle:
                    digest.update(handle.read(4096))
        except OSError:
            digest.update(f"{name} -\n".encode())
    seen = 0
    for top in _STATE_DIRS:
        stack = [os.path.join(git_dir, top)]
        while stack:
            current = stack.pop()
            try:
                entries = sorted(os.scandir(current), key=lambda e: e.name)
                info = os.stat(current)
            except OSError:
                continue
            digest.update(f"d {current} {info.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
            for entry in entries:
                seen += 1
                if seen > _MAX_STATE_ENTRIES:
                    return "uncacheable"
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    digest.update(f"f {entry.path} {info.st_size} {info.st_mtime_ns} {info.st_ino}\n"
                                  .encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _secret_in(paths: Iterable[str]) -> str | None:
    for path in paths:
        if path and any(is_secret_name(part) for part in path.split("/")) and is_secret_path(path):
            return path
    return None


def pseudo_ref_ids(git_dir: str) -> list[str]:
    """The commits ``FETCH_HEAD``, ``ORIG_HEAD``, ``MERGE_HEAD``... name."""
    found: list[str] = []
    for name in PSEUDO_REFS:
        try:
            with open(os.path.join(git_dir, name), encoding="ascii", errors="replace") as handle:
                found += _OBJECT_ID.findall(handle.read(256 * 1024))
        except OSError:
            continue
    return list(dict.fromkeys(found))


def _listing(git_dir: str, env: dict[str, str], *args: str, stdin: str | None = None) -> set[str] | None:
    """The NUL-separated paths a git command prints (deduplicated); None when it failed."""
    argv = git_argv(f"--git-dir={git_dir}", *args)
    try:
        proc = subprocess.run(argv, cwd=git_dir, env=env, capture_output=True, timeout=GIT_TIMEOUT, check=False,
                              input=None if stdin is None else stdin.encode(),
                              stdin=subprocess.DEVNULL if stdin is None else None)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("listing git history in %s failed: %s", git_dir, exc)
        return None
    if proc.returncode != 0:
        return None
    return set(proc.stdout.decode("utf-8", "surrogateescape").split("\0"))


def _find(git_dir: str, *, index: bool = True, history: bool = True) -> tuple[str | None, str | None]:
    """(secret path in the index, secret path in the history), each None when clean or not asked."""
    try:
        env = git_env(Path(git_dir))
    except GitRefused as exc:
        log.warning("git history of %s not checked (%s): its objects are hidden in the sandbox", git_dir, exc.reason)
        return "(not checked)", "(not checked)"
    env["GIT_DIR"] = git_dir
    staged: str | None = None
    if index and os.path.exists(os.path.join(git_dir, "index")):
        staged = _secret_in(_listing(git_dir, env, "ls-files", "--cached", "-z") or ())
    if not history:
        return staged, None
    # -m: a merge's own changes too; --reflog: commits only a reflog still names (an amend that dropped .env)
    pseudo = pseudo_ref_ids(git_dir)
    listed = _listing(git_dir, env, "-c", "log.showSignature=false", "log", "--all", "--reflog", "-m",
                      "--no-renames", "--ignore-missing", "--format=", "--name-only", "-z",
                      *(["--stdin"] if pseudo else []), stdin="\n".join(pseudo) + "\n" if pseudo else None)
    if listed is None:
        refs = _listing(git_dir, env, "for-each-ref", "--format=%(refname)%00")
        if refs is not None and not (refs - {"", "\n"}) and not os.path.exists(os.path.join(git_dir, "packed-refs")):
            return staged, None  # no commit yet
        log.warning("git history of %s could not be listed: its objects are hidden in the sandbox", git_dir)
        return staged, "(history unreadable)"
    return staged, _secret_in(sorted(p.lstrip("\n") for p in listed))


def _index_state(git_dir: str) -> str:
    try:
        info = os.stat(os.path.join(git_dir, "index"))
    except OSError:
        return "-"
    return f"{info.st_size} {info.st_mtime_ns} {info.st_ino}"


def history_secret(git_dir: str) -> str | None:
    """The first secret path in ``git_dir``'s index, history or reflogs, or None; cached.

    A repository git cannot read (refused by :func:`core.gitutil.git_env`, a timeout, a
    broken history) counts as holding a secret: its objects are hidden. The history is
    cached by the refs' state (:func:`refs_state`), the index by its own stat, so
    ``git add`` (or a ``git status`` refreshing the index) re-reads only the index.
    """
    state, index_state = refs_state(git_dir), _index_state(git_dir)
    with _lock:
        cached = _cache.get(git_dir)
    fresh_history = cached is not None and cached[0] == state and state != "uncacheable"
    fresh_index = cached is not None and cached[2] == index_state
    if fresh_history and fresh_index:
        return cached[3] or cached[1]
    staged, committed = _find(git_dir, index=not fresh_index, history=not fresh_history)
    if cached is not None:
        staged = cached[3] if fresh_index else staged
        committed = cached[1] if fresh_history else committed
    with _lock:
        _cache[git_dir] = (state, committed, index_state, staged)
    return staged or committed


def _blob_ids(path: str) -> list[str]:
    """The ids git would give ``path``'s content as a blob (SHA-1 and SHA-256 repositories); none past the cap."""
    try:
        if os.path.getsize(path) > COPY_CAP:
            return []
        with open(path, "rb") as handle:
            data = handle.read(COPY_CAP + 1)
    except OSError:
        return []
    header = f"blob {len(data)}\0".encode()
    return [hashlib.sha1(header + data, usedforsecurity=False).hexdigest(), hashlib.sha256(header + data).hexdigest()]


def objects_state(git_dir: str) -> str:
    """A digest of the object store's directories (a new loose object or pack changes one of their times)."""
    objects = os.path.join(git_dir, "objects")
    digest = hashlib.sha256()
    try:
        entries = sorted(os.scandir(objects), key=lambda e: e.name)
    except OSError:
        return "-"
    for entry in [os.path.join(objects, "."), *(e.path for e in entries)]:
        try:
            info = os.stat(entry, follow_symlinks=False)
        except OSError:
            continue
        digest.update(f"{entry} {info.st_mtime_ns} {info.st_ino}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


_copies_cache: dict[str, tuple[tuple[object, ...], str | None]] = {}


def stored_copy(git_dir: str, secret_files: Iterable[str], root: Path) -> str | None:
    """A masked file (``.env``, a key found by content) whose exact content git's object store holds, or None.

    Whatever names it there (committed under another name, staged, or dangling after an
    unstage), ``git cat-file --batch-all-objects --batch`` would print it. Cached by the
    files' and the object store's state.
    """
    files = sorted(dict.fromkeys(secret_files))[:MAX_COPIED]
    stats = []
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            continue
        stats.append((path, info.st_size, info.st_mtime_ns, info.st_ino))
    if not stats:
        return None
    key = (tuple(stats), objects_state(git_dir))
    with _lock:
        cached = _copies_cache.get(git_dir)
    if cached is not None and cached[0] == key:
        return cached[1]
    ids = {blob: path for path, *_ in stats for blob in _blob_ids(path)}
    found: str | None = None
    if ids:
        try:
            env = git_env(None)
            env["GIT_DIR"] = git_dir
            proc = subprocess.run(git_argv(f"--git-dir={git_dir}", "cat-file", "--batch-check=%(objectname)"),
                                  cwd=git_dir, env=env, input="\n".join(ids).encode() + b"\n", capture_output=True,
                                  timeout=GIT_TIMEOUT, check=False)
            lines = proc.stdout.decode("ascii", "replace").splitlines()
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("looking for copies of masked files in %s failed: %s", git_dir, exc)
            lines = []
        for line in lines:
            line = line.strip()
            if line in ids:
                found = f"a copy of {os.path.relpath(ids[line], root)}"
                break
    with _lock:
        _copies_cache[git_dir] = (key, found)
    return found


def secrets_in_history(root: Path, git_configs: Iterable[str], secret_files: Iterable[str] = ()) -> list[HistorySecret]:
    """Every git directory of the project whose history holds a secret file, or a copy of a masked file."""
    found = []
    secret_files = list(secret_files)
    for git_dir in git_dirs(root, git_configs):
        path = history_secret(git_dir) or stored_copy(git_dir, secret_files, root)
        if path is not None:
            found.append(HistorySecret(git_dir, path))
    return found


def _alternates(git_dir: str, root: str) -> list[str]:
    """Object directories ``objects/info/alternates`` names inside the project."""
    objects = os.path.join(git_dir, "objects")
    try:
        with open(os.path.join(objects, "info", "alternates"), encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read(64 * 1024).splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        target = os.path.realpath(os.path.join(objects, line.strip('"')))
        if (target == root or target.startswith(root.rstrip("/") + "/")) and os.path.isdir(target):
            found.append(target)
    return found


def hide_args(root: Path, git_configs: Iterable[str], empty_dir: str, secret_files: Iterable[str] = ()) -> list[str]:
    """bubblewrap options binding ``empty_dir`` (read-only) over the object stores of histories holding a secret."""
    top = os.path.realpath(root)
    args: list[str] = []
    for secret in secrets_in_history(root, git_configs, secret_files):
        hidden = [os.path.join(secret.git_dir, name) for name in HIDDEN_DIRS]
        hidden += _alternates(secret.git_dir, top)
        for path in hidden:
            if os.path.isdir(path) and not os.path.islink(path):
                args += ["--ro-bind", empty_dir, path]
    return args


def notice(root: Path, git_configs: Iterable[str], secret_files: Iterable[str] = ()) -> str | None:
    """The sentence said once per git directory (per process) whose objects the sandbox hides, or None.

    Uses the cached answers of :func:`hide_args` (the same refs state costs no git run).
    """
    lines = []
    for secret in secrets_in_history(root, git_configs, secret_files):
        with _lock:
            if secret.git_dir in _announced:
                continue
            _announced.add(secret.git_dir)
        where = os.path.relpath(secret.git_dir, root) if secret.git_dir.startswith(str(root)) else secret.git_dir
        what = secret.path if not secret.path.startswith("(") else "a secret file, or could not be checked"
        lines.append(f"[sandbox] git history of {where} holds {what}: git's objects are hidden in the sandbox; "
                     "git commands that read history fail there.")
    return "\n".join(lines) or None
