"""The project's files for ``@`` completion and the picker, searched with the fuzzy matcher.

With an engine, the memory system's index is the source: it indexes in a
background thread and ``search_files`` never blocks, returning what is indexed
so far. Without one (the engine failed to start) the files are listed with
``git ls-files`` or a walk, off the event loop, and searched with the same matcher.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

from tui import runtime

log = logging.getLogger(__name__)


def list_project_files(root: Path) -> list[str]:
    """Relative paths of the project's files: tracked plus untracked-not-ignored (blocking)."""
    from core.memory.index import FileIndex

    return sorted(FileIndex(root).build())


class FileSource:
    """Fuzzy search over the project's files; :meth:`load` and :meth:`refresh` block (run them in a thread)."""

    def __init__(self, root: Path, memory_system: Any = None) -> None:
        self.root = root
        self.memory = memory_system if hasattr(memory_system, "search_files") else None
        runtime.tune_memory(self.memory)
        self._own: Any = None
        self._own_lock = threading.Lock()
        self.generation = 0
        """Bumped whenever a listing finishes (the picker redraws its results)."""
        self._listed_at = float("-inf")

    def attach(self, memory_system: Any) -> None:
        """Search the memory system's index from now on (the engine was built after the app started)."""
        if hasattr(memory_system, "search_files"):
            self.memory = memory_system
            runtime.tune_memory(memory_system)

    @property
    def _matcher(self) -> Any:
        # Imported on first use: the matcher needs numpy, which start-up should not wait for.
        # Made once under a lock: the listing thread and the event loop may both ask first,
        # and a second matcher made while the first imports would replace the listed one.
        with self._own_lock:
            if self._own is None:
                from core.memory.fuzzy import FuzzyMatcher

                self._own = FuzzyMatcher(prepare=False)
            return self._own

    def load(self) -> None:
        """Start (or do) the listing."""
        self._listed_at = time.monotonic()
        if self.memory is not None:
            self.memory.start_indexing()
        else:
            self._matcher.update(list_project_files(self.root))
        self.generation += 1

    def refresh(self, *, max_age: float = 0.0) -> tuple[list[str], list[str]]:
        """List again unless the last listing started less than ``max_age`` seconds ago; returns the added and removed paths."""
        now = time.monotonic()
        if now - self._listed_at < max_age:
            return [], []
        self._listed_at = now
        if self.memory is not None:
            added, removed = self.memory.refresh()
        else:
            before = set(self._matcher.paths)
            paths = list_project_files(self.root)
            self._matcher.update(paths)
            added, removed = sorted(set(paths) - before), sorted(before - set(paths))
        self.generation += 1
        return added, removed

    @property
    def count(self) -> int:
        """Files searchable right now (grows while indexing)."""
        matcher = getattr(self.memory, "matcher", None) if self.memory is not None else self._own  # never imports on the loop
        return len(matcher) if matcher is not None else 0

    def search(self, query: str, limit: int) -> list[tuple[str, list[int]]]:
        """The best ``limit`` paths for ``query`` with their matched character positions, best first."""
        try:
            matches = self.memory.search_files(query, limit) if self.memory is not None else self._matcher.search(query, limit)
        except Exception:  # a search failure shows no candidates, never a crash
            log.exception("file search failed")
            return []
        return [(match.path, list(match.positions)) for match in matches]
