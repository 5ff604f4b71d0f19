"""The MemorySystem: the project's file index and relevance matching (SPEC.md section 5).

- :attr:`MemorySystem.index` lists the project's files; it is built in a
  background thread on first use (or by :meth:`MemorySystem.start_indexing`).
- :meth:`MemorySystem.get_relevant_context_for` ranks files lexically for a
  task (file names, directories, top-level symbols, explicit mentions); files
  the user pinned always come first.
- :meth:`MemorySystem.weighted_query` serves the aider tools (SPEC.md
  section 7, Phase 3): the instruction weighs most, recent conversation less,
  and files named in the conversation are found.
- ``determine_relevant_files`` (SPEC.md section 5) asks the model instead: the SPEC's
  :class:`core.compat.MemorySystem` adds it on top of this one.
- :meth:`MemorySystem.search_files` is the picker's fuzzy search.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping, Sequence

from core.memory.fuzzy import FuzzyMatcher, Match
from core.memory.index import FileIndex, language_of
from core.memory.policy import FilePolicy
from core.memory.relevance import Lexicon
from core.memory.types import AssociativeMatchResult, ContextGenerationInput
from core.types import Message

log = logging.getLogger(__name__)

MAX_MATCHES = 10
"""Most files get_relevant_context_for returns (pinned files aside)."""
SYMBOL_FILES = 5_000
"""Files whose top-level symbols are read for relevance (source files, shortest paths first)."""
PUBLISH_GROWTH = 16
"""The picker's matcher is rebuilt while indexing each time the listing grew this many times (the last one completes it)."""
INSTRUCTION_WEIGHT = 3.0
RECENT_MESSAGES = 6
_SYMBOL_LANGUAGES = frozenset({"python", "javascript", "typescript", "go", "rust"})


class MemorySystem:
    """The project's file index and relevance matching.

    Args:
        project_root: The project directory.
        provider: A ProviderAdapter, for the SPEC's ``determine_relevant_files``
            (:class:`core.compat.MemorySystem`); without one it ranks lexically.
        pinned: Absolute or relative paths the user picked into context; they
            head every relevance result. Also settable as ``pinned``.
    """

    def __init__(self, project_root: Path | str, provider: Any = None, pinned: Sequence[str] = ()) -> None:
        self.project_root = Path(project_root).resolve()
        self.provider = provider
        self.pinned: list[str] = list(pinned)
        self.index = FileIndex(self.project_root)
        self.policy = FilePolicy(self.project_root, index=self.index, refresh=self.refresh)
        """The project's one rule for files sent to the model (size, binary, secrets, ignore rules)."""
        self.matcher = FuzzyMatcher(prepare=False)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._lexicon: Lexicon | None = None
        self._lexicon_lock = threading.RLock()
        self._lexicon_generation = -1
        self.build_guard: Callable[[], ContextManager[Any]] = contextlib.nullcontext
        """Wraps the index build; an app that tunes its process may pause the garbage collector here (``tui.runtime``)."""

    # -- the index -----------------------------------------------------------

    def start_indexing(self) -> None:
        """Build the index (and the picker's matcher) in a background thread, once."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._build, name="assistant-tui-index", daemon=True)
            self._thread.start()

    def _build(self) -> None:
        published = 0

        def on_batch(_batch: list[str]) -> None:
            nonlocal published
            # Let the picker search early, re-publishing at 16x sizes (linear total work).
            if len(self.index.paths) >= PUBLISH_GROWTH * published:
                published = len(self.index.paths)
                self.matcher.update(list(self.index.paths), prepare=False)

        try:
            with self.build_guard(), self._lexicon_lock:
                try:
                    self.index.build(on_batch=on_batch)
                    if len(self.matcher) != len(self.index.paths):
                        self.matcher.update(list(self.index.paths), prepare=False)
                finally:
                    self._ready.set()  # searchable in full now; the bitmaps only speed up sparse queries
                self.matcher.prepare()
                self._lexicon_now(wait=False)  # read symbols now, off the caller's path
        except Exception:  # noqa: BLE001 - an index failure must not kill the app
            log.exception("indexing %s failed", self.project_root)

    def ensure_index(self, timeout: float | None = None) -> FileIndex:
        """Start indexing if needed and wait for it to finish (blocking; use a thread in async code)."""
        self.start_indexing()
        self._ready.wait(timeout)
        return self.index

    def refresh(self) -> tuple[list[str], list[str]]:
        """Re-list the files (blocking); returns ``(added, removed)`` relative paths."""
        self.ensure_index()
        added, removed = self.index.refresh()
        if added or removed:
            self.matcher.update(list(self.index.paths))
        return added, removed

    def search_files(self, query: str, limit: int = 50) -> list[Match]:
        """Fuzzy file search for the picker over whatever is indexed so far (never blocks on indexing)."""
        self.start_indexing()
        return self.matcher.search(query, limit)

    # -- lexical relevance -----------------------------------------------------

    def _lexicon_now(self, wait: bool = True) -> Lexicon:
        if wait:
            self.ensure_index()
            with self._lexicon_lock:
                return self._lexicon_now(wait=False)
        index = self.index
        if self._lexicon is None or self._lexicon_generation != index.generation:
            generation = index.generation
            paths = list(index.paths)
            symbols: dict[str, tuple[str, ...]] = {}
            sources = [p for p in paths if _is_source(p)]
            for path in sorted(sources, key=len)[:SYMBOL_FILES]:
                meta = index.metadata(path)
                if meta is not None and meta.symbols:
                    symbols[path] = meta.symbols
            self._lexicon = Lexicon(paths, symbols)
            self._lexicon_generation = generation
        return self._lexicon

    def _absolute(self, path: str) -> str:
        return str(self.project_root / path)

    def _with_pinned(self, matches: list[tuple[str, float]], pinned: Sequence[str] | None) -> list[tuple[str, float]]:
        head: list[tuple[str, float]] = []
        for path in list(pinned if pinned is not None else self.pinned):
            absolute = str(Path(path) if Path(path).is_absolute() else self.project_root / path)
            if absolute not in (p for p, _ in head):
                head.append((absolute, 1.0))
        taken = {p for p, _ in head}
        return head + [(p, r) for p, r in matches if p not in taken]

    def get_relevant_context_for(
        self, input: Mapping[str, Any] | ContextGenerationInput | str, pinned: Sequence[str] | None = None
    ) -> AssociativeMatchResult:
        """Files relevant to a task, best first (SPEC.md section 5).

        Args:
            input: ``{"taskText", "inheritedContext"}``, a ContextGenerationInput,
                or plain text.
            pinned: Files that must come first; defaults to :attr:`pinned`.

        Returns:
            ``context`` (a one-line summary) and ``matches`` of
            ``(absolute path, relevance 0..1)``: pinned files first, then at most
            :data:`MAX_MATCHES` ranked files. Empty when nothing relates.
        """
        texts = _texts_of(input)
        ranked = self._ranked(texts, MAX_MATCHES) if texts else []
        matches = self._with_pinned([(self._absolute(p), r) for p, r in ranked], pinned)
        if matches:
            names = ", ".join(Path(p).name for p, _ in matches[:5])
            more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
            context = f"{len(matches)} relevant file(s): {names}{more}"
        else:
            context = "No project files matched the query."
        return AssociativeMatchResult(context=context, matches=matches)

    def weighted_query(self, instruction: str, recent_messages: Sequence[Message | Mapping[str, Any] | str] = (), limit: int = MAX_MATCHES) -> list[tuple[str, float]]:
        """Files ranked for an instruction (weighted most) and recent conversation.

        Returns ``(absolute path, relevance)`` best first; newer messages weigh more.
        """
        texts: list[tuple[str, float]] = [(instruction, INSTRUCTION_WEIGHT)]
        recent = list(recent_messages)[-RECENT_MESSAGES:]
        for age, message in enumerate(reversed(recent)):
            content = message if isinstance(message, str) else str(message.get("content") or "")
            if content:
                texts.append((content, max(0.4, 1.0 - 0.1 * age)))
        return [(self._absolute(p), r) for p, r in self._ranked(texts, limit)]

    def _ranked(self, texts: list[tuple[str, float]], limit: int) -> list[tuple[str, float]]:
        """The best ``limit`` files for the texts among those the file policy lets be sent.

        Binary, oversized and secret-named files are never suggested; they are judged
        on the index's cached facts (a stat and the file's first bytes), never read whole.
        """
        ranked = self._lexicon_now().rank(texts, limit=limit * 2)
        return [(p, r) for p, r in ranked if self.policy.suggestible(self.index.metadata(p))][:limit]


def _is_source(path: str) -> bool:
    return language_of(path) in _SYMBOL_LANGUAGES


def _texts_of(input: Mapping[str, Any] | ContextGenerationInput | str) -> list[tuple[str, float]]:
    """Weighted texts to rank with, from any accepted input shape."""
    if isinstance(input, str):
        return [(input, 1.0)] if input.strip() else []
    if isinstance(input, ContextGenerationInput):
        texts = [(input.template_description, 1.0)]
        for name, value in input.inputs.items():
            if input.context_relevance.get(name, True):
                texts.append((value if isinstance(value, str) else " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value), 2.0))
        texts.append((input.inherited_context, 0.5))
        texts += [(str(out), 0.5) for out in input.previous_outputs]
        return [(t, w) for t, w in texts if t and t.strip()]
    task = str(input.get("taskText") or input.get("task_text") or "")
    inherited = str(input.get("inheritedContext") or input.get("inherited_context") or "")
    return [(t, w) for t, w in ((task, 1.0), (inherited, 0.5)) if t.strip()]
