"""Which project files may be sent to the model: one rule for size, binary content, secrets and ignore rules.

Every place that puts a file in front of the model asks :class:`FilePolicy`: the
picked files of the context (``FileAccess``), the ``readFile`` tool, ``/add``
with the picker and ``@`` completion, and the relevance suggestions. A refused
file gets a :class:`Refusal` whose ``reason`` is the same words wherever it is
shown (``big.json is 300 KB, over the 256 KB limit for one file``).

Ignore rules are git's: a file is ignored when git ignores it, and a tracked file
never is. The project's :class:`~core.memory.index.FileIndex` lists exactly the
files that are not ignored, so globs expand over it and membership answers most
questions without running git; a file the index has not seen asks
``git check-ignore`` (outside a git repository the ``.gitignore`` files are
matched the way the index's directory walk matches them).
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal, Sequence

from core.gitutil import GitRefused, run_git
from core.globs import is_glob, relative_pattern, select
from core.memory.index import FileIndex, FileMetadata, ignored_by_gitignore_files
from core.text import human_size
from core.tokens import CHARS_PER_TOKEN
from core.secrets import contains_private_key, is_secret_path, looks_like_private_key, scrubbed_env

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 256 * 1024
"""Largest file sent to the model whole (picked into the context, or read whole by ``readFile``)."""
SNIFF_BYTES = 8192
"""A NUL byte within this many leading bytes makes a file binary (git's own test)."""
_GIT_TIMEOUT = 10.0

RefusalCode = Literal[
    "outside", "git_internal", "secret", "missing", "directory", "unreadable", "ignored", "binary", "too_large"
]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a file is not sent to the model.

    Attributes:
        code: What kind of refusal (``too_large``, ``binary``, ``ignored``, ``secret`` ...).
        reason: A clause that follows the file's name or "it", e.g.
            ``is 300 KB, over the 256 KB limit for one file``.
        size: The file's size in bytes (0 when unknown).
    """

    code: RefusalCode
    reason: str
    size: int = 0

    def sentence(self, display: str) -> str:
        """``big.json is 300 KB, over the 256 KB limit for one file.``"""
        return f"{display} {self.reason}."


@dataclass
class Expansion:
    """The files a path or glob names (``/add``), absolute and resolved, in order."""

    files: list[Path] = field(default_factory=list)
    glob: bool = False
    """True when the pattern was a glob or a directory (ignored files are left out of those)."""


def estimate_file_tokens(size: int) -> int:
    """Tokens of a text file of ``size`` bytes, without reading it."""
    return math.ceil(size / CHARS_PER_TOKEN) if size > 0 else 0


def file_tokens(path: str | os.PathLike[str]) -> int:
    """Estimated tokens of a text file from its size (a stat, never a read); 0 when it cannot be sized."""
    try:
        return estimate_file_tokens(os.stat(path).st_size)
    except OSError:
        return 0


def is_git_ignored(path: Path, project_root: Path) -> bool:
    """True when git ignores ``path`` (tracked files never count as ignored).

    Asks ``git check-ignore`` (hardened: repository hooks such as fsmonitor
    disabled); outside a git repository, or without git, matches the project's
    ``.gitignore`` files.

    Args:
        path: A resolved path inside the resolved project root.
        project_root: The project directory.
    """
    root = project_root.resolve()
    rel = path.relative_to(root).as_posix()
    if shutil.which("git"):
        try:
            proc = run_git(["check-ignore", "-q", "--", rel], root, base=scrubbed_env(), timeout=_GIT_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired, GitRefused) as exc:
            log.warning("git check-ignore failed for %s: %s", path, exc)
        else:
            if proc.returncode in (0, 1):
                return proc.returncode == 0
    return ignored_by_gitignore_files(rel, root)


class FilePolicy:
    """The one rule for files sent to the model, for one project.

    Args:
        project_root: The project directory; nothing outside it is sent.
        index: The project's file index (the memory system's, so it is shared);
            a private one is built on first use when None.
        max_bytes: Largest file sent whole.
        refresh: Lists the index again (the memory system's, which also updates its
            picker); ``index.refresh`` when None.
    """

    def __init__(
        self,
        project_root: Path | str,
        *,
        index: FileIndex | None = None,
        max_bytes: int = MAX_FILE_BYTES,
        refresh: Callable[[], object] | None = None,
    ) -> None:
        self.root = Path(project_root).resolve()
        self.index = index
        self.max_bytes = max_bytes
        self._refresh = refresh

    # -- one file ----------------------------------------------------------------

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The absolute, resolved form of a path (relative paths are taken from the root)."""
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        try:
            return candidate.resolve()
        except (OSError, RuntimeError):
            return Path(os.path.normpath(candidate))

    def check(self, path: str | os.PathLike[str], *, chosen: bool = False, whole: bool = True) -> Refusal | None:
        """Why the file may not be sent to the model, or None when it may.

        Blocking (a stat, the first bytes, perhaps ``git check-ignore``): call it
        from a worker thread in async code.

        Args:
            path: Absolute, or relative to the project root.
            chosen: The user named or picked this very file: ignore rules do not
                apply to it (secrets, size and binary content still do).
            whole: The whole file would be sent; False for a line range, which
                any size may be read in.
        """
        named = Path(path)
        resolved = self.resolve(path)
        try:
            rel = resolved.relative_to(self.root)
        except ValueError:
            return Refusal("outside", f"is outside the project root {self.root}")
        if ".git" in rel.parts:
            return Refusal("git_internal", "is git's internal data, which is never sent to the model (it can hold credentials)")
        if why := is_secret_path(named) or is_secret_path(rel):
            return Refusal("secret", f"is never sent to the model: {why}")
        try:
            info = resolved.stat()
        except FileNotFoundError:
            return Refusal("missing", "does not exist")
        except OSError as exc:
            return Refusal("unreadable", f"cannot be read ({exc.strerror or exc})")
        if stat.S_ISDIR(info.st_mode):
            return Refusal("directory", "is a directory")
        size = info.st_size
        if not chosen and self.ignored(resolved):
            return Refusal("ignored", "is ignored by git (.gitignore)", size)
        try:
            with resolved.open("rb") as handle:
                head = handle.read(SNIFF_BYTES)
        except OSError as exc:
            return Refusal("unreadable", f"cannot be read ({exc.strerror or exc})", size)
        if b"\0" in head:
            return Refusal("binary", f"is a binary file ({human_size(size)}); only text files are sent to the model", size)
        if looks_like_private_key(head):
            return Refusal("secret", "is never sent to the model: it contains a private key", size)
        if whole and size > self.max_bytes:
            return Refusal("too_large", f"is {human_size(size)}, over the {human_size(self.max_bytes)} limit for one file", size)
        if contains_private_key(resolved):
            return Refusal("secret", "is never sent to the model: it contains a private key", size)
        return None

    def read_text(self, path: str | os.PathLike[str], *, chosen: bool = True) -> tuple[str | None, Refusal | None]:
        """A file's whole text when the policy allows it: ``(text, None)`` or ``(None, refusal)`` (blocking).

        Args:
            path: Absolute, or relative to the project root.
            chosen: The user picked the file (the default: the context's files are picked).
        """
        refusal = self.check(path, chosen=chosen)
        if refusal is not None:
            return None, refusal
        try:
            with self.resolve(path).open("rb") as handle:
                data = handle.read(self.max_bytes + 1)
        except OSError as exc:
            return None, Refusal("unreadable", f"cannot be read ({exc.strerror or exc})")
        if len(data) > self.max_bytes:  # grew since the check
            return None, Refusal("too_large", f"is over the {human_size(self.max_bytes)} limit for one file", len(data))
        return data.decode("utf-8", errors="replace"), None

    def ignored(self, path: Path) -> bool:
        """Whether git ignores a resolved path inside the root (the index answers for the files it lists)."""
        index = self.index
        if index is not None and index.complete:
            rel = path.relative_to(self.root).as_posix()
            if rel in index:
                return False
        return is_git_ignored(path, self.root)

    def suggestible(self, meta: FileMetadata | None) -> bool:
        """Whether an indexed file may be suggested as relevant: text, within the limit, not secret-named.

        Judged on the index's cached facts (size and a NUL test of the first bytes),
        so a huge file is never opened past its head.
        """
        return meta is not None and not meta.binary and meta.size <= self.max_bytes and not is_secret_path(meta.path)

    def tokens(self, path: str | os.PathLike[str]) -> int:
        """Estimated tokens of a file from its size (a stat, never a read); 0 when it cannot be sized."""
        return file_tokens(self.resolve(path))

    # -- listings ------------------------------------------------------------------

    def listing(self, *, fresh: bool = True) -> Sequence[str]:
        """The project's files that are not ignored, relative (the index's list; blocking).

        Args:
            fresh: List again first, so files created since the last listing are in.
        """
        if self.index is None:
            self.index = FileIndex(self.root)
            self.index.build()
        elif fresh or not self.index.complete:
            (self._refresh or self.index.refresh)()
        return self.index.paths

    def expand(self, pattern: str) -> Expansion:
        """The files a path, directory or glob names, never outside the root (blocking).

        A path naming one existing file gives that file, ignored or not (the user
        chose it); a directory or a glob gives the files of the index it names
        (:func:`core.globs.select`, the rule ``/drop`` uses too), so files git
        ignores (build output, ``node_modules``) are left out.
        """
        candidate = Path(pattern).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        if candidate.is_file():
            resolved = self.resolve(candidate)
            return Expansion([resolved] if resolved.is_relative_to(self.root) else [])
        relative = relative_pattern(pattern, self.root)
        if relative is None:
            return Expansion(glob=True)
        if not (candidate.is_dir() or is_glob(relative)):
            return Expansion()
        files = [self.root / p for p in sorted(select(relative, self.root, self.listing()))]
        return Expansion([p.resolve() for p in files if p.is_file() and p.resolve().is_relative_to(self.root)], glob=True)
