"""The exact fuzzy score of one path, with the positions of the matched characters.

An fzf-style alignment score computed by dynamic programming over the
occurrences of each query character (not over every character of the path),
each step in constant time (the best gap so far is carried along), so a
typical 60-character path costs a few dozen steps:

- every matched character scores :data:`SCORE_MATCH`;
- a character that starts a word earns a bonus: after ``/`` or at the start
  (:data:`BONUS_START`), after ``_ - .`` or a space (:data:`BONUS_SEPARATOR`),
  at a camelCase hump or where digits start (:data:`BONUS_CAMEL`); the first
  query character's bonus counts double;
- a consecutive run keeps the bonus of the word start it began on;
- a gap between matched characters costs :data:`GAP_START` plus
  :data:`GAP_EXTENSION` per further skipped character;
- characters matched in the file name earn :data:`BONUS_BASENAME`;
- longer paths lose :data:`LENGTH_PENALTY` per character, so among equal
  matches the shorter path wins.
"""

from __future__ import annotations

SCORE_MATCH = 16
BONUS_START = 10
BONUS_SEPARATOR = 8
BONUS_CAMEL = 7
BONUS_CONSECUTIVE = 5
BONUS_BASENAME = 3
FIRST_CHAR_MULTIPLIER = 2
GAP_START = 3
GAP_EXTENSION = 1
LENGTH_PENALTY = 0.05

_SEPARATORS = frozenset("_-. ")


def char_bonus(text: str, j: int) -> int:
    """The word-start bonus of the character at ``text[j]``."""
    if j == 0:
        return BONUS_START
    prev = text[j - 1]
    if prev == "/":
        return BONUS_START
    if prev in _SEPARATORS:
        return BONUS_SEPARATOR
    ch = text[j]
    if prev.islower() and ch.isupper():
        return BONUS_CAMEL
    if ch.isdigit() and not prev.isdigit():
        return BONUS_CAMEL
    return 0


def score_path(path: str, base_start: int, query: str, case_sensitive: bool) -> tuple[float, tuple[int, ...]] | None:
    """Score ``query`` against ``path`` and return ``(score, positions)``.

    Args:
        path: The path as shown to the user (original case).
        base_start: Index where the file name begins in ``path``.
        query: The query without spaces.
        case_sensitive: Compare exactly (smart case with an uppercase query);
            otherwise both sides are lowercased.

    Returns:
        The best alignment's score and matched indices, or None when the query
        is not a subsequence of the path.
    """
    target = path if case_sensitive else path.lower()
    if len(target) != len(path):  # lowering changed a length; keep indices aligned
        target = "".join(c if len(c.lower()) != 1 else c.lower() for c in path)
    if not case_sensitive:
        query = query.lower()
    m = len(query)
    # The window each query character can occupy: leftmost and rightmost feasible positions.
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

    # states[i] = list of (position, score, run_bonus, index of previous state)
    states: list[list[tuple[int, float, int, int]]] = []
    prev: list[tuple[int, float, int, int]] = []
    for i, ch in enumerate(query):
        row: list[tuple[int, float, int, int]] = []
        j = lo[i]
        end = hi[i]
        # Over the previous row's states before j - 1, a gap's score is (score + GAP_EXTENSION * position)
        # plus what depends on j only: their best (the first, on ties) is kept as j moves right.
        k_next = 0
        gap_best = -1e9
        gap_k = -1
        while 0 <= j <= end:
            bonus = char_bonus(path, j)
            base = SCORE_MATCH + (BONUS_BASENAME if j >= base_start else 0)
            if i == 0:
                row.append((j, base + bonus * FIRST_CHAR_MULTIPLIER, bonus, -1))
            else:
                while k_next < len(prev) and prev[k_next][0] < j - 1:
                    value = prev[k_next][1] + GAP_EXTENSION * prev[k_next][0]
                    if value > gap_best:
                        gap_best, gap_k = value, k_next
                    k_next += 1
                best, best_run, best_k = -1e9, 0, -1
                if gap_k >= 0:
                    best = gap_best + base + bonus - GAP_START - GAP_EXTENSION * (j - 2)
                    best_run, best_k = bonus, gap_k
                if k_next < len(prev) and prev[k_next][0] == j - 1:  # consecutive: evaluated last, wins only when better
                    run = max(prev[k_next][2], BONUS_CONSECUTIVE, bonus)
                    score = prev[k_next][1] + base + run
                    if score > best:
                        best, best_run, best_k = score, run, k_next
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
