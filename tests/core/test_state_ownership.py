"""Nobody outside the session's parts writes their state (issue 24 s1).

An AST scan of every module in ``core/`` and ``tui/`` (a fraction of a second):

- no assignment to (or deletion of) anything reached through a ``handler`` outside
  ``core/handlers`` (the tool loop): the compactor, the model switch and the
  Application call the handler's methods (``replace_view``, ``forget_reported_prompt``,
  ``use_model``, ``use_checkpoints``) instead;
- the settings are read-only after start: no assignment to an attribute of a
  ``settings`` or ``config`` outside ``core/config.py`` (a model switch takes a copy);
- the approvals (mode, approver, "always" answers) are private to ``core/approvals.py``:
  nobody else names their private fields, and nobody keeps a ``session_allowed`` set;
- a private attribute is written only through ``self``.

Also: the parts' public surface has no mutable attribute (``Approvals``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from core.approvals import Approvals
from tests.ast_writes import written_targets as _targets

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("core", "tui")
TOOL_LOOP = "core/handlers/"
"""The handler's own modules: where its state is written (by its methods)."""
APPROVALS_PRIVATE = frozenset({"_allowed", "_approver", "_mode"})
PARTS = frozenset({"handler", "session", "session_state", "approvals", "context", "file_context", "recorder", "engine", "application"})
"""Names the conversation's owner and its parts go by: their private fields are written only through ``self``."""
OWNED_ELSEWHERE = frozenset({"session_allowed", "conversation_history", "last_usage", "_usage_mark"})
"""Handler state only ``core/handlers`` changes."""
HISTORY_CHANGES = frozenset({"append", "append_user", "append_assistant", "append_tool_result", "retract", "replace_for_compaction", "restore", "rewind_to", "clear"})
"""``core.history.History``'s methods that change the conversation: called on the handler's history only by the handler."""


def _chain(node: ast.AST) -> list[str]:
    """The names along ``a.b[c].d``: ["a", "b", "d"]."""
    names = []
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return list(reversed(names))


def _written(target: ast.AST) -> list[ast.AST]:
    """Each attribute or item a target assigns (tuples unpacked)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [t for element in target.elts for t in _written(element)]
    return [target] if isinstance(target, (ast.Attribute, ast.Subscript, ast.Starred)) else []


def violations(source: str, name: str) -> list[str]:
    """Where ``source`` (the module ``name``, relative to the repository) writes state it does not own."""
    found = []
    in_loop = name.startswith(TOOL_LOOP)
    for node in ast.walk(ast.parse(source)):
        for target in _targets(node):
            for written in _written(target):
                chain = _chain(written)
                shown = ast.unparse(written)
                compactor_own = name.startswith("core/compaction/") and chain[:2] == ["handler", "compactor"]
                if not in_loop and "handler" in chain[:-1] and not compactor_own:
                    found.append(f"{name}:{node.lineno} writes {shown} (call a method of the handler or the session)")
                elif name != "core/config.py" and len(chain) >= 2 and chain[-2] in {"settings", "config"} and isinstance(written, ast.Attribute):
                    found.append(f"{name}:{node.lineno} writes {shown} (the settings are read-only after start)")
                elif (isinstance(written, ast.Attribute) and written.attr.startswith("_") and not written.attr.startswith("__")
                      and not (len(chain) == 2 and chain[0] in ("self", "cls")) and PARTS & set(chain[:-1])):
                    found.append(f"{name}:{node.lineno} writes {shown}, another object's private state")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in HISTORY_CHANGES and not in_loop:
            owner = _chain(node.func.value)
            if "handler" in owner and owner[-1:] in (["history"], ["_history"], ["conversation_history"]):
                found.append(f"{name}:{node.lineno} calls {ast.unparse(node.func)} (the handler's methods change the conversation)")
        if isinstance(node, ast.Attribute):
            if node.attr in APPROVALS_PRIVATE and name != "core/approvals.py" and _chain(node)[:1] != ["self"]:
                found.append(f"{name}:{node.lineno} reaches {ast.unparse(node)} (the approvals' private state)")
            elif node.attr in OWNED_ELSEWHERE and not in_loop and isinstance(node.ctx, (ast.Store, ast.Del)):
                found.append(f"{name}:{node.lineno} writes {ast.unparse(node)}")
            elif node.attr == "session_allowed":
                found.append(f"{name}:{node.lineno} names session_allowed (core.approvals.Approvals keeps the answers)")
    return found


def _modules() -> list[tuple[str, str]]:
    return [(str(path.relative_to(ROOT)), path.read_text()) for room in SCANNED for path in sorted((ROOT / room).rglob("*.py"))]


def test_no_module_writes_state_it_does_not_own() -> None:
    found = [v for name, source in _modules() for v in violations(source, name)]
    assert not found, "\n".join(found)


def test_the_scan_finds_each_kind_of_write() -> None:
    """Not vacuous: each way a module used to write another's state is caught (the compactor's and /model's among them)."""
    planted = """
handler.conversation_history[:] = view
handler.last_usage = None
handler._usage_mark = 0
config.provider, config.model = provider, model
handler.model_provider = create_provider(config)
self.handler.config.approval_mode = mode
self.handler.session_allowed.clear()
approvals._allowed.add(key)
self.application.handler.checkpoints = Checkpoints(root)
self.session._incidents = []
handler.history.append_user("planted")
self.handler.conversation_history.clear()
"""
    lines = {v.split()[0] for v in violations(planted, "core/compaction/x.py")}
    assert lines == {f"core/compaction/x.py:{n}" for n in range(2, 14)}, violations(planted, "core/compaction/x.py")
    fine = "handler.rewind_to(3)\nself._history.clear()\nhandler.add_message('user', note)\nself._mode = mode\nhandler.use_model(p, m)\nself.handler.approvals.set_mode('deny')\nsettings = load()\nx = handler.config.model\n"
    assert violations(fine, "core/other.py") == []
    assert violations("self.conversation_history = list(messages)\nhandler.last_usage = None", "core/handlers/requests.py") == []


def test_the_approvals_have_no_public_mutable_attribute() -> None:
    approvals = Approvals("ask")
    assert [name for name in vars(approvals) if not name.startswith("_")] == []
    for name in dir(Approvals):
        member = getattr(Approvals, name)
        if isinstance(member, property):
            assert member.fset is None, f"Approvals.{name} can be assigned"
    assert isinstance(approvals.allowed, frozenset)
    with pytest.raises(AttributeError):
        approvals.mode = "allow"  # type: ignore[misc]
    with pytest.raises(ValueError):
        approvals.set_mode("sometimes")
