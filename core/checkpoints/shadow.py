"""The shadow git repository that holds a project's checkpoints (issue 26).

Its ``GIT_DIR`` lives in the app's state directory (``checkpoints/<project key>``) and the
project is its work tree: the user's ``.git``, index, stash, branches and HEAD are never
read or written. Git runs with :func:`core.gitutil.git_env` (no system or global config, every
program-naming key pinned) and the shadow's own ``info/attributes`` switches off every
in-tree attribute that would change bytes on the way in (``text``, ``eol``, ``filter``,
``ident``, ``working-tree-encoding``), so a file comes back exactly as it was.

Two ways to take a snapshot, both ending in a tree id:

- :meth:`ShadowRepo.snapshot_all`: tracked and untracked-not-ignored files. When the project is
  watched (``watch=True``, :mod:`core.checkpoints.inotify`) and no event came since the latest
  snapshot was taken, that snapshot is the answer with no git process and no ``lstat``; when
  events named a few files, the ``git status`` below looks at those alone. Otherwise one ``git
  status`` compares the tree with the latest snapshot (the shadow's ``HEAD``), through the
  index's stat cache and untracked cache, so an untouched tree is neither rehashed nor walked;
  when nothing differs that snapshot is the answer (one git process). Otherwise only the paths it named go
  into the index (``update-index``; ``git add -A`` when they are many or refused) and
  ``write-tree`` makes the tree;
- :meth:`ShadowRepo.snapshot_paths`: only the named paths (a writer that says what it
  writes: ``editFile``, aider's automatic edits), a few milliseconds whatever the tree's size.

Blocking: call from a worker thread. One process at a time per shadow (``flock``).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import stat
import subprocess
from pathlib import Path
from typing import Iterator, Sequence

from core import paths
from core.checkpoints.inotify import TreeWatch
from core.checkpoints.objects import (
    EXECUTABLE, GITLINK, REGULAR, SYMLINK, Change, Entry, commit_tree, line_counts, read_disk, write_commit,
    write_object, write_tree,
)
from core.gitutil import git_argv, git_env
from core.sessions.fsutil import atomic_write

__all__ = ["EXECUTABLE", "REGULAR", "SYMLINK", "Change", "CheckpointError", "Entry", "ShadowRepo", "disk_entry"]

log = logging.getLogger(__name__)

ATTRIBUTES = "* -text -filter -ident -working-tree-encoding !eol !diff !merge\n"
"""$GIT_DIR/info/attributes beats every in-tree .gitattributes: bytes go in and out unchanged."""
IDENTITY = (("user.name", "assistant-tui checkpoints"), ("user.email", "checkpoints@assistant-tui.invalid"))
DEFAULT_EXCLUDES = ("node_modules/", ".venv/", "venv/", "__pycache__/", ".tox/", ".nox/", ".mypy_cache/",
                    ".pytest_cache/", ".ruff_cache/")
"""Never copied, ignored or not: installed packages and caches (a command that changes them is told so)."""
GIT_TIMEOUT = 600.0
KNOWN_TREES = 8
MAX_LISTED = 2000
"""More paths than this differing from the latest snapshot: ``git add -A`` puts them in the index."""


class CheckpointError(Exception):
    """A snapshot or a restore failed; the message says what and what to do."""


def checkpoints_root() -> Path:
    """Where every project's shadow repository lives."""
    return paths.state_dir() / "checkpoints"


def project_key(project_root: Path) -> str:
    """The shadow's directory name for ``project_root`` (the sessions' key)."""
    from core.sessions.records import project_key as key

    return key(project_root)


class ShadowRepo:
    """One project's shadow repository.

    Args:
        project_root: The project (the work tree).
        git_dir: Where the shadow lives (default ``<state>/checkpoints/<project key>``).
        watch: Watch the project's directories (inotify) so an unchanged tree needs no ``git status``.
    """

    def __init__(self, project_root: Path, git_dir: Path | None = None, *, watch: bool = False) -> None:
        self.root = Path(project_root).resolve()
        self.git_dir = Path(git_dir) if git_dir is not None else checkpoints_root() / project_key(self.root)
        self._env: dict[str, str] | None = None
        self._known: dict[str, tuple[dict[str, Entry], dict[str, bytes]]] = {}
        self._commits: dict[str, str] = {}
        """Snapshot commits' trees already read."""
        self._ensured: tuple[object, ...] | None = None
        """The latest path snapshots' entries and bytes, so their difference needs no git process."""
        self.watch = TreeWatch(str(self.root), self._ignored_directories) if watch else None

    # -- running git ---------------------------------------------------------------
    def env(self) -> dict[str, str]:
        """The environment of every git run here: hardened, pointed at the shadow."""
        if self._env is None:
            env = git_env(None, global_config=False, identity=IDENTITY)
            env["GIT_DIR"] = str(self.git_dir)
            env["GIT_WORK_TREE"] = str(self.root)
            env["GIT_CEILING_DIRECTORIES"] = str(self.root.parent)
            env["GIT_OPTIONAL_LOCKS"] = "1"  # the shadow is ours: status writes back its refreshed stat and untracked caches
            self._env = env
        return self._env

    def git(self, *args: str, input: bytes | None = None, check: bool = True, env: dict[str, str] | None = None) -> bytes:
        """Run one git command on the shadow (in the project), returning its stdout.

        Raises:
            CheckpointError: git failed (with its message) or could not run.
        """
        # One git thread: preload-index's threads took both CPUs of a small machine from the app's event loop
        # (250 ms of lag on 80,000 files, 25 ms without, for about the same time).
        # The untracked cache serves only a status whose untracked-files mode is the configured one (-uall here).
        # A split index: a process that changes a few entries writes those, not all 80,000 (half the CPU of
        # update-index and write-tree on that tree); the shared part is rewritten when a fifth has changed.
        argv = git_argv("-c", "advice.addEmbeddedRepo=false", "-c", "core.untrackedCache=true", "-c", "status.showUntrackedFiles=all",
                        "-c", "core.preloadIndex=false", "-c", "index.threads=1", "-c", "core.splitIndex=true", *args)
        try:
            proc = subprocess.run(argv, cwd=self.root, env=env or self.env(), input=input, capture_output=True,
                                  timeout=GIT_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CheckpointError(f"git {args[0]} could not run for the checkpoint: {exc}") from exc
        if proc.returncode != 0:
            message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            if not check:
                log.warning("checkpoint: git %s: %s", args[0], "; ".join(message[-3:]))
                return proc.stdout
            raise CheckpointError(f"git {args[0]} failed for the checkpoint: {message[-1] if message else proc.returncode}")
        return proc.stdout

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the shadow's lock (another assistant-tui on the same project waits)."""
        self.ensure()
        fd = paths.open_private(self.git_dir / "assistant-tui.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def ensure(self) -> None:
        """Create the shadow repository when missing, and refresh what it must ignore."""
        if not (self.git_dir / "HEAD").is_file():
            self._ensured = None
            paths.private_dir(self.git_dir)
            init_repository(self.git_dir)  # the untracked cache comes with the first index written (core.untrackedCache=true)
        info = self.git_dir / "info"
        user_exclude = self.root / ".git" / "info" / "exclude"
        key = (_stamp(user_exclude), _stamp(info / "exclude"), _stamp(info / "attributes"))
        if key == self._ensured:
            return  # nothing it reads changed since it last wrote them
        if self.watch is not None:
            self.watch.invalidate()  # what git ignores may have changed: the watched directories with it
        info.mkdir(exist_ok=True)
        _write_if_changed(info / "attributes", ATTRIBUTES)
        _write_if_changed(info / "exclude", self._excludes())
        self._ensured = (_stamp(user_exclude), _stamp(info / "exclude"), _stamp(info / "attributes"))

    def _excludes(self) -> str:
        """The user's own ``.git/info/exclude`` plus the app's directories inside the project."""
        lines = ["# written by assistant-tui: heavy directories, the project's .git/info/exclude, the app's own directories",
                 *DEFAULT_EXCLUDES]
        user_exclude = self.root / ".git" / "info" / "exclude"
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if user_exclude.is_file() and not user_exclude.is_symlink():
                lines.append(user_exclude.read_text(encoding="utf-8")[:65536])
        for own in (self.git_dir, paths.state_dir(), paths.data_dir(), paths.config_dir()):
            with contextlib.suppress(ValueError, OSError):
                relative = own.resolve().relative_to(self.root)
                if relative.parts:
                    lines.append("/" + relative.as_posix() + "/")
        return "\n".join(lines) + "\n"

    def close(self) -> None:
        """Stop watching the project (a later whole-tree snapshot watches it again)."""
        if self.watch is not None:
            self.watch.close()

    # -- snapshots -------------------------------------------------------------------
    def snapshot_all(self) -> str:
        """Snapshot tracked and untracked-not-ignored files; returns the tree id."""
        with self.locked():
            commit, head = self._head()
            # what changed since the latest snapshot, by the watch's events (every later change leaves one)
            changed = self.watch.begin(commit) if self.watch is not None else None
            if head is not None and changed == []:
                self.watch.covers(commit)  # type: ignore[union-attr]
                return head  # no event since the snapshot: no git process, no lstat
            listed = self._differing(changed) if head is not None else None
            if head is not None and listed == []:
                if self.watch is not None:
                    self.watch.covers(commit)
                return head
            if listed is None or not self._update(listed):
                self.git("add", "-A", "--ignore-errors", check=False)  # an unreadable file is skipped, named in the log
            tree = self.git("write-tree").decode().strip()
            commit = self._set_head(tree)
            if self.watch is not None:
                self.watch.covers(commit)
            return tree

    def _ignored_directories(self) -> list[str]:
        """The directories git never looks into (absolute paths): ignored themselves, none of their files stored.

        ``ls-files --directory`` also names a directory whose files are all ignored but which is not
        (``cache/`` holding only ``*.pyc``): a file made there later is stored, so ``check-ignore``
        keeps only the directories an ignore rule matches. None when git cannot say (all watched).
        """
        try:
            out = self.git("ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z")
            candidates = b"".join(name + b"\0" for name in out.split(b"\0") if name.endswith(b"/"))
            matched = self.git("check-ignore", "-z", "--stdin", input=candidates, check=False) if candidates else b""
        except CheckpointError as exc:
            log.warning("checkpoint: %s; watching every directory", exc)
            return []
        return [str(self.root / os.fsdecode(name.rstrip(b"/"))) for name in matched.split(b"\0") if name.endswith(b"/")]

    def _differing(self, only: list[str] | None = None) -> list[str] | None:
        """The paths where the tree differs from the latest snapshot (``git status`` against ``HEAD``); None: unknown.

        ``only``: the paths that may differ (the watch's events): the status looks at those alone.

        Left out, as ``git add -A --ignore-errors`` leaves them out: a nested repository (listed as
        ``dir/``, not covered) and a file this user cannot read.
        """
        limit: list[str] = ["--", *only] if only else []
        env = {**self.env(), "GIT_LITERAL_PATHSPECS": "1"}  # a name with * or ? is that name
        try:
            out = self.git("status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all", "--no-renames",
                           *limit, env=env)
        except CheckpointError as exc:
            log.warning("checkpoint: %s; adding the whole tree", exc)
            return None
        listed = [os.fsdecode(item[3:]) for item in out.split(b"\0") if len(item) > 3 and not item.endswith(b"/")]
        return [name for name in listed if _storable(self.root / name)]

    def _update(self, listed: list[str]) -> bool:
        """Put ``listed`` paths in the index as they are on disk; False when ``git add -A`` must do it."""
        if len(listed) > MAX_LISTED:
            return False
        data = b"".join(os.fsencode(name) + b"\0" for name in listed)
        try:  # a path beyond a link, an unreadable file, a file turned directory: git refuses, add -A decides
            self.git("update-index", "--add", "--remove", "--replace", "-z", "--stdin", input=data)
        except CheckpointError as exc:
            log.debug("checkpoint: update-index refused (%s); adding the whole tree", exc)
            return False
        return True

    def _head(self) -> tuple[str, str | None]:
        """The latest whole-tree snapshot: the detached ``HEAD`` commit and its tree (None when there is none)."""
        try:
            commit = (self.git_dir / "HEAD").read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return "", None
        if commit not in self._commits:
            tree = commit_tree(self.git_dir, commit)
            if tree is None:
                return commit, None
            self._commits[commit] = tree
        return commit, self._commits[commit]

    def _set_head(self, tree: str) -> str:
        """Make ``tree`` the latest snapshot: a commit of it (written directly) as the detached ``HEAD``; returns the commit."""
        commit = write_commit(self.git_dir, tree, IDENTITY)
        self._commits[commit] = tree
        atomic_write(self.git_dir / "HEAD", f"{commit}\n".encode(), durable=False)
        return commit

    def snapshot_paths(self, relative: Sequence[str]) -> str:
        """Snapshot only ``relative`` paths (files; a missing one is recorded as absent); returns the tree id.

        The tree holds those paths alone, written without a git process (:mod:`core.checkpoints.objects`),
        so the cost does not grow with the project: compare it only with another snapshot of the same paths.
        """
        self.ensure()
        entries: dict[str, Entry] = {}
        contents: dict[str, bytes] = {}
        for name in sorted({p for p in relative if p and not p.startswith("../")}):
            found = read_disk(self.root / name)
            if found is not None:
                entries[name], contents[name] = found
                write_object(self.git_dir, "blob", contents[name])
        tree = write_tree(self.git_dir, entries)
        self._known[tree] = (entries, contents)
        while len(self._known) > KNOWN_TREES:
            self._known.pop(next(iter(self._known)))
        return tree

    # -- reading -----------------------------------------------------------------------
    def changes(self, before: str, after: str) -> list[Change]:
        """Every path that differs between two trees (no rename detection: a move is a delete and a create)."""
        return self.diff(before, after)[0]

    def diff(self, before: str, after: str) -> tuple[list[Change], dict[str, tuple[int, int]]]:
        """The changed paths and their lines added and removed (binary: 0), in one ``git diff-tree``."""
        if before == after:
            return [], {}
        if before in self._known and after in self._known:
            return _diff_known(self._known[before], self._known[after])
        out = self.git("diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--raw", "--numstat", before, after)
        fields = out.split(b"\0")
        found: list[Change] = []
        counts: dict[str, tuple[int, int]] = {}
        index = 0
        while index < len(fields):
            head = fields[index]
            if head.startswith(b":") and index + 1 < len(fields):
                old_mode, new_mode, old_sha, new_sha, _status = head[1:].decode().split()
                path = os.fsdecode(fields[index + 1])
                index += 2
                if GITLINK in (old_mode, new_mode):
                    continue  # a nested repository: not covered
                old = None if old_mode == "000000" else Entry(old_mode, old_sha)
                new = None if new_mode == "000000" else Entry(new_mode, new_sha)
                found.append(Change(path, old, new))
                continue
            parts = head.split(b"\t", 2)
            if len(parts) == 3:
                added, removed, path_bytes = parts
                counts[os.fsdecode(path_bytes)] = (int(added) if added.isdigit() else 0, int(removed) if removed.isdigit() else 0)
            index += 1
        return found, counts

    def read_blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """The contents of blobs by id (one ``git cat-file --batch``)."""
        wanted = sorted(set(shas))
        if not wanted:
            return {}
        out = self.git("cat-file", "--batch", input="".join(f"{sha}\n" for sha in wanted).encode())
        blobs: dict[str, bytes] = {}
        offset = 0
        for sha in wanted:
            end = out.index(b"\n", offset)
            header = out[offset:end].split()
            if len(header) < 3 or header[1] != b"blob":
                raise CheckpointError(f"the checkpoint's copy of a file ({sha[:12]}) is missing from {self.git_dir}")
            size = int(header[2])
            blobs[sha] = out[end + 1 : end + 1 + size]
            offset = end + 1 + size + 1
        return blobs


def disk_entry(path: Path) -> Entry | None:
    """What ``path`` holds now, as git would store it (None: missing, or a directory)."""
    found = read_disk(path)
    return found[0] if found is not None else None


def _diff_known(before: tuple[dict[str, Entry], dict[str, bytes]], after: tuple[dict[str, Entry], dict[str, bytes]]
                ) -> tuple[list[Change], dict[str, tuple[int, int]]]:
    """The difference of two path snapshots taken here, from what they read."""
    changes: list[Change] = []
    counts: dict[str, tuple[int, int]] = {}
    for path in sorted(set(before[0]) | set(after[0])):
        old, new = before[0].get(path), after[0].get(path)
        if old != new:
            changes.append(Change(path, old, new))
            counts[path] = line_counts(before[1].get(path), after[1].get(path))
    return changes, counts


def init_repository(git_dir: Path) -> None:
    """What ``git init`` with no template writes, without a git process (the first checkpoint waits on it).

    The configuration probes the directory as git does: executable bits kept (``filemode``), symbolic
    links possible, names case-insensitive. ``HEAD`` is written last: a half-made repository is made again.
    """
    for folder in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):
        (git_dir / folder).mkdir(parents=True, exist_ok=True)
    config = git_dir / "config"
    config.write_text("[core]\n\trepositoryformatversion = 0\n", encoding="ascii")
    lines = ["\tfilemode = " + ("true" if _keeps_executable_bit(config) else "false"), "\tbare = false", "\tlogallrefupdates = true"]
    probe = git_dir / f"symlink-probe-{os.getpid()}"
    try:
        os.symlink("testing", probe)
        os.unlink(probe)
    except OSError:
        lines.append("\tsymlinks = false")
    if (git_dir / "CoNfIg").exists():
        lines.append("\tignorecase = true")
    with config.open("a", encoding="ascii") as handle:
        handle.write("\n".join(lines) + "\n")
    atomic_write(git_dir / "HEAD", b"ref: refs/heads/master\n", durable=False)


def _storable(path: Path) -> bool:
    """Whether a path status named can go in a snapshot: gone (a deletion), a link, or a file that can be read."""
    try:
        info = os.lstat(path)
    except OSError:
        return True
    return stat.S_ISLNK(info.st_mode) or os.access(path, os.R_OK)


def _keeps_executable_bit(path: Path) -> bool:
    try:
        mode = os.lstat(path).st_mode
        os.chmod(path, mode ^ stat.S_IXUSR)
        kept = (os.lstat(path).st_mode ^ mode) & stat.S_IXUSR != 0
        os.chmod(path, mode)
    except OSError:
        return False
    return kept


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    path.write_text(text, encoding="utf-8")
