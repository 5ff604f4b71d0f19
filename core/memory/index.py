"""The project's file index: which files exist, and cheap facts about each.

The files are those git would show: tracked plus untracked-not-ignored
(``git ls-files --cached --others --exclude-standard``). Outside a git work
tree a directory walk applies every ``.gitignore`` on the way down (never
descending into ``.git``); nothing else is skipped unless ignored.

:meth:`FileIndex.build` is synchronous and meant for a worker thread: it
publishes paths in batches (a callback and a ``generation`` counter), so a
picker can show results while indexing continues. Metadata (size, language,
top-level symbols) is computed lazily per file and cached until the file's
size or modification time changes.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import threading
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Callable, Iterator

import pathspec

from core.gitutil import GitRefused, git_argv, git_env
from core.secrets import scrubbed_env

log = logging.getLogger(__name__)

BATCH_SIZE = 5_000
"""Paths published per batch while indexing."""
STEP = 4_096
"""Paths handled per C call in long loops: no single call holds the GIL for long."""
SYMBOL_BYTES = 200_000
"""Only this much of a file is read to find its top-level symbols."""
GIT_TIMEOUT = 30.0
"""Seconds before a hanging ``git ls-files`` is abandoned for a directory walk."""

BatchCallback = Callable[[list[str]], None]
_HEAD = itemgetter(0)

LANGUAGES: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript", ".go": "go", ".rs": "rust",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".java": "java", ".kt": "kotlin", ".rb": "ruby", ".php": "php", ".cs": "csharp", ".swift": "swift",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".md": "markdown", ".rst": "restructuredtext",
    ".txt": "text", ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".ini": "ini",
    ".cfg": "ini", ".html": "html", ".css": "css", ".scss": "css", ".sql": "sql", ".s": "assembly",
    ".dts": "devicetree", ".dtsi": "devicetree", ".lua": "lua", ".tcss": "css",
}
_NAMED_LANGUAGES = {"makefile": "make", "kconfig": "kconfig", "dockerfile": "docker", "cmakelists.txt": "cmake"}

_SYMBOL_PATTERNS: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"^(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)", re.M),
    "javascript": re.compile(
        r"^(?:export[ \t]+(?:default[ \t]+)?)?(?:async[ \t]+)?(?:function\*?|class|const|let|var)[ \t]+([A-Za-z_$][\w$]*)", re.M
    ),
    "typescript": re.compile(
        r"^(?:export[ \t]+(?:default[ \t]+)?)?(?:declare[ \t]+)?(?:abstract[ \t]+)?(?:async[ \t]+)?"
        r"(?:function\*?|class|const|let|var|interface|type|enum|namespace)[ \t]+([A-Za-z_$][\w$]*)",
        re.M,
    ),
    "go": re.compile(r"^(?:func[ \t]+(?:\([^)]*\)[ \t]*)?|type[ \t]+|var[ \t]+|const[ \t]+)([A-Za-z_]\w*)", re.M),
    "rust": re.compile(
        r"^(?:pub(?:\([^)]*\))?[ \t]+)?(?:async[ \t]+)?(?:unsafe[ \t]+)?"
        r"(?:fn|struct|enum|trait|mod|type|const|static|union|macro_rules!)[ \t]+([A-Za-z_]\w*)",
        re.M,
    ),
}


@dataclass(frozen=True, slots=True)
class FileMetadata:
    """Cheap facts about one indexed file.

    Attributes:
        path: Path relative to the project root, ``/``-separated.
        size: Size in bytes.
        language: Language guessed from the name (``""`` when unknown).
        symbols: Top-level definitions (functions, classes, types) found in
            the first :data:`SYMBOL_BYTES` bytes; empty for other languages.
        binary: The file looks binary (a NUL byte near its start).
        mtime_ns: Modification time the facts were computed at.
    """

    path: str
    size: int
    language: str
    symbols: tuple[str, ...]
    binary: bool
    mtime_ns: int


def language_of(path: str) -> str:
    """The language of a file guessed from its name, or ``""``."""
    name = path.rsplit("/", 1)[-1].lower()
    if name in _NAMED_LANGUAGES:
        return _NAMED_LANGUAGES[name]
    dot = name.rfind(".")
    return LANGUAGES.get(name[dot:], "") if dot > 0 else ""


def top_level_symbols(text: str, language: str) -> tuple[str, ...]:
    """Names defined at the top level of a source text (unique, in order)."""
    pattern = _SYMBOL_PATTERNS.get(language)
    if pattern is None:
        return ()
    return tuple(dict.fromkeys(m.group(1) for m in pattern.finditer(text)))


class FileIndex:
    """The project's files, built off the event loop and refreshed on demand.

    Args:
        project_root: The directory whose files are indexed.

    Attributes:
        root: The resolved project root.
        paths: Relative ``/``-separated paths; grows in batches during
            :meth:`build`, replaced as a whole by :meth:`refresh`.
        generation: Incremented whenever ``paths`` changes.
        complete: True once a build or refresh has finished.
        uses_git: Whether the last build listed files through git.
    """

    def __init__(self, project_root: Path | str) -> None:
        self.root = Path(project_root).resolve()
        self.paths: list[str] = []
        self.generation = 0
        self.complete = False
        self.uses_git = False
        self._members: set[str] = set()
        self._metadata: dict[str, FileMetadata] = {}
        self._deleted: set[str] = set()
        self._git_env: dict[str, str] = {}
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.paths)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and path in self._members

    def build(self, on_batch: BatchCallback | None = None) -> list[str]:
        """List the project's files, publishing them in batches as they are found.

        Args:
            on_batch: Called (in the building thread) with each new batch of paths.

        Returns:
            All paths. Safe to call from a worker thread; concurrent calls wait
            for each other.
        """
        with self._build_lock:
            with self._lock:
                self.paths = []
                self._members = set()
                self.complete = False
                self.generation += 1
            self._deleted = set()
            for batch in self._batches(self._list_files()):
                with self._lock:
                    self.paths.extend(batch)
                    self._members.update(batch)
                    self.generation += 1
                if on_batch is not None:
                    on_batch(batch)
            with self._lock:
                gone = self._deleted & self._members
                if gone:  # tracked files removed from the work tree
                    self.paths = [p for p in self.paths if p not in gone]
                    self._members -= gone
                self.complete = True
                self.generation += 1
            log.debug("indexed %d files under %s (git: %s)", len(self.paths), self.root, self.uses_git)
            return self.paths

    def refresh(self) -> tuple[list[str], list[str]]:
        """List the files again and swap the new list in at once.

        Returns:
            ``(added, removed)`` relative paths.
        """
        with self._build_lock:
            self._deleted = set()
            fresh = [path for chunk in self._list_files() for path in chunk]
            fresh = list(dict.fromkeys(fresh))
            if self._deleted:
                fresh = [p for p in fresh if p not in self._deleted]
            members = set(fresh)
            with self._lock:
                added = [p for p in fresh if p not in self._members]
                removed = [p for p in self.paths if p not in members]
                self.paths = fresh
                self._members = members
                for path in removed:
                    self._metadata.pop(path, None)
                self.complete = True
                self.generation += 1
            return added, removed

    def absolute(self, path: str) -> Path:
        """The absolute path of an indexed (relative) path."""
        return self.root / path

    def relative(self, path: str | Path) -> str | None:
        """The index's relative form of a path (absolute or relative), or None if outside the root."""
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        try:
            return Path(os.path.normpath(candidate)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def metadata(self, path: str) -> FileMetadata | None:
        """Facts about one file (relative path), cached until the file changes; None if unreadable."""
        try:
            st = os.stat(self.root / path)
        except OSError:
            return None
        cached = self._metadata.get(path)
        if cached is not None and cached.mtime_ns == st.st_mtime_ns and cached.size == st.st_size:
            return cached
        language = language_of(path)
        symbols: tuple[str, ...] = ()
        binary = False
        try:
            with open(self.root / path, "rb") as handle:
                head = handle.read(SYMBOL_BYTES if language in _SYMBOL_PATTERNS else 8192)
        except OSError:
            head = b""
        if b"\0" in head[:8192]:
            binary = True
        elif language in _SYMBOL_PATTERNS:
            symbols = top_level_symbols(head.decode("utf-8", "replace"), language)
        meta = FileMetadata(path=path, size=st.st_size, language=language, symbols=symbols, binary=binary, mtime_ns=st.st_mtime_ns)
        self._metadata[path] = meta
        return meta

    # -- listing -------------------------------------------------------------

    @staticmethod
    def _batches(chunks: Iterator[list[str]]) -> Iterator[list[str]]:
        """Batches of :data:`BATCH_SIZE` distinct paths from chunks of paths."""
        batch: list[str] = []
        seen: set[str] = set()
        for chunk in chunks:
            fresh = [path for path in dict.fromkeys(chunk) if path not in seen]
            seen.update(fresh)
            batch += fresh
            while len(batch) >= BATCH_SIZE:
                yield batch[:BATCH_SIZE]
                batch = batch[BATCH_SIZE:]
        if batch:
            yield batch

    def _list_files(self) -> Iterator[list[str]]:
        """The project's paths, a chunk at a time (duplicates possible)."""
        listed = self._git_files()
        if listed is not None:
            self.uses_git = True
            return listed
        self.uses_git = False
        return _chunked(walk_files(self.root))

    def _git(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            git_argv("ls-files", "-z", *args), cwd=self.root, env=self._git_env, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        )

    def _git_files(self) -> Iterator[list[str]] | None:
        """Paths from git, streamed; None when the root is not in a git work tree.

        Tracked files come first (git lists them from its index in a few
        milliseconds); untracked-not-ignored files follow once git has walked
        the tree. Files deleted from the work tree but still tracked are
        dropped at the end (see :meth:`build`).
        """
        try:
            self._git_env = git_env(self.root, scrubbed_env(), global_config=False)
            probe = subprocess.run(
                git_argv("rev-parse", "--is-inside-work-tree"), cwd=self.root, env=self._git_env, capture_output=True,
                text=True, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError, GitRefused):
            return None
        if probe.returncode != 0 or probe.stdout.strip() != "true":
            return None
        return self._stream_git()

    def _stream_git(self) -> Iterator[list[str]]:
        # git walks the tree for untracked files in parallel; meanwhile the tracked files are
        # published, then checked for deletion here (one listing per directory, see _gone).
        others = self._git("--others", "--exclude-standard")
        try:
            tracked: list[str] = []
            for chunk in _read_chunks(self._git("--cached")):
                tracked += chunk
                yield chunk
            self._deleted = _gone(self.root, tracked)
            del tracked
            yield from _read_chunks(others)
        finally:
            if others.poll() is None:
                others.kill()
                others.wait()


def _chunked(paths: Iterator[str], size: int = 1_024) -> Iterator[list[str]]:
    chunk: list[str] = []
    for path in paths:
        chunk.append(path)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _gone(root: Path, tracked: list[str]) -> set[str]:
    """The tracked paths whose file is gone from the work tree: what ``git ls-files --deleted`` lists.

    git runs one ``lstat`` per tracked file (80,000 calls, as much CPU as its walk for
    untracked files); this lists each directory once and checks the paths against
    the listings, in C steps (a Python step per directory, not per file, so the event
    loop keeps the GIL). A path no listing holds is confirmed with ``lstat`` (git's
    test), so file systems that list another spelling (case-insensitive,
    normalising) agree with git.
    """
    directories: set[str] = set()
    for first in range(0, len(tracked), STEP):
        directories.update(map(_HEAD, map(str.rpartition, tracked[first : first + STEP], repeat("/"))))
    present: set[str] = set()
    for directory in directories:
        try:
            names = os.listdir(os.path.join(root, directory) if directory else root)
        except OSError:
            continue
        present.update(map(f"{directory}/".__add__, names) if directory else names)
    missing: list[str] = []
    for first in range(0, len(tracked), STEP):
        missing += set(tracked[first : first + STEP]).difference(present)
    while present:  # freed a piece at a time: 80,000 names at once are one C call of ~5 ms
        present.pop()
    return {path for path in missing if not os.path.lexists(os.path.join(root, path))}


def _read_chunks(process: subprocess.Popen[bytes]) -> Iterator[list[str]]:
    """NUL-separated paths from a git process's output, streamed a chunk (64 KiB) at a time."""
    assert process.stdout is not None
    pending = b""
    try:
        while chunk := process.stdout.read(1 << 16):
            complete, separator, pending = (pending + chunk).rpartition(b"\0")
            if separator:  # a NUL is never inside a UTF-8 sequence: decode the whole run at once
                yield complete.decode("utf-8", "surrogateescape").split("\0")
        if pending:
            yield [pending.decode("utf-8", "surrogateescape")]
    finally:
        process.stdout.close()
        try:
            process.wait(timeout=GIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.returncode:
        log.warning("%s exited with %s", " ".join(map(str, process.args)), process.returncode)  # type: ignore[arg-type]


def _load_gitignore(directory: str) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    return spec if len(spec) else None


def _ignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str, is_dir: bool) -> bool:
    """Whether ``rel`` is ignored; deeper .gitignore files override shallower ones."""
    verdict = False
    for base, spec in specs:
        local = rel[len(base):] if base else rel
        result = spec.check_file(local + "/" if is_dir else local)
        if result.include is not None:
            verdict = result.include
    return verdict


def ignored_by_gitignore_files(rel: str, root: Path) -> bool:
    """Whether the ``.gitignore`` files on the way down to ``rel`` ignore it (outside git).

    The same rules :func:`walk_files` applies: a file is ignored when it, or any
    directory above it, is matched; deeper ``.gitignore`` files override shallower ones.
    """
    parts = rel.split("/")
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    for depth in range(len(parts)):
        base = "".join(f"{part}/" for part in parts[:depth])
        spec = _load_gitignore(os.path.join(root, base) if base else str(root))
        if spec is not None:
            specs.append((base, spec))
        current = base + parts[depth]
        is_dir = depth < len(parts) - 1
        if specs and _ignored(specs, current, is_dir):
            return True
    return False


def walk_files(root: Path) -> Iterator[str]:
    """Files under ``root`` (relative, ``/``-separated) honouring every ``.gitignore``.

    ``.git`` directories are never entered; symlinked directories are not
    followed (a symlink is listed as a file).
    """
    stack: list[tuple[str, list[tuple[str, pathspec.GitIgnoreSpec]]]] = [("", [])]
    while stack:
        rel_dir, specs = stack.pop()
        abs_dir = os.path.join(root, rel_dir) if rel_dir else str(root)
        spec = _load_gitignore(abs_dir)
        if spec is not None:
            specs = specs + [(rel_dir, spec)]
        try:
            entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
        except OSError as exc:
            log.debug("cannot list %s: %s", abs_dir, exc)
            continue
        subdirs: list[str] = []
        for entry in entries:
            rel = f"{rel_dir}{entry.name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name == ".git" or (specs and _ignored(specs, rel, True)):
                    continue
                subdirs.append(rel + "/")
            elif not (specs and _ignored(specs, rel, False)):
                yield rel
        stack.extend((d, specs) for d in reversed(subdirs))
