"""Issue 24 s3: figures are computed in core and shown by widgets, never read back from them.

The over-budget question of ``/add``, ``/files``' totals and a turn's number come from the
session (its metrics, its file context); the status line and the context pane only show
them. Before, ``FileContext`` asked the pane for the budget and the context size, ``/files``
summed the pane's rows and read its figure, and a turn without a number took the status
line's plus one.
"""

from __future__ import annotations

import ast
from pathlib import Path

from core.config import Settings
from tests.tui.conftest import SIZE, FixedClock, send, wait_for
from tui.app import make_app
from tui.format import context_figure
from tui.widgets.chat import MarkdownNote

TUI = Path(__file__).resolve().parents[2] / "tui"
SHOWN = {"metrics", "budget", "entries", "picked_tokens", "context_tokens", "figure"}
"""What a widget holds only to show it."""


def _widget_name(node: ast.expr) -> str:
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name if name == "status" or name.endswith("pane") else ""


def test_no_controller_reads_a_figure_back_from_a_widget() -> None:
    readers = [
        f"{path.relative_to(TUI.parent)}:{node.lineno} {_widget_name(node.value)}.{node.attr}"
        for path in sorted(TUI.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in SHOWN and _widget_name(node.value)
    ]
    assert not readers, readers


async def test_files_reports_the_sessions_figures_not_the_panes(project: Path) -> None:
    """The pane is told a wrong figure; /files and the budget question still use the session's."""
    app = make_app(Settings(project_root=project, context_window=100), clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_started()
        app.context_pane.show_context({"estimated_tokens": 1, "context_window": 1_000_000})  # what a stale widget might hold
        await send(pilot, "/add src/app.py")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the budget question (the session's 100-token window)")
        await pilot.press("y")
        await wait_for(pilot, lambda: len(app.engine.session.context.picked) == 1)
        await send(pilot, "/files")
        await wait_for(pilot, lambda: any(n.border_title and "Context" in str(n.border_title) for n in app.chat.query(MarkdownNote)))
        note = [n for n in app.chat.query(MarkdownNote) if "Context" in str(n.border_title)][-1]
        tokens = app.engine.session.context.entries()[0].tokens
        figure = context_figure(app.engine.metrics() or {})[1]
        assert f"Files **{tokens}** tokens" in note.source and f"context **{figure}** tokens" in note.source, note.source
        assert "/100" in figure and "1M" not in note.source
