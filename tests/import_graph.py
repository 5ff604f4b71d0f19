"""The import graph of a package read with ``ast``, its rooms, and the rules docs/architecture.md states.

Every ``import`` statement counts: at module level, inside functions and under
``TYPE_CHECKING`` (a lazy import is still a dependency). A *room* is a top-level
module of the package or a top-level subpackage (``core/trust.py`` is the room
``trust``, ``core/sandbox/`` the room ``sandbox``); the package's ``__init__`` is
no room. docs/architecture.md gives each room a floor in a table; a room imports
only rooms on its own floor or below, and no two rooms import each other, even
through others.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterable

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "architecture.md"

Graph = dict[str, set[str]]


def module_name(path: Path, root: Path = ROOT) -> str:
    """``core/sandbox/bwrap.py`` -> ``core.sandbox.bwrap``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: str, root: Path = ROOT) -> dict[str, Path]:
    """Every module of ``package`` (a directory under ``root``) by its dotted name."""
    return {module_name(path, root): path for path in sorted((root / package).rglob("*.py"))}


def imports(path: Path, known: set[str], root: Path = ROOT) -> set[str]:
    """Every module ``path`` imports (``from tui import runtime`` counts as ``tui.runtime``)."""
    found: set[str] = set()
    package = module_name(path, root).rpartition(".")[0] if path.name != "__init__.py" else module_name(path, root)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)
    return found


def graph(package: str, root: Path = ROOT) -> Graph:
    """Module -> the modules it imports, for every module of ``package``."""
    found = modules(package, root)
    known = set(found)
    return {name: imports(path, known, root) for name, path in found.items()}


def cycles(edges: Graph) -> list[list[str]]:
    """Strongly connected components with more than one node, or a node importing itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node]):
            if target not in edges:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges[node]:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def room_of(module: str, package: str) -> str | None:
    """The room a module belongs to (``core.sandbox.bwrap`` -> ``sandbox``); None for the package itself or outside it."""
    parts = module.split(".")
    return parts[1] if parts[0] == package and len(parts) > 1 else None


def room_arrows(modules_graph: Graph, package: str) -> dict[tuple[str, str], list[str]]:
    """Each import between two rooms of ``package``, with the module imports behind it (``core.x.a -> core.y``)."""
    arrows: dict[tuple[str, str], list[str]] = {}
    for source, targets in modules_graph.items():
        for target in targets:
            here, there = room_of(source, package), room_of(target, package)
            if here and there and here != there and target in modules_graph:
                arrows.setdefault((here, there), []).append(f"{source} -> {target}")
    return {arrow: sorted(why) for arrow, why in sorted(arrows.items())}


def rooms(modules_graph: Graph, package: str) -> set[str]:
    """The rooms ``package`` has (each module's room)."""
    return {room for module in modules_graph if (room := room_of(module, package))}


def floors(heading: str, text: str | None = None) -> dict[str, int]:
    """The floor of each room in the table under ``heading`` in docs/architecture.md.

    The table's rows read ``| <floor number> <name> | `room`, `room`... | ... |``; a
    room named twice is an error.
    """
    text = ARCHITECTURE.read_text(encoding="utf-8") if text is None else text
    section = text.split(f"\n{heading}\n", 1)[1]
    found: dict[str, int] = {}
    for line in section.splitlines():
        if line.startswith("#"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not (number := re.match(r"(\d+)\b", cells[0])):
            continue
        for room in re.findall(r"`([\w]+)`", cells[1]):
            assert room not in found, f"{room} is on two floors of {heading!r}"
            found[room] = int(number.group(1))
    return found


def upward(arrows: Iterable[tuple[str, str]] | dict[tuple[str, str], list[str]], floor_of: dict[str, int]) -> list[str]:
    """Imports from a room to a room on a higher floor (``memory (3) -> compat (9)``); unknown rooms are not judged here."""
    found = []
    for here, there in arrows:
        if here in floor_of and there in floor_of and floor_of[there] > floor_of[here]:
            found.append(f"{here} ({floor_of[here]}) -> {there} ({floor_of[there]})")
    return found


def room_graph(arrows: Iterable[tuple[str, str]], all_rooms: Iterable[str]) -> Graph:
    """Room -> the rooms it imports."""
    edges: Graph = {room: set() for room in all_rooms}
    for here, there in arrows:
        edges.setdefault(here, set()).add(there)
        edges.setdefault(there, set())
    return edges


def violations(modules_graph: Graph, package: str, floor_of: dict[str, int]) -> dict[str, list[str]]:
    """What breaks the rules: rooms missing from the table (or listed but gone), upward imports, cycles between rooms."""
    arrows = room_arrows(modules_graph, package)
    present = rooms(modules_graph, package)
    edges = room_graph(arrows, present)
    return {
        "not in the table": sorted(present - set(floor_of)),
        "in the table, not in the code": sorted(set(floor_of) - present),
        "upward": [f"{arrow}: {', '.join(arrows[pair][:3])}" for pair in arrows for arrow in upward([pair], floor_of)],
        "cycles": [" <-> ".join(cycle) for cycle in cycles(edges)],
    }
