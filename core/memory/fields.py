"""Texts joined into one string that compiled regular expressions scan in C (the matcher's building block)."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from typing import Iterator

STEP = 4_096
"""Paths handled per step of a build (a multiple of 8): no single C call holds the GIL long."""
SEPARATORS = "_-. "
"""Characters after which a word starts (besides ``/``)."""
MARK = "\x1f"
"""Stands for every word separator in the ``*_words`` texts, so "a word starts with X" is a literal search."""
MARK_SEPARATORS = str.maketrans({c: MARK for c in SEPARATORS + "/"})


@dataclass(slots=True)
class Field:
    """Texts joined as ``"\\n" + "\\n".join(texts) + "\\n"``; ``starts[i]`` is where text i begins."""

    texts: list[str]
    blob: str
    starts: list[int]
    presence: object | None = None
    """Packed numpy bits: row b says which texts contain the byte b."""

    @classmethod
    def build(cls, texts: list[str]) -> Field:
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


def in_order(query: str) -> str:
    """A pattern matching a whole line that holds ``query``'s characters in order (lowercase, no newline).

    Anchored at the line's start and possessive, so a line is read once, left to right,
    whether or not it matches (an unanchored pattern retried from every occurrence of the
    first character).
    """
    return "\\n" + "".join(f"[^\\n{e}]*+{e}" for e in map(re.escape, query)) + "[^\\n]*+"
