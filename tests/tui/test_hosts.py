"""Issue 24 s3: controllers are not handed the App; each gets a protocol naming what it may do.

Scans the controllers' source: everything they reach on the app they were given
(``self.host.X``, ``ctx.screens.X``) must be a member of their protocol in
:mod:`tui.hosts`, and none types it as ``App``. Planting ``self.host.exit()`` in the
conversation, or ``ctx.screens.suspend()`` in a command, fails it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tui.hosts import CommandHost, FileHost, TurnHost

TUI = Path(__file__).resolve().parents[2] / "tui"
CONTROLLERS = {
    "conversation.py": ("host", TurnHost),
    "context_ops.py": ("host", FileHost),
    "slash.py": ("screens", CommandHost),
}


def members(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")}


def reached(source: str, name: str) -> set[tuple[int, str]]:
    """``(line, attribute)`` of every ``<x>.<name>.<attribute>`` in ``source``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == name:
            found.add((node.lineno, node.attr))
    return found


def test_controllers_use_only_what_their_protocol_names() -> None:
    outside = []
    for module, (name, protocol) in CONTROLLERS.items():
        source = (TUI / module).read_text()
        uses = reached(source, name)
        assert uses, f"{module} no longer reaches the app through .{name}: update this test"
        outside += [f"{module}:{line} .{name}.{attr} (not in {protocol.__name__})" for line, attr in sorted(uses) if attr not in members(protocol)]
        assert '"App[Any]"' not in source and "from textual.app import App\n" not in source, f"{module} is typed with the App"
    assert not outside, outside


def test_a_planted_call_outside_the_protocol_is_caught() -> None:
    planted = (TUI / "conversation.py").read_text() + "\n\ndef leak(self):\n    self.host.exit()\n"
    extra = {attr for _, attr in reached(planted, "host")} - members(TurnHost)
    assert extra == {"exit"}
