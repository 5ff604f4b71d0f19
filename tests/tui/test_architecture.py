"""The shape docs/architecture.md describes, checked on the source: one-way imports, a small composition root.

The import graph is read with ``ast`` from every ``import`` statement, including those under
``TYPE_CHECKING`` and inside functions: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import fields
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINT = "tui.cli"
"""The console script launches the app; it is the one module above the composition root."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(package: str) -> dict[str, Path]:
    return {_module_name(path): path for path in sorted((ROOT / package).rglob("*.py"))}


def _imports(path: Path, known: set[str]) -> set[str]:
    """Every module ``path`` imports (``from tui import runtime`` counts as ``tui.runtime``)."""
    found: set[str] = set()
    package = _module_name(path).rpartition(".")[0] if path.name != "__init__.py" else _module_name(path)
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


def _graph(package: str) -> dict[str, set[str]]:
    modules = _modules(package)
    known = set(modules)
    return {name: _imports(path, known) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, or a module importing itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in graph:
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
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_nothing_in_tui_imports_the_app() -> None:
    importers = [name for name, imported in _graph("tui").items() if "tui.app" in imported and name not in {"tui.app", ENTRY_POINT}]
    assert importers == []


def test_core_imports_neither_tui_nor_textual() -> None:
    offending = {
        name: sorted(m for m in imported if m.split(".")[0] in {"tui", "textual"})
        for name, imported in _graph("core").items()
    }
    assert {name: found for name, found in offending.items() if found} == {}


def test_the_tui_import_graph_has_no_cycle() -> None:
    graph = {name: {m for m in imported if m.startswith("tui.") or m == "tui"} for name, imported in _graph("tui").items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_app_module_is_only_the_composition_root() -> None:
    lines = (ROOT / "tui" / "app.py").read_text(encoding="utf-8").count("\n")
    assert lines < 300, f"tui/app.py has {lines} lines: move behaviour into a controller (docs/architecture.md)"


def test_each_command_uses_only_what_it_declares() -> None:
    """A command's ``needs`` names every field of the CommandContext its function reads, and only real fields."""
    from tui.commands import COMMANDS
    from tui.slash import CommandContext

    available = {field.name for field in fields(CommandContext)}
    for command in COMMANDS:
        assert command.needs <= available, command.name
        if command.run is None:
            assert not command.needs and (command.to_model or command.action), command.name
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(command.run)))
        used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ctx"}
        assert used == set(command.needs), f"{command.name} uses {sorted(used)} but declares {sorted(command.needs)}"
