"""score_path's carried best gap gives exactly the score and positions of the pairwise dynamic programme it replaced."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.memory.scoring import (
    BONUS_BASENAME,
    BONUS_CONSECUTIVE,
    FIRST_CHAR_MULTIPLIER,
    GAP_EXTENSION,
    GAP_START,
    LENGTH_PENALTY,
    SCORE_MATCH,
    char_bonus,
    score_path,
)
from benchmarks.synthetic import synthetic_paths


def pairwise_score(path: str, base_start: int, query: str, case_sensitive: bool) -> tuple[float, tuple[int, ...]] | None:
    """The programme before: every state of the previous row tried for every occurrence (at f1daaee)."""
    target = path if case_sensitive else path.lower()
    if len(target) != len(path):
        target = "".join(c if len(c.lower()) != 1 else c.lower() for c in path)
    if not case_sensitive:
        query = query.lower()
    m = len(query)
    lo = [0] * m
    pos = -1
    for i, ch in enumerate(query):
        pos = target.find(ch, pos + 1)
        if pos < 0:
            return None
        lo[i] = pos
    hi = [0] * m
    pos = len(target)
    for i in range(m - 1, -1, -1):
        pos = target.rfind(query[i], 0, pos)
        hi[i] = pos
    states: list[list[tuple[int, float, int, int]]] = []
    prev: list[tuple[int, float, int, int]] = []
    for i, ch in enumerate(query):
        row: list[tuple[int, float, int, int]] = []
        j = lo[i]
        end = hi[i]
        while 0 <= j <= end:
            bonus = char_bonus(path, j)
            base = SCORE_MATCH + (BONUS_BASENAME if j >= base_start else 0)
            if i == 0:
                row.append((j, base + bonus * FIRST_CHAR_MULTIPLIER, bonus, -1))
            else:
                best, best_run, best_k = -1e9, 0, -1
                for k, (pj, ps, prun, _) in enumerate(prev):
                    if pj >= j:
                        break
                    if pj == j - 1:
                        run = max(prun, BONUS_CONSECUTIVE, bonus)
                        score = ps + base + run
                    else:
                        run = bonus
                        score = ps + base + bonus - GAP_START - GAP_EXTENSION * (j - pj - 2)
                    if score > best:
                        best, best_run, best_k = score, run, k
                if best_k >= 0:
                    row.append((j, best, best_run, best_k))
            j = target.find(ch, j + 1)
        if not row:
            return None
        states.append(row)
        prev = row
    k = max(range(len(prev)), key=lambda n: prev[n][1])
    total = prev[k][1]
    positions = [0] * m
    for i in range(m - 1, -1, -1):
        j, _, _, back = states[i][k]
        positions[i] = j
        k = back
    return total - LENGTH_PENALTY * len(path), tuple(positions)


@settings(max_examples=400, deadline=None)
@given(
    path=st.text(alphabet="aabbcA_/.-x1", min_size=1, max_size=40),
    query=st.text(alphabet="abAx_1/", min_size=1, max_size=6),
)
def test_same_as_the_pairwise_programme(path: str, query: str) -> None:
    case_sensitive = query != query.lower()
    base_start = path.rfind("/") + 1
    assert score_path(path, base_start, query, case_sensitive) == pairwise_score(path, base_start, query, case_sensitive)


def test_same_on_a_kernel_tree() -> None:
    paths = synthetic_paths(3_000, seed=11)
    for query in ("ixgbemain", "pgalloc", "e", "ee", "drvnet", "Kconfig", "mm/page", "sched"):
        for path in paths:
            base_start = path.rfind("/") + 1
            case_sensitive = query != query.lower()
            assert score_path(path, base_start, query, case_sensitive) == pairwise_score(path, base_start, query, case_sensitive), (path, query)
