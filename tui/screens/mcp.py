"""``/mcp``: the MCP servers, their state, tools and last error; ``r`` restarts the highlighted one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.widgets.footer import KeyFooter

STATE_STYLES = {"ready": "green", "starting": "yellow", "failed": "bold red", "stopped": "dim", "disabled": "dim"}
NO_SERVERS = (
    "No MCP servers are configured.\n"
    "Add [mcp_servers.NAME] with a command (or a url) to config.toml, or trust a project with a .mcp.json "
    "(assistant-tui --trust); the README's MCP section has an example."
)


def server_row(row: dict[str, Any]) -> Table:
    """Name, state, tool count and command line of one server."""
    grid = Table.grid(expand=True, padding=(0, 2))
    grid.add_column(no_wrap=True, min_width=12)
    grid.add_column(no_wrap=True, min_width=8)
    grid.add_column(no_wrap=True, justify="right", min_width=8)
    grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis", style="dim")
    tools = len(row["tools"])
    count = f"{tools} tool{'s' if tools != 1 else ''}" if row["state"] == "ready" else ""
    grid.add_row(Text(row["name"], style="bold"), Text(row["state"], style=STATE_STYLES.get(row["state"], "")), count, row["target"])
    return grid


def server_detail(row: dict[str, Any]) -> Text:
    """What ``/mcp`` shows under the list for the highlighted server."""
    text = Text()
    text.append(row["name"], style="bold")
    text.append(" · ")
    text.append(f"{row['transport']}: {row['target']}\n", style="dim")
    text.append(f"configured in {_home_relative(row['source'])}\n", style="dim")
    if row["last_error"]:
        text.append("last error: ", style="bold red")
        text.append(row["last_error"] + "\n")
    if row["tools"]:
        text.append("tools: ", style="bold")
        for index, tool in enumerate(row["tools"]):
            if index:
                text.append(", ")
            text.append(tool["name"])
            if not tool["asks"]:
                text.append(" (allowed)", style="green")
    return text


def _home_relative(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home) :] if home != "/" and path.startswith(home + "/") else path


class McpScreen(ModalScreen[None]):
    """The servers of an ``McpManager``; refreshed whenever one changes state."""

    BINDINGS = [
        Binding("r", "restart", "Restart", tooltip="Restart the highlighted MCP server", id="mcp.restart"),
        Binding("escape", "close", "Close", id="mcp.close"),
    ]

    def __init__(self, manager: Any) -> None:
        super().__init__(classes="mcp-screen")
        self.manager = manager

    def compose(self) -> ComposeResult:
        yield KeyFooter()  # this screen's keys, not those of the conversation underneath (issue 23)
        with Vertical(id="mcp") as box:
            box.border_title = "MCP servers"
            yield OptionList(id="mcp-list")
            yield Static(id="mcp-detail")
            yield Static("r restarts the highlighted server · Esc closes", id="mcp-hint")

    def on_mount(self) -> None:
        self.manager.listeners.append(self._server_changed)
        self.refresh_rows()
        self.query_one(OptionList).focus()

    def on_unmount(self) -> None:
        if self._server_changed in self.manager.listeners:
            self.manager.listeners.remove(self._server_changed)

    def _server_changed(self, server: Any) -> None:
        self.call_later(self.refresh_rows)

    def refresh_rows(self) -> None:
        """Redraw the list (keeping the highlight) and the detail."""
        options = self.query_one(OptionList)
        rows = self.manager.status()
        highlighted = options.highlighted
        options.clear_options()
        options.add_options([Option(server_row(row), id=row["name"]) for row in rows])
        if rows:
            options.highlighted = min(highlighted or 0, len(rows) - 1)
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#mcp-detail", Static)
        rows = self.manager.status()
        index = self.query_one(OptionList).highlighted
        problems = Text("\n".join(self.manager.errors + list(self.manager.config.skipped)), style="yellow")
        if not rows:
            detail.update(Text.assemble(NO_SERVERS, "\n", problems))
        elif index is not None and index < len(rows):
            detail.update(Text.assemble(server_detail(rows[index]), "\n", problems) if problems else server_detail(rows[index]))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_detail()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()

    def action_restart(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return
        name = options.get_option_at_index(options.highlighted).id
        if name:
            self.run_worker(self.manager.restart(name), group="mcp-restart", exit_on_error=False)
            self.notify(f"Restarting MCP server {name}…")

    def action_close(self) -> None:
        self.dismiss(None)
