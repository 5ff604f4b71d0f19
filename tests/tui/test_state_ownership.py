"""The TUI reads and commands ``core.session.Session``; it never writes the handler's state (issue 17).

An AST scan of every module in ``tui/`` (a fraction of a second): no assignment to, or
deletion of, an attribute reached through a ``handler``; no mention of the handler's
conversation, file-context or approval state, which only the session changes.
"""

from __future__ import annotations

import ast
from pathlib import Path

TUI = Path(__file__).resolve().parents[2] / "tui"

HANDLER_STATE = frozenset({
    "conversation_history", "pinned_files", "read_only_files", "session_allowed",
    "add_message", "reset_conversation", "restore_conversation", "add_observer", "remove_observer",
})
"""The handler's conversation, file context, approvals and observers: the session's to change."""
THROUGH_HANDLER = frozenset({"file_context", "approve"})
"""Names the TUI uses for its own things too: a violation only when reached through a handler."""


def _through_handler(node: ast.AST) -> bool:
    """True for ``handler.x``, ``self.handler.x``, ``self.engine.handler.x.y`` ..."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
        if isinstance(node, ast.Attribute) and node.attr == "handler" or isinstance(node, ast.Name) and node.id == "handler":
            return True
    return False


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    return []


def violations(source: str, name: str) -> list[str]:
    """Where ``source`` writes handler state or touches what only the session may change."""
    found = []
    for node in ast.walk(ast.parse(source)):
        for target in _targets(node):
            for part in ast.walk(target):
                if isinstance(part, (ast.Attribute, ast.Subscript)) and _through_handler(part):
                    found.append(f"{name}:{node.lineno} writes {ast.unparse(target)}")
                    break
        if isinstance(node, ast.Attribute) and (node.attr in HANDLER_STATE or node.attr in THROUGH_HANDLER and _through_handler(node)):
            found.append(f"{name}:{node.lineno} uses {ast.unparse(node)} (command or read core.session.Session instead)")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in {"getattr", "setattr", "hasattr", "delattr"}:
            named = [a.value for a in node.args[1:2] if isinstance(a, ast.Constant)]
            if named and named[0] in HANDLER_STATE:
                found.append(f"{name}:{node.lineno} names {named[0]!r} (getattr/setattr around the session)")
    return found


def test_the_tui_never_writes_the_handlers_state() -> None:
    found = [v for path in sorted(TUI.rglob("*.py")) for v in violations(path.read_text(), str(path.relative_to(TUI.parent)))]
    assert not found, "\n".join(found)


def test_the_scan_finds_each_kind_of_write() -> None:
    """The scan is not vacuous: each way the TUI used to write the handler is caught."""
    source = """
self.handler.approve = self.approve
self.engine.handler.read_only_files = sorted(read_only)
handler.pinned_files.extend(paths)
self.engine.handler.reset_conversation()
history = getattr(handler, "conversation_history", None)
self.handler.session_allowed.clear()
"""
    assert {v.split()[0] for v in violations(source, "x")} == {f"x:{line}" for line in range(2, 8)}
    assert violations("self.session.approvals\nengine.session.add_files(p)\nself.handler.get_provider_identifier()\nself.file_context.add(p)", "x") == []
