"""The approval modal: exactly what will run, and the user's decision."""

from __future__ import annotations

import shlex
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from core.text import visible_text
from core.types import ApprovalRequest, Decision
from tui.diff_text import diff_text, looks_like_diff
from tui.widgets.footer import KeyFooter


def describe_request(request: ApprovalRequest) -> str:
    """What will run, in plain text: the request's detail, else the tool's arguments."""
    if request.detail.strip():
        return request.detail
    params: dict[str, Any] = request.tool_call.parameters
    lines: list[str] = []
    command = params.get("command") or params.get("argv")
    if isinstance(command, list):
        lines.append("$ " + shlex.join(str(part) for part in command))
    elif isinstance(command, str):
        lines.append(f"$ {command}")
    files = params.get("file_context") or params.get("files")
    if files:
        lines.append("files:")
        lines.extend(f"  {path}" for path in files)
    instruction = params.get("prompt") or params.get("query") or params.get("instruction")
    if instruction:
        lines.append("instruction:")
        lines.extend(f"  {line}" for line in str(instruction).splitlines())
    if not lines:
        lines.extend(f"{key}: {value}" for key, value in params.items())
    return "\n".join(lines)


class ApprovalScreen(ModalScreen[Decision]):
    """Ask whether a tool call may run: allow once (y), always this session (a), for the project (p), deny (n/Esc).

    ``p`` is there only when the request offers it (editFile: every file of the project, where
    ``a`` is this file). The detail (a diff) scrolls with Up/Down, PgUp/PgDn, Home/End whatever has
    focus, so the buttons stay on screen however long it is.
    """

    BINDINGS = [
        Binding("y", "decide('allow_once')", "Allow once", id="approval.once"),
        Binding("a", "decide('allow_session')", "Always this session", id="approval.session"),
        Binding("a", "decide('allow_session', 'file')", "Always: this file", id="approval.file",
                tooltip="Always this session for this file (editFile)"),
        Binding("p", "decide('allow_project')", "Always: project", id="approval.project",
                tooltip="Always this session for any file in the project (editFile; protected files stay refused)"),
        Binding("n,escape", "decide('deny')", "Deny", id="approval.deny"),
        # priority: the dialog's own scroll keys (it holds the focused button) would otherwise hide "↑↓ Scroll"
        Binding("up", "scroll_detail('up')", "Scroll", key_display="↑↓", priority=True, id="approval.scroll",
                tooltip="Scroll what will run (↑ ↓ PgUp PgDn Home End)"),
        Binding("down", "scroll_detail('down')", show=False, priority=True),
        Binding("pageup", "scroll_detail('page_up')", show=False, priority=True),
        Binding("pagedown", "scroll_detail('page_down')", show=False, priority=True),
        Binding("home", "scroll_detail('home')", show=False, priority=True),
        Binding("end", "scroll_detail('end')", show=False, priority=True),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
    ]

    AUTO_FOCUS = "#deny"
    """Deny is focused: Enter never runs anything by accident."""

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(classes="approval-screen")
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        yield KeyFooter()  # this dialog's keys, not the screen's underneath
        with VerticalScroll(id="approval-dialog") as dialog:
            dialog.border_title = visible_text(request.title or f"Run {request.tool_call.name}?")
            yield Static(Text(f"The model wants to run {request.tool_call.name}. This is exactly what will run:"), id="approval-lead")
            detail = describe_request(request)  # a diff (editFile) in colour: issue 26
            yield Static(diff_text(detail) if looks_like_diff(detail) else Text(visible_text(detail)), id="approval-detail", markup=False)
            with Vertical(id="approval-answers"):  # docked at the dialog's foot: on screen however long the detail
                if request.reason:
                    yield Static(Text(visible_text(f"Why you are asked: {request.reason}"), style="italic"), id="approval-reason")
                if request.offers_session or request.offers_project:  # here, not on the buttons: they fit 80 columns whatever the key
                    yield Static(Text(visible_text(self._always_text()), style="dim"), id="approval-session")
                with Horizontal(id="approval-buttons", classes="-four" if request.offers_session and request.offers_project else ""):
                    yield Button("Allow once (y)", id="allow_once", variant="success")
                    if request.offers_session and request.offers_project:
                        yield Button("This file (a)", id="allow_session", variant="primary")
                        yield Button("Project (p)", id="allow_project", variant="warning")
                    elif request.offers_session:  # offered only when it will be honoured (never for network commands)
                        yield Button("Always this session (a)", id="allow_session", variant="primary")
                    yield Button("Deny (n)", id="deny", variant="error")

    def _always_text(self) -> str:
        """What each "always" answer will let through without asking, for the rest of the session."""
        request = self.request
        if not request.offers_project:
            return f"Always this session: {request.session_key} runs without asking again."
        lines = [f"(a) Always this session: {request.session_key}"] if request.offers_session else []
        lines.append(f"(p) Always this session: {request.tool_call.name} on any file in the project")
        return "\n".join(lines)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(str(event.button.id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``a`` and ``p`` do nothing (and are not shown) when that "always" would not be honoured.

        ``a`` reads "Always: this file" (its second binding) when ``p``, the project, is offered beside it.
        """
        if action == "decide" and parameters and parameters[0] == Decision.ALLOW_SESSION:
            return self.request.offers_session and (parameters[1:] == ("file",)) == self.request.offers_project
        if action == "decide" and parameters and parameters[0] == Decision.ALLOW_PROJECT:
            return self.request.offers_project
        return True

    def action_decide(self, decision: str, scope: str = "") -> None:
        """Answer ``decision`` (``scope`` only tells the two bindings of ``a`` apart); an answer not offered does nothing."""
        request = self.request
        if (decision == Decision.ALLOW_SESSION and not request.offers_session) or (decision == Decision.ALLOW_PROJECT and not request.offers_project):
            return
        self.dismiss(Decision(decision))

    def action_scroll_detail(self, how: str) -> None:
        """Scroll the detail (the diff) by a line, a page, or to an end."""
        scroll = self.query_one("#approval-dialog", VerticalScroll)
        getattr(scroll, f"scroll_{how}")(animate=False)
