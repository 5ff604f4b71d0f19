"""Part of the matcher's corpus, scanned instead of the whole when the query extends one whose matches are known.

Every path matching ``q + c`` also matches ``q``; so do the file names and the
directories each tier of :func:`core.memory.fuzzy._gather` looks for. Scanning only
the paths matching ``q`` (in the same order) finds the same lines, tier by tier,
as scanning everything: the results equal a fresh search, in a fraction of the time.
The one part that depends on the whole is where the whole-path tier's budget cuts
the scan; :func:`budget_end` places that cut in the subset.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

from core.memory.fields import MARK, MARK_SEPARATORS, Field, in_order

if TYPE_CHECKING:
    from core.memory.fuzzy import _Corpus

SEED_CHARS = 150_000
"""A query's match set is worked out from scratch when the paths holding all its characters are at most this long together."""


class Subset:
    """The fields of some paths of a corpus, in corpus order, with their maps back to the corpus.

    Args:
        corpus: The whole.
        ids: Indices of the paths kept (ascending).
    """

    def __init__(self, corpus: "_Corpus", ids: list[int]) -> None:
        self.corpus = corpus
        self.path_ids: list[int] | None = ids
        self.base = Field.build([corpus.base.texts[i] for i in ids])
        self.base_words = self.base.blob.translate(MARK_SEPARATORS)
        self.path = Field.build([corpus.low[i] for i in ids])
        dir_of = corpus.dir_of
        self.dir_ids: list[int] | None = sorted({dir_of[i] for i in ids} - {-1})
        dirs = corpus.dirs.texts
        self.dirs = Field.build([dirs[d] for d in self.dir_ids])
        self.dir_words = Field.build([MARK + dirs[d].translate(MARK_SEPARATORS) for d in self.dir_ids])

    def narrowed(self, kind: str, query: str) -> tuple[Field, list[int] | None]:
        """The field a sparse tier scans (already narrow here) and its map to path indices."""
        return (self.base if kind == "base" else self.path), self.path_ids

    def path_scan(self, query: str, budget: int) -> tuple[Field, list[int] | None, int | None, bool]:
        """The whole-path tier's field, map, end of scan and whether the budget cut it, as the whole corpus would have them."""
        cut, last, visible = self.corpus.budget_cut(query, budget)
        if not cut:
            return self.path, self.path_ids, None, False
        return self.path, self.path_ids, budget_end(self.path, self.path_ids or [], last, visible), True


def budget_end(field: Field, ids: list[int], last: int, visible: int) -> int:
    """Where to stop scanning ``field`` (paths ``ids``) so it sees what the whole corpus's cut scan saw.

    The whole corpus's scan saw every path before path ``last`` and the first ``visible``
    characters of ``last``.
    """
    k = bisect_left(ids, last)
    if k == len(ids):
        return len(field.blob)
    if ids[k] == last:
        return field.starts[k] + visible
    return field.starts[k]


def matching(corpus: "_Corpus", ids: list[int], query: str) -> list[int]:
    """The paths among ``ids`` (ascending) whose lowercase text holds ``query``'s characters in order."""
    field = Field.build([corpus.low[i] for i in ids])
    return [ids[line] for line in field.lines(in_order(query))]
