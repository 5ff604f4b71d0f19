"""No dead surface: every production function or method has a caller in production code.

A name-based static check (issue 17, section 3): a function or method defined
in ``core/`` or ``tui/`` must be referenced by name (a call, an attribute, an
import, a string handed to ``getattr`` or a registry) somewhere in ``core/`` or
``tui/`` outside its own body. Tests, benchmarks and :mod:`core.compat` (the
SPEC's public names kept for its interface) do not count as callers; what is
defined in :mod:`core.compat` is exempt, and tested by ``tests/core/test_handler_api.py``
and ``tests/memory/test_selection.py``.

Name-based means two functions sharing a name shield each other; it catches the
common case (a helper nothing calls any more) in a fraction of a second.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCTION = ("core", "tui")
COMPAT = ROOT / "core" / "compat"

ENTRY_PREFIXES = ("on_", "_on_", "action_", "watch_", "_watch_", "compose", "validate_", "compute_")
"""Textual calls these by naming convention: message handlers, actions, watchers, reactives' validators."""

LIBRARY_HOOKS: dict[str, str] = {
    # Textual calls these on the classes that override them.
    "check_action": "textual App: whether a binding's action is available",
    "discover": "textual command palette Provider: entries before typing",
    "get_optimal_width": "textual Visual protocol (tui/widgets/markdown_table.py)",
    "get_height": "textual Visual protocol (tui/widgets/markdown_table.py)",
    "render_line": "textual line API widgets (tui/widgets/path_list.py)",
    "notify_style_update": "textual Widget: styles changed, drop what was drawn with the old ones (tui/widgets/path_list.py)",
    "get_line_filters": "textual App: filters applied to every rendered line",
    "get_selection": "textual Widget: the text a mouse selection copies (tui/widgets/markdown_code.py)",
    "release_anchor": "textual Widget: the reader scrolled away from the anchored end (tui/widgets/chat_view.py)",
    "get_cursor_left_location": "textual TextArea: cursor moves and deletions (tui/widgets/prompt.py: a paste chip is one step)",
    "get_cursor_right_location": "textual TextArea: cursor moves and deletions (tui/widgets/prompt.py: a paste chip is one step)",
    "get_cursor_word_left_location": "textual TextArea: word moves and deletions (tui/widgets/prompt.py)",
    "get_cursor_word_right_location": "textual TextArea: word moves and deletions (tui/widgets/prompt.py)",
    # The acp package calls the Agent and Transport protocol methods by name.
    "authenticate": "acp Agent protocol (core/acp/agent.py)",
    "set_session_mode": "acp Agent protocol (core/acp/agent.py)",
    "new_session": "acp Agent protocol (core/acp/agent.py)",
    "list_sessions": "acp Agent protocol (core/acp/agent.py)",
    "resume_session": "acp Agent protocol (core/acp/agent.py)",
    "fork_session": "acp Agent protocol (core/acp/agent.py)",
    "close_session": "acp Agent protocol (core/acp/agent.py)",
    "set_config_option": "acp Agent protocol (core/acp/agent.py)",
    "receive": "acp Transport protocol (core/acp/stdio.py)",
    # aider calls these on its InputOutput (our subclass in core/tools/aider_bridge.py).
    "rule": "aider InputOutput",
    "ring_bell": "aider InputOutput",
    "confirm_ask": "aider InputOutput",
    "tool_warning": "aider InputOutput",
    "tool_error": "aider InputOutput",
    # pydantic-settings calls these on core.config's Settings and its sources.
    "settings_customise_sources": "pydantic-settings BaseSettings",
    "_read_file": "pydantic-settings file sources (TomlConfigSettingsSource)",
}
"""Methods a library calls by name; each is an override of the library's own method."""

CALLED_BY_DECORATOR = frozenset({"on", "field_validator"})
"""Decorators that register a function with a library: Textual's ``@on`` handlers, pydantic's validators."""

SPEC_CONTRACT: dict[str, str] = {
    "send_message": "SPEC 2 ProviderAdapter (vendor wire format stays in core/providers); used by core.compat.selection",
    "extract_tool_calls": "SPEC 2 ProviderAdapter (vendor wire format stays in core/providers); used by core.compat.selection",
}
"""The SPEC's provider contract: implemented per vendor, so it cannot move into core.compat."""


def _modules() -> list[Path]:
    return sorted(path for package in PRODUCTION for path in (ROOT / package).rglob("*.py"))


def _references(tree: ast.AST, package: bool = False) -> Counter[str]:
    """Names a tree uses: identifiers, attributes, imports and identifier-like strings.

    ``__all__`` and a package's re-exports (``from .module import name`` in an
    ``__init__``) are not uses: the module importing the name from the package is.
    """
    names: Counter[str] = Counter()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            continue
        if package and isinstance(node, ast.ImportFrom):
            continue
        if isinstance(node, ast.Name):
            names[node.id] += 1
        elif isinstance(node, ast.Attribute):
            names[node.attr] += 1
        elif isinstance(node, ast.alias):
            names[node.name.rpartition(".")[2]] += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names[node.value] += 1
        stack.extend(ast.iter_child_nodes(node))
    return names


def _exempt(name: str) -> bool:
    return (name.startswith("__") and name.endswith("__")) or name.startswith(ENTRY_PREFIXES) or name in LIBRARY_HOOKS or name in SPEC_CONTRACT


def callerless() -> list[str]:
    """``path:line name`` of every production function nothing in production refers to."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in _modules()}
    used: Counter[str] = Counter()
    for path, tree in trees.items():
        if not path.is_relative_to(COMPAT):
            used += _references(tree, package=path.name == "__init__.py")
    found = []
    for path, tree in trees.items():
        if path.is_relative_to(COMPAT):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or _exempt(node.name):
                continue
            if any(isinstance(d, ast.Call) and getattr(d.func, "id", "") in CALLED_BY_DECORATOR for d in node.decorator_list):
                continue
            if used[node.name] - _references(node)[node.name] <= 0:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    return found


def test_every_production_function_has_a_caller() -> None:
    found = callerless()
    assert not found, "no caller outside tests and core.compat (delete it, or move a SPEC name to core.compat):\n" + "\n".join(found)


def test_the_check_sees_a_callerless_function(tmp_path: Path) -> None:
    tree = ast.parse("def used():\n    pass\n\ndef unused():\n    used()\n")
    refs = _references(tree)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    assert [f.name for f in functions if refs[f.name] - _references(f)[f.name] <= 0] == ["unused"]
