"""FuzzyMatcher: ranking properties, positions, smart case, narrowing, updates."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.memory.fuzzy import FuzzyMatcher
from core.memory.memo import ScanMemo
from core.memory.scoring import score_path
from benchmarks.synthetic import ANCHOR_PATHS, synthetic_paths


def ranked(paths: list[str], query: str) -> list[str]:
    return [m.path for m in FuzzyMatcher(paths).search(query)]


def test_file_name_match_beats_directory_match() -> None:
    assert ranked(["auth/views.py", "views/auth.py"], "auth")[0] == "views/auth.py"
    assert ranked(["src/net/a.c", "src/a/net.c"], "net")[0] == "src/a/net.c"


def test_word_start_beats_middle_of_word() -> None:
    assert ranked(["lib/xmainy.c", "lib/x_main.c"], "main")[0] == "lib/x_main.c"
    assert ranked(["src/UserProfileCard.tsx", "src/cupcake.tsx"], "upc")[0] == "src/UserProfileCard.tsx"
    assert ranked(["a/bigredcar.py", "a/big_red_car.py"], "brc")[0] == "a/big_red_car.py"


def test_consecutive_run_beats_scattered() -> None:
    assert ranked(["x/c_o_n_f.c", "x/config.c"], "conf")[0] == "x/config.c"


def test_shorter_path_wins_ties() -> None:
    assert ranked(["deep/er/path/util.py", "a/util.py", "ab/util.py"], "util") == ["a/util.py", "ab/util.py", "deep/er/path/util.py"]


def test_positions_point_at_the_matched_characters() -> None:
    paths = ["drivers/net/ethernet/intel/ixgbe/ixgbe_main.c", "mm/page_alloc.c"]
    for query in ("ixgbemain", "pgalloc", "mm/page", "drvnet", "c"):
        for match in FuzzyMatcher(paths).search(query):
            assert len(match.positions) == len(query)
            assert list(match.positions) == sorted(set(match.positions))
            assert "".join(match.path[i] for i in match.positions).lower() == query.lower()
    best = FuzzyMatcher(paths).search("ixgbemain")[0]
    assert best.positions == (33, 34, 35, 36, 37, 39, 40, 41, 42)  # the file name, not the directory


def test_smart_case() -> None:
    paths = ["src/Makefile", "src/makefile.py", "docs/MAKE.md"]
    assert {m.path for m in FuzzyMatcher(paths).search("make")} == set(paths)
    assert [m.path for m in FuzzyMatcher(paths).search("Make")] == ["src/Makefile"]
    assert FuzzyMatcher(paths).search("MAKE")[0].path == "docs/MAKE.md"


def test_empty_query_lists_shortest_paths_first() -> None:
    matcher = FuzzyMatcher(["a/b/c/d.py", "x.py", "a/b.py"])
    assert [m.path for m in matcher.search("")] == ["x.py", "a/b.py", "a/b/c/d.py"]
    assert [m.path for m in matcher.search("   ", limit=1)] == ["x.py"]


def test_no_match_and_limit() -> None:
    matcher = FuzzyMatcher([f"dir/file{i}.py" for i in range(100)])
    assert matcher.search("zzz") == []
    assert len(matcher.search("file", limit=7)) == 7


def test_special_characters_are_literal() -> None:
    paths = ["a/[x].py", "a/x.py", "b/a+b.txt", "c/a.b"]
    assert ranked(paths, "[x]") == ["a/[x].py"]
    assert ranked(paths, "a+b") == ["b/a+b.txt"]
    assert ranked(paths, "a.b")[0] == "c/a.b"


def test_update_replaces_the_paths_and_narrowing_state() -> None:
    matcher = FuzzyMatcher(["one/alpha.py"])
    assert [m.path for m in matcher.search("alp")] == ["one/alpha.py"]
    matcher.update(["two/alphabet.py", "two/beta.py"])
    assert [m.path for m in matcher.search("alph")] == ["two/alphabet.py"]
    assert len(matcher) == 2


@pytest.fixture(scope="module")
def big() -> tuple[list[str], FuzzyMatcher]:
    paths = synthetic_paths(20_000, seed=3)
    return paths, FuzzyMatcher(paths)


@pytest.mark.parametrize("query", ["e", "ee", "drvnet", "ixgbemain", "kconfig", "mm/page", "pgalloc", "xz", "Kconfig"])
def test_results_are_real_matches_sorted_by_score(big, query: str) -> None:
    _, matcher = big
    for end in range(1, len(query) + 1):  # typed one key at a time, exercising narrowing
        results = matcher.search(query[:end])
        assert len(results) <= 50
        scores = [m.score for m in results]
        assert scores == sorted(scores, reverse=True)
        for m in results:
            assert score_path(m.path, m.path.rfind("/") + 1, query[:end], query[:end] != query[:end].lower()) == (m.score, m.positions)


def test_best_match_is_found_among_many(big) -> None:
    _, matcher = big
    assert matcher.search("ixgbe_main")[0].path.endswith("ixgbe_main.c")
    assert matcher.search("mm/page_alloc")[0].path == "mm/page_alloc.c"
    assert matcher.search("Kconfig")[0].path == "Kconfig"
    assert "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c" in [m.path for m in matcher.search("netintelixgbemain")]


def test_narrowed_results_equal_fresh_results(big) -> None:
    paths, typed = big
    for query in ("ixgbemain", "pgalloc", "drvnetk"):
        for end in range(1, len(query) + 1):
            got = typed.search(query[:end])
        fresh = FuzzyMatcher(paths).search(query)
        assert got == fresh


def test_without_bitmaps_results_are_the_same() -> None:
    """Bitmaps only narrow what is scanned; below the scan budget results are identical."""
    paths = synthetic_paths(5_000, seed=4)
    plain, prepared = FuzzyMatcher(paths, prepare=False), FuzzyMatcher(paths)
    for query in ("ixgbemain", "xz", "kconfig", "drv", "e"):
        assert plain.search(query) == prepared.search(query)


@settings(max_examples=150, deadline=None)
@given(
    paths=st.lists(st.text(alphabet="abcAB_/.-x", min_size=1, max_size=20), min_size=1, max_size=30),
    query=st.text(alphabet="abcAB_/.x", min_size=1, max_size=4),
)
def test_small_lists_find_every_subsequence_match(paths: list[str], query: str) -> None:
    """On small lists (under the candidate cap) exactly the subsequence matches come back."""
    case_sensitive = query != query.lower()

    def is_subsequence(path: str) -> bool:
        text, q = (path, query) if case_sensitive else (path.lower(), query.lower())
        it = iter(text)
        return all(ch in it for ch in q)

    expected = {p for p in paths if is_subsequence(p)}
    got = FuzzyMatcher(paths).search(query, limit=100)
    assert {m.path for m in got} == expected


def test_synthetic_paths_are_deterministic_and_realistic() -> None:
    a = synthetic_paths(5_000, seed=1)
    assert a == synthetic_paths(5_000, seed=1) and a != synthetic_paths(5_000, seed=2)
    assert len(set(a)) == 5_000 and set(ANCHOR_PATHS) <= set(a)
    mean = sum(map(len, synthetic_paths(20_000))) / 20_000
    assert 50 <= mean <= 70
    assert random.Random(0).choice(a).count("/") >= 1


def test_paths_are_unique_and_shortest_first_across_build_steps() -> None:
    """The corpus is built a step at a time; the order is that of one stable sort by length."""
    paths = synthetic_paths(12_000, seed=5)
    given_paths = paths + paths[::7] + ["", "a.c", "a.c"]  # duplicates far apart, in other steps
    assert FuzzyMatcher(given_paths, prepare=False).paths == sorted(dict.fromkeys(p for p in given_paths if p), key=len)


@pytest.mark.parametrize("odd", [["ÄÖü/İstanbul.py", "x/line\nbreak.c"], ["b\udcff/broken.c", "café/naïve.txt", "x/line\nbreak.c"]])
def test_bitmaps_hold_for_any_file_name(odd: list[str]) -> None:
    """Non-ASCII, undecodable (surrogate-escaped) and newline-holding names, in any build step.

    The narrowing bitmaps of such names were misaligned: a newline in one name
    next to a non-ASCII one made ``prepare`` raise, and the picker never got them.
    """
    paths = synthetic_paths(9_000, seed=6)
    for at, name in zip((5, 4_100, 8_500), odd):  # in the first, second and last step
        paths.insert(at, name)
    plain, prepared = FuzzyMatcher(paths, prepare=False), FuzzyMatcher(paths)
    for query in ("istanbul", "İstanbul", "break", "broken", "naïve", "linebr", "ixgbemain"):
        assert prepared.search(query) == plain.search(query), query
    assert "x/line\nbreak.c" in {m.path for m in prepared.search("break", limit=100)}


@pytest.fixture(scope="module")
def kernel() -> list[str]:
    return synthetic_paths(80_000, seed=0)


TYPED = ("ixgbemain", "page_alloc", "kernel/sched", "ext4inode", "Kconfig", "mlx5core", "drvnetintel", "i915gem", "mm/pgalloc", "zzq", "xz")


@pytest.mark.parametrize("seed_chars", [1_000_000, -1])
def test_every_prefix_typed_equals_a_fresh_search(kernel: list[str], monkeypatch: pytest.MonkeyPatch, seed_chars: int) -> None:
    """Typed a key at a time (and back with Backspace), each result equals a search that scans every path:
    the match sets and scans kept from the keys before only narrow what is read, never what is found."""
    from core.memory import fuzzy

    monkeypatch.setattr(fuzzy, "SEED_CHARS", seed_chars)  # kept match sets for more keys than by default, or none (kept scans only)
    typed = FuzzyMatcher(kernel)
    keys = [query[:end] for query in TYPED for end in [*range(1, len(query) + 1), *range(len(query) - 1, 0, -1)]]
    results, kept = [], 0
    for prefix in keys:
        results.append(typed.search(prefix))
        kept += bool(typed._known)
    assert kept >= 30 if seed_chars > 0 else kept == 0, f"{kept} of {len(keys)} keys answered from a kept match set"
    monkeypatch.setattr(fuzzy, "SEED_CHARS", -1)
    fresh = FuzzyMatcher(kernel)
    for prefix, got in zip(keys, results):
        fresh._known, fresh._memo = [], ScanMemo()
        assert got == fresh.search(prefix), prefix
        assert not fresh._known


@pytest.mark.parametrize("seed_chars", [1_000_000, -1])
def test_a_kept_match_set_sees_what_the_budget_let_a_fresh_search_see(monkeypatch: pytest.MonkeyPatch, seed_chars: int) -> None:
    """With a small whole-path budget (the scan cut after 5,000 characters, often in the middle of a path),
    every prefix typed still equals a fresh search: the cut is placed where the whole corpus puts it, and a
    kept scan is reused only over the same texts (with no kept match sets: kept scans alone)."""
    from core.memory import fuzzy

    paths = synthetic_paths(3_000, seed=5)
    rng = random.Random(7)
    words = ["ixgbe", "page", "alloc", "kernel", "sched", "ext4", "inode", "mlx5", "core", "net", "intel", "i915", "gem", "drv", "usb", "mm", "x86", "pci"]
    queries = ["".join(rng.choice(w)[: rng.randint(1, 3)] for w in rng.sample(words, 3)) for _ in range(60)]
    monkeypatch.setattr(fuzzy, "PATH_SCAN_BUDGET", 5_000)
    monkeypatch.setattr(fuzzy, "CANDIDATES", 20)
    monkeypatch.setattr(fuzzy, "SEED_CHARS", seed_chars)
    typed = FuzzyMatcher(paths)
    keys = [query[:end] for query in queries for end in range(1, len(query) + 1)]
    results = [typed.search(prefix, limit=5) for prefix in keys]
    monkeypatch.setattr(fuzzy, "SEED_CHARS", -1)
    fresh = FuzzyMatcher(paths)
    for prefix, got in zip(keys, results):
        fresh._known, fresh._memo = [], ScanMemo()
        assert got == fresh.search(prefix, limit=5), prefix


def test_a_kept_scan_is_not_reused_over_other_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """"ab" is found only across directory and name, in the first 2,000 characters of all paths; "abc" narrows
    to 40 longer paths that scan missed: they are found (filtering what "ab" found would miss every one)."""
    from core.memory import fuzzy

    monkeypatch.setattr(fuzzy, "PATH_SCAN_BUDGET", 2_000)
    monkeypatch.setattr(fuzzy, "SEED_CHARS", -1)
    fillers = [f"a{n:04d}/b{n:04d}.txt" for n in range(1_000)]
    targets = [f"a/b/c_long_name_{n:04d}.py" for n in range(40)]
    matcher = FuzzyMatcher(fillers + targets)
    assert len(matcher.search("ab", limit=300)) < 300  # its path scan read its whole (cut) region
    found = [m.path for m in matcher.search("abc", limit=100)]
    assert sorted(found) == targets
