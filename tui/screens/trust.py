"""The trust question: what a project's own configuration would change, and whether to let it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from core.text import visible_text
from core.trust_changes import ProjectChanges
from tui.widgets.footer import KeyFooter


def describe_changes(changes: ProjectChanges) -> Text:
    """Everything trusting would change, as plain text (no markup: it is the repository's text)."""
    text = Text()
    if changes.settings:
        text.append("Settings from .env\n", style="bold")
        for change in changes.settings:
            text.append(f"  {visible_text(change.variable)} = ")
            text.append(visible_text(change.shown) + "\n", style="bold")
    if changes.servers:
        text.append("MCP servers from .mcp.json: programs started as you\n", style="bold")
        for server in changes.servers:
            text.append(f"  {visible_text(server.name)}: ")
            text.append(visible_text(server.runs) + "\n", style="bold")
            if server.setting:
                text.append(f"    {visible_text(server.setting)}\n")
    if changes.problems:
        text.append("Entries of .mcp.json that could not be used\n", style="bold")
        for problem in changes.problems:
            text.append(f"  {visible_text(problem)}\n")
    text.rstrip()
    return text


class TrustScreen(ModalScreen[bool]):
    """Ask whether to trust the project: True (t, "Trust this project"), False (n, Esc, "Not now")."""

    CSS_PATH = "trust.tcss"
    BINDINGS = [
        Binding("t", "answer(True)", "Trust", id="trust.trust"),
        Binding("n,escape", "answer(False)", "Not now", id="trust.not_now"),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
    ]

    AUTO_FOCUS = "#not-now"
    """Not now is focused: Enter never trusts anything by accident."""

    def __init__(self, changes: ProjectChanges) -> None:
        super().__init__(classes="trust-screen")
        self.changes = changes

    def compose(self) -> ComposeResult:
        yield KeyFooter()  # this screen's keys, not those of the conversation underneath (issue 23)
        with Vertical(id="trust-dialog") as dialog:
            dialog.border_title = "Trust this project?"
            yield Static(Text(f"{visible_text(str(self.changes.root))} brings its own configuration. None of it "
                              "applies until you trust the project. Trusting it would:"), id="trust-lead")
            with VerticalScroll(id="trust-changes-scroll"):
                yield Static(describe_changes(self.changes), id="trust-changes", markup=False)
            yield Static(Text("Trust only a project whose files you know. Not now: it runs with its configuration "
                              "ignored, and you are asked again next start.", style="italic"), id="trust-hint")
            with Horizontal(id="trust-buttons"):
                yield Button("Trust this project (t)", id="trust", variant="warning")
                yield Button("Not now (n)", id="not-now", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "trust")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
