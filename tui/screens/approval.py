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
    """Ask whether a tool call may run: allow once (y), always this session (a), deny (n/Esc)."""

    BINDINGS = [
        Binding("y", "decide('allow_once')", "Allow once", id="approval.once"),
        Binding("a", "decide('allow_session')", "Always this session", id="approval.session"),
        Binding("n,escape", "decide('deny')", "Deny", id="approval.deny"),
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
        with Vertical(id="approval-dialog") as dialog:
            dialog.border_title = visible_text(request.title or f"Run {request.tool_call.name}?")
            yield Static(Text(f"The model wants to run {request.tool_call.name}. This is exactly what will run:"), id="approval-lead")
            with VerticalScroll(id="approval-detail-scroll"):
                detail = describe_request(request)  # a diff (editFile) in colour: issue 26
                yield Static(diff_text(detail) if looks_like_diff(detail) else Text(visible_text(detail)), id="approval-detail", markup=False)
            if request.reason:
                yield Static(Text(visible_text(f"Why you are asked: {request.reason}"), style="italic"), id="approval-reason")
            if request.session_key:  # here, not on the button: the three buttons fit 80 columns whatever the key
                yield Static(Text(visible_text(f"Always this session: {request.session_key} runs without asking again."), style="dim"), id="approval-session")
            with Horizontal(id="approval-buttons"):
                yield Button("Allow once (y)", id="allow_once", variant="success")
                if request.offers_session:  # offered only when it will be honoured (never for network commands)
                    yield Button("Always this session (a)", id="allow_session", variant="primary")
                yield Button("Deny (n)", id="deny", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(str(event.button.id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``a`` does nothing (and is not shown) when "always" would not be honoured."""
        if action == "decide" and parameters == ("allow_session",) and not self.request.offers_session:
            return False
        return True

    def action_decide(self, decision: str) -> None:
        if decision == Decision.ALLOW_SESSION and not self.request.offers_session:
            return
        self.dismiss(Decision(decision))
