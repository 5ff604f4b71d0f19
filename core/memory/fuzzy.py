"""A fast fuzzy subsequence matcher over file paths, for the file picker.

Typing must stay instant on 80,000 paths, so the matcher never scores every
path in Python. Instead:

1. Paths are kept sorted by length. Three lowercase texts are joined into one
   string each: the file names, the distinct directories (a twentieth of the
   size of all paths in a kernel-like tree) and the whole paths. Compiled
   regular expressions scan them in C, shortest paths first.
2. A query becomes a ladder of *tiers*, strongest first: the file name starts
   with the query, has it at a word start, contains it; a directory has it at
   a word start; the file name starts with its first letter and has the rest
   in order; a directory contains it; the file name, a directory, the whole
   path have it in order. Tiers are scanned lazily until enough candidates
   are gathered, so a dense query (``e``) stops after a few hundred lines and
   a sparse one finds its few lines at C speed.
3. A per-character presence bitmap (numpy) narrows what a sparse tier scans to
   the paths holding every query character. Once a query's full match set is
   known (worked out from those paths when they are few enough), a query
   extending it scans only its matches (:mod:`core.memory.subset`): the same
   lines in the same order, so the same results as a fresh search.
4. The gathered candidates (a few hundred) get the exact score of
   :mod:`core.memory.scoring`, which also yields the matched positions.

Approximation, by design: the whole-path tier (matches spanning directory and
file name) scans at most :data:`PATH_SCAN_BUDGET` characters, shortest paths
first, when the query's characters are all common; file-name and directory
tiers are always complete.
"""

from __future__ import annotations

import heapq
import logging
import re
import threading
from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np

from core.memory.fields import MARK, MARK_SEPARATORS, SEPARATORS, STEP, Field, in_order
from core.memory.memo import ScanMemo
from core.memory.scoring import score_path
from core.memory.subset import SEED_CHARS, Subset, matching

log = logging.getLogger(__name__)

CANDIDATES = 150
"""How many candidates, gathered tier by tier, get the exact score."""
PATH_SCAN_BUDGET = 600_000
"""Most characters the whole-path tier scans per keystroke."""
PER_DIRECTORY = 12
"""Most files (the shortest) a matching directory contributes."""
_MINI_FRACTION = 0.15
"""Below this share of all paths, a tier scans only the narrowed paths."""
_KNOWN = 16
"""Most match sets kept for the prefixes of what is being typed (Backspace finds them again)."""
_DENSE = 2_000
"""A literal seen this often in file names is dense: its narrower tiers get their own scans."""
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int32)


@dataclass(frozen=True, slots=True)
class Match:
    """One matching path: its score and the indices of the matched characters."""

    path: str
    score: float
    positions: tuple[int, ...]


def _presence(texts: list[str]) -> np.ndarray | None:
    """Per byte value, which texts contain it (numpy packed bits), or None for no texts.

    Built :data:`STEP` texts at a time: each numpy call is short, so the event
    loop gets the GIL back while an index of 80,000 paths is prepared in a thread.
    """
    if not texts:
        return None
    packed = np.zeros((256, (len(texts) + 7) // 8), dtype=np.uint8)
    for first in range(0, len(texts), STEP):
        chunk = texts[first : first + STEP]
        data = np.frombuffer("".join(chunk).encode("utf-8", "surrogatepass"), dtype=np.uint8)
        if len(data) == sum(map(len, chunk)):  # ASCII: a text's bytes are its characters
            sizes = np.fromiter(map(len, chunk), dtype=np.int64, count=len(chunk))
        else:
            sizes = np.fromiter((len(t.encode("utf-8", "surrogatepass")) for t in chunk), dtype=np.int64, count=len(chunk))
        table = np.zeros((256, len(chunk)), dtype=bool)
        table[data, np.repeat(np.arange(len(chunk), dtype=np.int32), sizes)] = True
        packed[:, first // 8 : (first + len(chunk) + 7) // 8] = np.packbits(table, axis=1)
    return packed


def _unique_by_length(paths: Iterable[str]) -> list[str]:
    """The distinct non-empty paths, shortest first (stable), in steps that never hold the GIL long.

    One ``sorted(..., key=len)`` of 80,000 paths is a single C call of 15-30 ms, during
    which the event loop cannot run; bucketing by length is a Python loop the
    interpreter interrupts every few milliseconds.
    """
    items = paths if isinstance(paths, list) else list(paths)
    unique: dict[str, None] = {}
    for first in range(0, len(items), STEP):
        unique.update(dict.fromkeys(items[first : first + STEP]))
    unique.pop("", None)
    by_length: dict[int, list[str]] = {}
    for path in unique:
        bucket = by_length.get(len(path))
        if bucket is None:
            by_length[len(path)] = [path]
        else:
            bucket.append(path)
    ordered: list[str] = []
    for length in sorted(by_length):
        ordered += by_length[length]
    return ordered


def _lower(text: str) -> str:
    low = text.lower()
    if len(low) == len(text):
        return low
    # Keep indices aligned with the original when lowering changes a length (e.g. "İ").
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


class _Corpus:
    """Everything derived from one list of paths; read-only once built."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths: list[str] = _unique_by_length(paths)
        self.base_start: list[int] = [p.rfind("/") + 1 for p in self.paths]
        low = [p.lower() for p in self.paths]
        if not all(map(str.isascii, self.paths)) and sum(map(len, low)) != sum(map(len, self.paths)):
            low = [_lower(p) for p in self.paths]
        self.low = low
        self.base = Field.build([t[b:] for t, b in zip(low, self.base_start)])
        dir_files: dict[str, list[int]] = {}
        for index, (text, b) in enumerate(zip(low, self.base_start)):
            if b:
                dir_files.setdefault(text[:b], []).append(index)
        dirs = sorted(dir_files, key=len)
        self.dirs = Field.build(dirs)
        self.dir_files: list[list[int]] = [dir_files[d] for d in dirs]
        self.dir_of: list[int] = [-1] * len(low)
        """Each path's directory (its line in ``dirs``), -1 at the top."""
        for line, files in enumerate(self.dir_files):
            for index in files:
                self.dir_of[index] = line
        self.path = Field.build(low)
        # Word starts marked by one character, so "a word starts with X" is a literal search.
        self.base_words = self.base.blob.translate(MARK_SEPARATORS)
        self.dir_words = Field.build([MARK + d.translate(MARK_SEPARATORS) for d in dirs])
        self.path_ids: list[int] | None = None
        self.dir_ids: list[int] | None = None
        self.path_len: np.ndarray | None = None
        self._narrowed: dict[str, tuple[tuple[str, frozenset[int]], tuple[Field, list[int] | None]]] = {}
        self._lock = threading.Lock()

    def prepare(self) -> None:
        """Build the presence bitmaps (about 0.1 s for 80,000 paths)."""
        with self._lock:
            if self.path.presence is None:
                self.path_len = np.fromiter(map(len, self.low), dtype=np.int64, count=len(self.low))
                self.base.presence = _presence(self.base.texts)
                self.path.presence = _presence(self.path.texts)

    def field(self, kind: str) -> Field:
        """The lowercase field of that kind: ``base``, ``dirs`` or ``path``."""
        return {"base": self.base, "dirs": self.dirs, "path": self.path}[kind]

    def _holding(self, kind: str, query: str) -> tuple[list[int] | None, int]:
        """The texts holding every byte of ``query`` (ascending, None without bitmaps), and how many there are.

        The list is made only when they are at most :data:`_MINI_FRACTION` of all.
        """
        presence = self.field(kind).presence
        if presence is None:
            return None, len(self.paths)
        needed = sorted(set(query.lower().encode("utf-8", "surrogatepass")))
        bits = np.bitwise_and.reduce(presence[needed], axis=0)  # type: ignore[index]
        count = int(_POPCOUNT[bits].sum())
        if count > _MINI_FRACTION * len(self.paths):
            return None, count
        return np.flatnonzero(np.unpackbits(bits, count=len(self.paths))).tolist(), count

    def narrowed(self, kind: str, query: str) -> tuple[Field, list[int] | None]:
        """The field a sparse tier scans: whole, or only texts holding every query byte.

        Returns the field and, when narrowed, its line -> path index map. The last
        narrowed field of each kind is kept: the next key often needs the same one
        (a character already in the query narrows nothing more).
        """
        key = (kind, frozenset(query.lower().encode("utf-8", "surrogatepass")))
        kept = self._narrowed.get(kind)
        if kept is not None and kept[0] == key:
            return kept[1]
        indices, _ = self._holding(kind, query)
        if indices is None:
            return self.field(kind), None
        texts = self.field(kind).texts
        result = Field.build([texts[i] for i in indices]), indices
        self._narrowed[kind] = (key, result)
        return result

    def path_scan(self, query: str, budget: int) -> tuple[Field, list[int] | None, int | None, bool]:
        """The whole-path tier's field and map, where its scan ends, and whether ``budget`` cut it."""
        field, indices = self.narrowed("path", query)
        cut = len(field.blob) > budget
        return field, indices, budget if cut else None, cut

    def budget_cut(self, query: str, budget: int) -> tuple[bool, int, int]:
        """Where :meth:`path_scan`'s budget cuts: whether it does, the last path it sees, how many characters of it."""
        indices, _ = self._holding("path", query)
        if indices is None:
            starts = self.path.starts
            if len(self.path.blob) <= budget:
                return False, -1, 0
            last = bisect_right(starts, budget - 1) - 1
            return True, last, budget - starts[last]
        if not indices:
            return False, -1, 0
        assert self.path_len is not None
        ends = np.cumsum(self.path_len[indices] + 1)  # the narrowed blob is "\n" + each text and its newline
        if 1 + int(ends[-1]) <= budget:
            return False, -1, 0
        starts = np.concatenate(([1], 1 + ends[:-1]))
        last = int(np.searchsorted(starts, budget, side="left")) - 1  # the last text starting before the budget
        return True, indices[last], budget - int(starts[last])

    def seed(self, query: str) -> list[int] | None:
        """The paths holding every byte of ``query`` when they are short enough together to scan each time (else None)."""
        indices, count = self._holding("path", query)
        if indices is None or self.path_len is None or int(self.path_len[indices].sum()) > SEED_CHARS:
            return None
        return indices


class FuzzyMatcher:
    """Fuzzy file-path search, fast enough to run on every keystroke.

    Args:
        paths: Repository-relative paths (``/``-separated). Duplicates are dropped.
        prepare: Build the narrowing bitmaps now (see :meth:`prepare`).

    :meth:`update` may run in a worker thread while :meth:`search` runs on the
    event loop; a search uses the corpus it started with.
    """

    def __init__(self, paths: Iterable[str] = (), *, prepare: bool = True) -> None:
        self._corpus = _Corpus(paths)
        if prepare:
            self._corpus.prepare()
        self._known: list[tuple[_Corpus, str, list[int]]] = []
        self._memo = ScanMemo()

    def __len__(self) -> int:
        return len(self._corpus.paths)

    @property
    def paths(self) -> list[str]:
        """The current paths, shortest first."""
        return self._corpus.paths

    def update(self, paths: Iterable[str], *, prepare: bool = True) -> None:
        """Replace the searched paths (e.g. after the file index changed).

        Args:
            paths: The new paths.
            prepare: Also build the narrowing bitmaps now (about 0.1 s for
                80,000 paths); otherwise call :meth:`prepare` later.
        """
        corpus = _Corpus(paths)
        if prepare:
            corpus.prepare()
        self._corpus = corpus
        self._known = []
        self._memo.clear()

    def prepare(self) -> None:
        """Build the narrowing bitmaps ahead of the first sparse query."""
        self._corpus.prepare()

    def search(self, query: str, limit: int = 50) -> list[Match]:
        """The best ``limit`` matches for ``query``, best first.

        Args:
            query: What the user typed; whitespace is ignored. Case-insensitive
                unless it contains an uppercase letter (smart case).
            limit: Most matches to return.

        Returns:
            Matches with score and matched character positions. An empty query
            returns the shortest paths (score 0, no positions).
        """
        corpus = self._corpus
        query = "".join(query.split())
        if not query:
            return [Match(p, 0.0, ()) for p in corpus.paths[:limit]]
        case_sensitive = query != query.lower()
        candidates = _gather(self._view(corpus, query.lower()), query.lower(), max(CANDIDATES, limit * 2), self._memo)
        scored: list[Match] = []
        for index in candidates:
            path = corpus.paths[index]
            result = score_path(path, corpus.base_start[index], query, case_sensitive)
            if result is not None:
                scored.append(Match(path, result[0], result[1]))
        return heapq.nlargest(limit, scored, key=lambda m: (m.score, -len(m.path)))

    def _view(self, corpus: _Corpus, query: str) -> _Corpus | Subset:
        """What to scan for the lowercase ``query``: only its matches when they can be known cheaply, else everything.

        They are known from the matches of a prefix typed before (each character typed
        narrows the last set), or worked out from the paths holding all its characters
        when those are few. Kept per corpus: a new listing starts afresh.
        """
        known = [entry for entry in self._known if entry[0] is corpus and query.startswith(entry[1])]
        if known:
            _, prefix, matches = max(known, key=lambda entry: len(entry[1]))
            ids = matches if prefix == query else matching(corpus, matches, query)
        elif (seed := corpus.seed(query)) is not None:
            ids = matching(corpus, seed, query)
        else:
            self._known = []
            return corpus
        if not any(entry[1] == query for entry in known):
            known.append((corpus, query, ids))
        self._known = known[-_KNOWN:]
        return Subset(corpus, ids)


def _gather(view: _Corpus | Subset, query: str, wanted: int, memo: ScanMemo | None = None) -> list[int]:
    """Candidate path indices, tier by tier, for a lowercase query.

    ``view`` is the whole corpus or a :class:`Subset` holding every path that matches
    the query: both give the same candidates in the same order. ``memo`` keeps the
    whole corpus's long scans for the next, longer query.
    """
    corpus = view if isinstance(view, _Corpus) else view.corpus
    if not isinstance(view, _Corpus):
        memo = None  # a subset's scans are short
    seen: dict[int, None] = {}
    narrowed: dict[str, tuple[Field, list[int] | None]] = {}
    esc = [re.escape(c) for c in query]
    lit = "".join(esc)
    subsequence = esc[0] + "".join(f"[^\\n{e}]*+{e}" for e in esc[1:]) + "[^\\n]*+"
    whole_line = in_order(query)  # the same lines as ``subsequence``, read once each: for long lines
    letters = frozenset(query.encode("utf-8", "surrogatepass"))

    def take(indices: Iterable[int]) -> bool:
        for index in indices:
            seen.setdefault(index)
            if len(seen) >= wanted:
                return True
        return False

    def scan(kind: str, pattern: str, test: str, tier: str) -> Iterator[int]:
        """The paths whose ``kind`` text matches, from the narrowed field (lazily: nothing runs before the tier does)."""
        if kind not in narrowed:
            narrowed[kind] = view.narrowed(kind, query)
        field, index_map = narrowed[kind]

        def read() -> Iterator[int]:
            for line in field.lines(pattern):
                yield index_map[line] if index_map is not None else line

        if memo is None:
            yield from read()
        else:
            region = (corpus, kind, letters if index_map is not None else None)
            yield from memo.lines(tier, region, query, read, test, corpus.field(kind).texts.__getitem__)

    def dir_lines(field: Field, pattern: str) -> Iterator[int]:
        """The directories (their corpus lines) whose text in ``field`` matches."""
        lines = field.lines(pattern)
        return lines if view.dir_ids is None else map(view.dir_ids.__getitem__, lines)

    def dirs_in_order() -> Iterator[int]:
        if memo is None:
            return dir_lines(view.dirs, whole_line)
        return memo.lines("dirs", (corpus, "dirs"), query, lambda: dir_lines(view.dirs, whole_line), whole_line, corpus.dirs.texts.__getitem__)

    def from_dirs(lines: Iterable[int]) -> Iterator[int]:
        for line in lines:
            yield from corpus.dir_files[line][:PER_DIRECTORY]

    if "/" not in query:
        word_lit = re.escape(MARK + query.translate(MARK_SEPARATORS))
        ladder: list[Iterable[int]] = [
            *_name_tiers(view, query, lit, word_lit),
            from_dirs(dir_lines(view.dir_words, word_lit)),  # a directory has it at a word start
            scan("base", f"\\n{subsequence}", f"\\n{subsequence}", "name starts"),  # the file name starts with its first letter, the rest in order
            from_dirs(dir_lines(view.dirs, lit)),  # a directory contains it
            scan("base", subsequence, whole_line, "name"),  # the file name has it in order
            from_dirs(dirs_in_order()),  # a directory has it in order
        ]
    else:
        head, _, tail = query.rpartition("/")
        ladder = [
            _across_slash(corpus, dir_lines(view.dirs, re.escape(head + "/") + "\\n"), tail),  # the directory ends with the part before the last "/" ...
            from_dirs(dir_lines(view.dirs, lit)),  # a directory contains it
        ]
    for tier in ladder:
        if take(tier):
            return list(seen)
    # The path has it in order, spanning directories and file name.
    field, index_map, endpos, _ = view.path_scan(query, PATH_SCAN_BUDGET)

    def read() -> Iterator[int]:
        lines = field.lines(whole_line, endpos=endpos)
        return lines if index_map is None else map(index_map.__getitem__, lines)

    if memo is None:
        take(read())
        return list(seen)
    last, visible = -1, 0
    if endpos is not None:  # the scan sees only the start of its last path
        line = bisect_right(field.starts, endpos - 1) - 1
        last, visible = (index_map[line] if index_map is not None else line), endpos - field.starts[line]
    low = corpus.low

    def text(index: int) -> str:
        return low[index][:visible] if index == last else low[index]

    region = (corpus, "path", endpos, letters if index_map is not None else None)
    take(memo.lines("path", region, query, read, whole_line, text))
    return list(seen)


def _across_slash(corpus: _Corpus, dirs: Iterable[int], tail: str) -> Iterator[int]:
    """Paths in ``dirs`` (those ending with the query's part before its last ``/``) whose file name starts with ``tail``."""
    for line in dirs:
        files = corpus.dir_files[line]
        if not tail:
            yield from files[:PER_DIRECTORY]
            continue
        base = corpus.base.texts
        yield from (i for i in files if base[i].startswith(tail))


def _name_tiers(view: _Corpus | Subset, query: str, lit: str, word_lit: str) -> list[Iterable[int]]:
    """File names that start with the query, have it at a word start, contain it (as path indices).

    One literal scan finds and classifies every occurrence. When the literal
    is dense, classification stops early and the first two tiers continue
    with their own scans, so they stay complete.
    """
    blob = view.base.blob
    starts = view.base.starts
    best: dict[int, int] = {}
    stop = 0
    for count, match in enumerate(re.finditer(lit, blob), 1):
        at = match.start()
        before = blob[at - 1]
        rank = 0 if before == "\n" else 1 if before in SEPARATORS else 2
        line = bisect_right(starts, at) - 1
        if rank < best.get(line, 3):
            best[line] = rank
        if count >= _DENSE:
            stop = match.end()
            break
    ids = view.path_ids
    tiers: list[list[int]] = [[], [], []]
    for line, rank in best.items():
        tiers[rank].append(line if ids is None else ids[line])
    if not stop:
        return tiers  # type: ignore[return-value]
    words = Field(texts=view.base.texts, blob=view.base_words, starts=starts)
    rest = [view.base.lines(f"\\n{lit}", pos=stop), words.lines(word_lit, pos=stop)]
    if ids is not None:
        rest = [map(ids.__getitem__, lines) for lines in rest]  # type: ignore[misc]
    return [tiers[0], rest[0], tiers[1], rest[1], tiers[2]]
