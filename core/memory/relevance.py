"""Lexical relevance: which project files a piece of text is about.

Each file is described by the words of its file name, of its directories and
of its top-level symbols, with identifiers split at ``_ - . /`` and camelCase
humps (``getUserAuth`` -> get, user, auth). A query's words are weighted by
rarity (idf) and by where they hit: the file name counts most, then symbols,
then directories. A file named in the text (``auth.py``, ``core/auth.py``)
gets a strong boost, so explicit mentions always come first.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

NAME_WEIGHT = 3.0
SYMBOL_WEIGHT = 1.5
DIR_WEIGHT = 1.0
EXTENSION_WEIGHT = 0.5
MIN_RELEVANCE = 0.15
"""Ranked files below this relevance are left out."""
STEM_BONUS = 2.0
"""Extra weight when a query word is a file's whole stem (``auth`` for ``auth.py``)."""
MENTION_SCORE = 12.0
"""Score of a file the text names explicitly, times the text's weight (on top of its name words)."""

STOPWORDS = frozenset(
    """a an and are as at be but by can could do does done each file files find first for from get give has have how i
    if in into is it its just let like look make me more my new no not now of on one or our please put see set should
    show so some than that the their them then there these this those to up us use using want was we what when where
    which while who why will with would you your all any add also code change aider via""".split()
)

_IDENT = re.compile(r"[A-Za-z0-9_]+")
_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
FILE_MENTION = re.compile(r"[\w./\\-]*\w\.\w+|[\w.-]+(?:/[\w.-]+)+")
"""A file-like word: a name with an extension (``auth.py``), or a path with a slash (``src/app``, ``/abs/x.ts``).

The one definition of a file mention, for relevance ranking, the model's file choice and aider's files."""


def normalise(token: str) -> str:
    """Lowercase and strip a plural ``s`` (files -> file, tests -> test)."""
    token = token.lower()
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    return token


def split_identifier(word: str) -> list[str]:
    """``getUserAuth`` -> [get, user, auth]; ``snake_case`` -> [snake, case]."""
    return [normalise(p) for p in _PIECES.findall(word)]


def tokens(text: str, known: dict[str, list[str]] | None = None) -> list[str]:
    """Meaningful words of a text: identifiers split, lowercased, stopwords dropped.

    Args:
        text: Any text.
        known: A cache of each identifier's words, filled as it goes (for many texts
            sharing identifiers, such as the names of 80,000 files).
    """
    out: list[str] = []
    for word in _IDENT.findall(text):
        found = known.get(word) if known is not None else None
        if found is None:
            found = _word_tokens(word)
            if known is not None:
                known[word] = found
        out += found
    return out


def _word_tokens(word: str) -> list[str]:
    pieces = split_identifier(word)
    whole = normalise(word.replace("_", ""))
    if len(pieces) > 1 and whole not in pieces:
        pieces.append(whole)
    return [p for p in pieces if len(p) > 1 and p not in STOPWORDS]


def mentions(text: str) -> list[str]:
    """File-like words in a text (``auth.py``, ``src/app/main.ts``, ``core/memory``), relative, in order, once each."""
    found = [_relative(m.group(0)) for m in FILE_MENTION.finditer(text)]
    return [m for m in dict.fromkeys(found) if m]


def _relative(mention: str) -> str:
    """``./src/x.py`` -> ``src/x.py``, ``/abs/x.py`` -> ``abs/x.py``, a sentence's final dot dropped; ``.github/`` kept."""
    mention = mention.replace("\\", "/").rstrip("./")
    while mention.startswith("./"):
        mention = mention[2:]
    return mention.lstrip("/")


@dataclass
class Lexicon:
    """An inverted index of file names, directories and symbols for one set of paths.

    Args:
        paths: Relative ``/``-separated paths.
        symbols: Top-level symbol names per path, for the paths where known.
    """

    paths: list[str]
    symbols: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._id = {p: i for i, p in enumerate(self.paths)}
        self._by_name: dict[str, list[int]] = defaultdict(list)
        self._by_ext: dict[str, list[int]] = defaultdict(list)
        self._stem: dict[str, list[int]] = defaultdict(list)
        self._basename: dict[str, list[int]] = defaultdict(list)
        self._dir_of: list[int] = []
        self._dirs: list[list[int]] = []
        self._by_dir: dict[str, list[int]] = defaultdict(list)
        self._by_symbol: dict[str, set[int]] = defaultdict(set)
        self._symbol_exact: dict[str, set[int]] = defaultdict(set)
        dir_ids: dict[str, int] = {}
        known: dict[str, list[str]] = {}  # an identifier's words, worked out once
        for i, path in enumerate(self.paths):
            slash = path.rfind("/")
            directory, name = path[: slash + 1], path[slash + 1 :]
            d = dir_ids.get(directory)
            if d is None:
                d = dir_ids[directory] = len(self._dirs)
                self._dirs.append([])
                for tok in set(tokens(directory.replace("/", " "), known)):
                    self._by_dir[tok].append(d)
            self._dirs[d].append(i)
            self._dir_of.append(d)
            lname = name.lower()
            self._basename[lname].append(i)
            stem = lname.split(".", 1)[0] if not lname.startswith(".") else lname
            self._stem[stem].append(i)
            stem_part, _, extension = name.rpartition(".") if "." in name[1:] else (name, "", "")
            for tok in set(tokens(stem_part.replace(".", " "), known)):
                self._by_name[tok].append(i)
            if extension:
                self._by_ext[normalise(extension)].append(i)
        for path, names in self.symbols.items():
            i = self._id.get(path)
            if i is None:
                continue
            for symbol in names:
                self._symbol_exact[normalise(symbol.replace("_", ""))].add(i)
                for tok in tokens(symbol, known):
                    self._by_symbol[tok].add(i)
        while known:  # freed an entry at a time: freeing 46,000 at once is one C call of 5-10 ms
            known.popitem()

    def _df(self, tok: str) -> int:
        in_dirs = sum(len(self._dirs[d]) for d in self._by_dir.get(tok, ()))
        named = len(self._by_name.get(tok, ())) + len(self._by_ext.get(tok, ()))
        return named + len(self._by_symbol.get(tok, ())) + in_dirs

    def idf(self, tok: str) -> float:
        """Rarity of a word across the files (0 when no file has it)."""
        df = self._df(tok)
        if not df:
            return 0.0
        n = len(self.paths)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def resolve_mention(self, mention: str) -> list[int]:
        """Files a mention names: an exact path, a path suffix, or a unique-ish file name."""
        mention = mention.lstrip("/")
        if mention in self._id:
            return [self._id[mention]]
        lower = mention.lower()
        if "/" not in lower:
            return list(self._basename.get(lower, ()))[:5]
        suffix = "/" + lower
        return [i for i, p in enumerate(self.paths) if p.lower().endswith(suffix)][:5]

    def rank(self, weighted_texts: Iterable[tuple[str, float]], limit: int = 10) -> list[tuple[str, float]]:
        """Files ranked for texts of given weights, best first, with relevance in 0..1.

        Args:
            weighted_texts: ``(text, weight)``; e.g. an instruction at 3.0 and
                recent conversation at 1.0.
            limit: Most files to return.

        Returns:
            ``(relative path, relevance)``; empty when no word relates.
        """
        token_weight: dict[str, float] = defaultdict(float)
        mention_weight: dict[int, float] = defaultdict(float)
        for text, weight in weighted_texts:
            for tok in tokens(text):
                token_weight[tok] = max(token_weight[tok], weight)
            for mention in mentions(text):
                for i in self.resolve_mention(mention):
                    mention_weight[i] = max(mention_weight[i], weight)
        if not token_weight and not mention_weight:
            return []
        file_score: dict[int, float] = defaultdict(float)
        dir_score: dict[int, float] = defaultdict(float)
        best_token = 0.0
        for tok, weight in token_weight.items():
            idf = self.idf(tok)
            if idf <= 0.0:
                continue
            best_token = max(best_token, idf * weight * (NAME_WEIGHT + STEM_BONUS))
            for i in self._by_name.get(tok, ()):
                file_score[i] += idf * weight * NAME_WEIGHT
            for i in self._stem.get(tok, ()):
                file_score[i] += idf * weight * STEM_BONUS
            for i in self._by_ext.get(tok, ()):
                file_score[i] += idf * weight * EXTENSION_WEIGHT
            for i in self._by_symbol.get(tok, ()):
                file_score[i] += idf * weight * SYMBOL_WEIGHT
            for i in self._symbol_exact.get(tok, ()):
                file_score[i] += idf * weight * SYMBOL_WEIGHT
            for d in self._by_dir.get(tok, ()):
                dir_score[d] += idf * weight * DIR_WEIGHT
        for i, weight in mention_weight.items():
            file_score[i] += MENTION_SCORE * weight
        # Files matched by name or symbol get their directory's score; the best
        # directories also contribute their shortest files.
        for d in heapq_top(dir_score, 3):
            for i in sorted(self._dirs[d], key=lambda k: len(self.paths[k]))[:limit]:
                file_score.setdefault(i, 0.0)
        scored = []
        for i, score in file_score.items():
            total = score + dir_score.get(self._dir_of[i], 0.0)
            if total > 0:
                scored.append((total, -len(self.paths[i]), i))
        scored.sort(reverse=True)
        top = scored[:limit]
        scale = max(best_token, 1e-9)
        out = []
        for total, _, i in top:
            relevance = 1.0 if i in mention_weight else min(1.0, total / scale)
            if relevance >= MIN_RELEVANCE:
                out.append((self.paths[i], round(relevance, 3)))
        return out


def heapq_top(scores: Mapping[int, float], n: int) -> list[int]:
    """Keys of the n highest scores."""
    return [k for k, _ in sorted(scores.items(), key=lambda kv: kv[1], reverse=True)[:n]]
