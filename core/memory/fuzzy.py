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
   the paths holding every query character. When a query extends the previous
   one whose full match set was small, only those paths are scored.
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
from itertools import accumulate
from typing import Iterable, Iterator

import numpy as np

from core.memory.scoring import score_path

log = logging.getLogger(__name__)

CANDIDATES = 150
"""How many candidates, gathered tier by tier, get the exact score."""
PATH_SCAN_BUDGET = 600_000
"""Most characters the whole-path tier scans per keystroke."""
PER_DIRECTORY = 12
"""Most files (the shortest) a matching directory contributes."""
_MINI_FRACTION = 0.15
"""Below this share of all paths, a tier scans only the narrowed paths."""
_SEPARATORS = "_-. "
_MARK = "\x1f"
_MARK_SEPARATORS = str.maketrans({c: _MARK for c in _SEPARATORS + "/"})
STEP = 4_096
"""Paths handled per step of a build (a multiple of 8): no single C call holds the GIL long."""
_DENSE = 2_000
"""A literal seen this often in file names is dense: its narrower tiers get their own scans."""
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int32)


@dataclass(frozen=True, slots=True)
class Match:
    """One matching path: its score and the indices of the matched characters."""

    path: str
    score: float
    positions: tuple[int, ...]


@dataclass(slots=True)
class _Field:
    """Texts joined as ``"\\n" + "\\n".join(texts) + "\\n"``; ``starts[i]`` is where text i begins."""

    texts: list[str]
    blob: str
    starts: list[int]
    presence: object | None = None
    """Packed numpy bits: row b says which texts contain the byte b."""

    @classmethod
    def build(cls, texts: list[str]) -> _Field:
        starts: list[int] = []
        at = 1
        for first in range(0, len(texts), STEP):  # a step at a time: no single C call holds the GIL long
            step = list(accumulate(map((1).__add__, map(len, texts[first : first + STEP])), initial=at))
            at = step.pop()
            starts += step
        pieces = ["\n".join(texts[first : first + STEP]) for first in range(0, len(texts), STEP)]
        return cls(texts=texts, blob="\n".join(["", *pieces, ""]) if texts else "\n\n", starts=starts)

    def lines(self, pattern: str, pos: int = 0, endpos: int | None = None) -> Iterator[int]:
        """Indices of the texts matching ``pattern`` within ``blob[pos:endpos]``, in order, lazily."""
        starts = self.starts
        end = len(self.blob) if endpos is None else min(endpos, len(self.blob))
        for match in re.compile(pattern).finditer(self.blob, pos, end):
            yield bisect_right(starts, match.end() - 1) - 1


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
        self.base = _Field.build([t[b:] for t, b in zip(low, self.base_start)])
        dir_files: dict[str, list[int]] = {}
        for index, (text, b) in enumerate(zip(low, self.base_start)):
            if b:
                dir_files.setdefault(text[:b], []).append(index)
        dirs = sorted(dir_files, key=len)
        self.dirs = _Field.build(dirs)
        self.dir_files: list[list[int]] = [dir_files[d] for d in dirs]
        self.path = _Field.build(low)
        # Word starts marked by one character, so "a word starts with X" is a literal search.
        self.base_words = self.base.blob.translate(_MARK_SEPARATORS)
        self.dir_words = _Field.build([_MARK + d.translate(_MARK_SEPARATORS) for d in dirs])
        self._lock = threading.Lock()

    def prepare(self) -> None:
        """Build the presence bitmaps (about 0.1 s for 80,000 paths)."""
        with self._lock:
            if self.path.presence is None:
                self.base.presence = _presence(self.base.texts)
                self.path.presence = _presence(self.path.texts)

    def field(self, kind: str) -> _Field:
        """The lowercase field of that kind: ``base``, ``dirs`` or ``path``."""
        return {"base": self.base, "dirs": self.dirs, "path": self.path}[kind]

    def narrowed(self, kind: str, query: str) -> tuple[_Field, list[int] | None]:
        """The field a sparse tier scans: whole, or only texts holding every query byte.

        Returns the field and, when narrowed, its line -> path index map.
        """
        full = self.field(kind)
        if full.presence is None:
            return full, None
        needed = sorted(set(query.lower().encode("utf-8", "surrogatepass")))
        bits = np.bitwise_and.reduce(full.presence[needed], axis=0)  # type: ignore[index]
        if int(_POPCOUNT[bits].sum()) > _MINI_FRACTION * len(self.paths):
            return full, None
        indices = np.flatnonzero(np.unpackbits(bits, count=len(self.paths))).tolist()
        texts = full.texts
        return _Field.build([texts[i] for i in indices]), indices


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
        self._last: tuple[_Corpus, str, bool, list[int]] | None = None

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
        self._last = None

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
        last = self._last
        if last is not None and last[0] is corpus and last[2] == case_sensitive and query.startswith(last[1]):
            candidates, complete = last[3], True  # narrow the previous query's complete match set
        else:
            candidates, complete = _gather(corpus, query.lower(), max(CANDIDATES, limit * 2))
        scored: list[Match] = []
        survivors: list[int] = []
        for index in candidates:
            path = corpus.paths[index]
            result = score_path(path, corpus.base_start[index], query, case_sensitive)
            if result is not None:
                survivors.append(index)
                scored.append(Match(path, result[0], result[1]))
        self._last = (corpus, query, case_sensitive, survivors) if complete else None
        return heapq.nlargest(limit, scored, key=lambda m: (m.score, -len(m.path)))


def _gather(corpus: _Corpus, query: str, wanted: int) -> tuple[list[int], bool]:
    """Candidate path indices, tier by tier, for a lowercase query.

    Returns:
        The candidates, and whether they are every path matching the query
        (then a longer query only needs to look at them).
    """
    seen: dict[int, None] = {}
    narrowed: dict[str, tuple[_Field, list[int] | None]] = {}
    esc = [re.escape(c) for c in query]
    lit = "".join(esc)
    subsequence = esc[0] + "".join(f"[^\\n{e}]*+{e}" for e in esc[1:]) + "[^\\n]*+"

    def take(indices: Iterable[int]) -> bool:
        for index in indices:
            seen.setdefault(index)
            if len(seen) >= wanted:
                return True
        return False

    def scan(kind: str, pattern: str, endpos: int | None = None) -> Iterator[int]:
        if kind not in narrowed:
            narrowed[kind] = corpus.narrowed(kind, query)
        field, index_map = narrowed[kind]
        for line in field.lines(pattern, endpos=endpos):
            yield index_map[line] if index_map is not None else line

    def from_dirs(lines: Iterable[int]) -> Iterator[int]:
        for line in lines:
            yield from corpus.dir_files[line][:PER_DIRECTORY]

    if "/" not in query:
        word_lit = re.escape(_MARK + query.translate(_MARK_SEPARATORS))
        ladder: list[Iterable[int]] = [
            *_name_tiers(corpus, query, lit, word_lit),
            from_dirs(corpus.dir_words.lines(word_lit)),  # a directory has it at a word start
            scan("base", f"\\n{subsequence}"),  # the file name starts with its first letter, the rest in order
            from_dirs(corpus.dirs.lines(lit)),  # a directory contains it
            scan("base", subsequence),  # the file name has it in order
            from_dirs(corpus.dirs.lines(subsequence)),  # a directory has it in order
        ]
    else:
        head, _, tail = query.rpartition("/")
        ladder = [
            _across_slash(corpus, head + "/", tail),  # the directory ends with the part before the last "/" ...
            from_dirs(corpus.dirs.lines(lit)),  # a directory contains it
        ]
    for tier in ladder:
        if take(tier):
            return list(seen), False
    # The path has it in order, spanning directories and file name.
    if "path" not in narrowed:
        narrowed["path"] = corpus.narrowed("path", query)
    cut = len(narrowed["path"][0].blob) > PATH_SCAN_BUDGET
    if take(scan("path", subsequence, PATH_SCAN_BUDGET if cut else None)):
        return list(seen), False
    return list(seen), not cut


def _across_slash(corpus: _Corpus, head: str, tail: str) -> Iterator[int]:
    """Paths containing ``head + tail`` where the last ``/`` of the query is the one before the file name."""
    for line in corpus.dirs.lines(re.escape(head) + "\\n"):
        files = corpus.dir_files[line]
        if not tail:
            yield from files[:PER_DIRECTORY]
            continue
        base = corpus.base.texts
        yield from (i for i in files if base[i].startswith(tail))


def _name_tiers(corpus: _Corpus, query: str, lit: str, word_lit: str) -> list[Iterable[int]]:
    """File names that start with the query, have it at a word start, contain it.

    One literal scan finds and classifies every occurrence. When the literal
    is dense, classification stops early and the first two tiers continue
    with their own scans, so they stay complete.
    """
    blob = corpus.base.blob
    starts = corpus.base.starts
    best: dict[int, int] = {}
    stop = 0
    for count, match in enumerate(re.finditer(lit, blob), 1):
        at = match.start()
        before = blob[at - 1]
        rank = 0 if before == "\n" else 1 if before in _SEPARATORS else 2
        line = bisect_right(starts, at) - 1
        if rank < best.get(line, 3):
            best[line] = rank
        if count >= _DENSE:
            stop = match.end()
            break
    tiers: list[list[int]] = [[], [], []]
    for line, rank in best.items():
        tiers[rank].append(line)
    if not stop:
        return tiers  # type: ignore[return-value]
    words = _Field(texts=corpus.base.texts, blob=corpus.base_words, starts=starts)
    return [
        tiers[0],
        corpus.base.lines(f"\\n{lit}", pos=stop),
        tiers[1],
        words.lines(word_lit, pos=stop),
        tiers[2],
    ]
