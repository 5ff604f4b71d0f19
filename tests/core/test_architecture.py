"""core/'s rooms keep the floors docs/architecture.md gives them: no upward import, no cycle, the table matches the code.

The graph counts every import (module level, in functions, under ``TYPE_CHECKING``);
see :mod:`tests.import_graph`. The checker is itself tested on planted imports, so a
passing run means something.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests import import_graph as ig

HEADING = "### Floors of core"


@pytest.fixture(scope="module")
def core_graph() -> ig.Graph:
    return ig.graph("core")


@pytest.fixture(scope="module")
def core_floors() -> dict[str, int]:
    return ig.floors(HEADING)


def test_every_room_of_core_is_in_the_table_and_every_room_of_the_table_in_core(core_graph, core_floors) -> None:
    found = ig.violations(core_graph, "core", core_floors)
    assert (found["not in the table"], found["in the table, not in the code"]) == ([], [])


def test_no_room_of_core_imports_a_higher_floor(core_graph, core_floors) -> None:
    assert ig.violations(core_graph, "core", core_floors)["upward"] == []


def test_no_two_rooms_of_core_import_each_other(core_graph, core_floors) -> None:
    assert ig.violations(core_graph, "core", core_floors)["cycles"] == []


def test_nothing_in_core_imports_the_compat_facade(core_graph) -> None:
    importers = sorted(m for m, imported in core_graph.items() if ig.room_of(m, "core") != "compat"
                       and any(ig.room_of(t, "core") == "compat" for t in imported))
    assert importers == []


def test_a_planted_upward_import_is_found(core_graph, core_floors) -> None:
    """The real graph with one import added at the bottom floor: the checker names it, and the cycle it makes."""
    planted = {module: set(imported) for module, imported in core_graph.items()}
    planted["core.types"].add("core.compat.facade")  # the bottom floor reaching for the façade
    found = ig.violations(planted, "core", core_floors)
    assert any(line.startswith("types (1) -> compat (9): core.types -> core.compat.facade") for line in found["upward"]), found["upward"]
    assert any("compat" in cycle and "types" in cycle for cycle in found["cycles"]), found["cycles"]


def test_the_checker_reads_a_package_from_its_files(tmp_path: Path) -> None:
    """A synthetic package on disk: imports in functions and under TYPE_CHECKING count; a room left out of the table is named."""
    files = {
        "pkg/__init__.py": "",
        "pkg/low.py": "def f():\n    from pkg.high import g  # lazy, still a dependency\n",
        "pkg/high/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import low\n",
        "pkg/high/part.py": "import pkg.low\n",
        "pkg/extra.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    table = textwrap.dedent("""
        ### Floors of pkg

        | floor | rooms | what |
        | --- | --- | --- |
        | 2 top | `high` | above |
        | 1 bottom | `low`, `gone` | below |
        ### Next
        | 3 | `ignored` | after the table |
    """)
    found = ig.violations(ig.graph("pkg", tmp_path), "pkg", ig.floors("### Floors of pkg", table))
    assert found == {
        "not in the table": ["extra"],
        "in the table, not in the code": ["gone"],
        "upward": ["low (1) -> high (2): pkg.low -> pkg.high"],
        "cycles": ["high <-> low"],
    }


def test_a_room_on_two_floors_is_refused() -> None:
    with pytest.raises(AssertionError, match="two floors"):
        ig.floors("### F", "\n### F\n| 1 | `a` |\n| 2 | `a` |\n")
