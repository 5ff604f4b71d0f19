"""The TUI reads and commands ``core.session.Session``; it never writes the handler's state (issue 17).

An AST scan of every module in ``tui/`` (a fraction of a second): no assignment to, or
deletion of, an attribute reached through a ``handler``; no mention of the handler's
conversation, file-context or approval state, which only the session changes; and no
copy of the conversation of its own (no message dicts, no ``transcript`` list): f2 and
``/export`` read the session, which a flow test checks with a turn's every kind of output.
"""

from __future__ import annotations

import ast
from pathlib import Path

from core import events as ev
from core.config import Settings
from core.types import ToolCall
from tests.ast_writes import written_targets as _targets
from tests.tui.conftest import SIZE, FixedClock, ScriptedHandler, finish_turn, send, text_reply, wait_for
from tui.app import make_app

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


COPY_NAMES = frozenset({"transcript", "history", "messages", "conversation_log"})
"""Attribute names a TUI-side copy of the conversation would have."""


def copies(source: str, name: str) -> list[str]:
    """Where ``source`` builds a conversation of its own: a message dict, or a transcript-like attribute."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict) and any(isinstance(key, ast.Constant) and key.value == "role" for key in node.keys):
            found.append(f"{name}:{node.lineno} builds a message dict (the session keeps the conversation)")
        for target in _targets(node):
            if isinstance(target, ast.Attribute) and target.attr in COPY_NAMES:
                found.append(f"{name}:{node.lineno} keeps {ast.unparse(target)} (read core.session.Session instead)")
    return found


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


def test_the_tui_keeps_no_copy_of_the_conversation() -> None:
    found = [v for path in sorted(TUI.rglob("*.py")) for v in copies(path.read_text(), str(path.relative_to(TUI.parent)))]
    assert not found, "\n".join(found)
    old = """
self.transcript: list[dict[str, Any]] = []
self.transcript.append({"role": role, "content": content, **extra})
self.history = list(records)
"""
    assert {v.split()[0] for v in copies(old, "x")} == {"x:2", "x:3", "x:4"}
    assert copies("self.session.history\nentries = [{'path': p} for p in paths]", "x") == []


async def test_f2_and_export_show_what_the_session_kept(settings: Settings, project: Path) -> None:
    """Thinking, a tool call and its result, a warning, an error and pruned messages: all from the session."""
    call = ToolCall(id="c1", name="readFile", parameters={"path": "src/auth.py"})
    turns = {
        "first?": text_reply("First answer."),
        "look": [ev.TurnStarted(query="", subtask_id="s"), ev.ThinkingDelta(text="Read auth first."),
                 ev.AssistantMessage(content="", tool_calls=(call,), thinking=({"type": "thinking", "thinking": "Read auth first."},)),
                 ev.ToolCallStarted(call=call, started_at=0.0), ev.ToolCallFinished(call=call, status="success", result="def login(user): ...", duration=0.1),
                 ev.Warning(code="context_80", message="The context is 81% full."), *text_reply("Done looking.")[1:]],
        "fail": [ev.TurnStarted(query="", subtask_id="s"),
                 ev.TurnFailed(reason="llm_error", message="The model is overloaded.", result={"status": "failed", "content": "", "metadata": {}})],
    }
    handler = ScriptedHandler(lambda query: turns[query], project_root=project, settings=settings)
    app = make_app(settings, handler=handler, clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        app.chat.max_live = 3  # the first question and answer leave the chat
        for query in turns:
            await send(pilot, query)
            await finish_turn(pilot)
        assert app.chat.pruned > 0
        assert not hasattr(app, "transcript") and not hasattr(app.conversation, "transcript")
        await pilot.press("f2")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TextViewScreen")
        shown = app.screen.text
        for part in ("first?", "First answer.", "Read auth first.", "readFile", "def login(user): ...", "The context is 81% full.", "Done looking.", "The model is overloaded."):
            assert part in shown, (part, shown)
        assert shown.index("def login") < shown.index("81% full") < shown.index("Done looking.") < shown.index("overloaded")
        await pilot.press("escape")
        target = project / "out.md"
        await send(pilot, f"/export {target}")
        await wait_for(pilot, lambda: target.exists())
        assert target.read_text().split("\n", 1)[1] == shown.split("\n", 1)[1]  # the same conversation (its title aside)
