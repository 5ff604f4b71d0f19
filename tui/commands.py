"""Slash commands: the one table the prompt completion, ``/help`` and the dispatcher share."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    """A command typed in the prompt, e.g. ``/plan <request>``."""

    name: str
    """The command with its slash, e.g. ``/plan``."""
    args: str
    """Argument synopsis shown in completion and ``/help`` (may be empty)."""
    help: str
    """One-line description."""
    to_model: bool = False
    """True when the whole line is sent to the model as a query (``/plan``, ``/aider``)."""

    @property
    def usage(self) -> str:
        return f"{self.name} {self.args}".rstrip()


SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("/plan", "<request>", "Ask for a step-by-step plan, shown as a checklist", to_model=True),
    SlashCommand("/aider", "<instruction>", "Have aider edit the code (the model picks how)", to_model=True),
    SlashCommand("/continue", "", "Have the model go on with an answer cut off at the output limit", to_model=True),
    SlashCommand("/task", "<name> key=value... or list", "Run a structured task directly, no model needed"),
    SlashCommand("/test", "[args]", "Run the project's tests in the sandbox; the output joins the conversation"),
    SlashCommand("/run", "<command>", "Run a command in the sandbox; the output joins the conversation"),
    SlashCommand("/add", "<glob or path>", "Add files to the context"),
    SlashCommand("/drop", "<glob or path>", "Drop files from the context"),
    SlashCommand("/files", "", "List the files in the context"),
    SlashCommand("/reset", "", "Clear the conversation and the trace (picked files stay)"),
    SlashCommand("/sessions", "", "Browse saved sessions"),
    SlashCommand("/new", "", "Start a new session"),
    SlashCommand("/export", "[path]", "Write the conversation as Markdown (default: the state directory)"),
    SlashCommand("/cost", "", "Tokens, cache hit rate and estimated cost, per turn and per model"),
    SlashCommand("/budget", "", "Give the session a fresh budget allowance after a budget stop"),
    SlashCommand("/mcp", "", "MCP servers: state, tools, last error; r restarts one"),
    SlashCommand("/help", "", "List keys and commands"),
    SlashCommand("/quit", "", "Quit assistant-tui"),
)

_BY_NAME = {command.name: command for command in SLASH_COMMANDS}


def find_command(name: str) -> SlashCommand | None:
    """The command called ``name`` (with its slash), or None."""
    return _BY_NAME.get(name)


def complete_command(prefix: str) -> list[SlashCommand]:
    """Commands whose name starts with ``prefix`` (e.g. ``/p``), in table order."""
    prefix = prefix.lower()
    return [command for command in SLASH_COMMANDS if command.name.startswith(prefix)]


def parse_command(text: str) -> tuple[str, str] | None:
    """Split ``/name rest`` into ``("/name", "rest")``; None when the text is not a command.

    A leading ``//`` escapes the slash (the text is a query starting with ``/``).
    """
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, rest = stripped.partition(" ")
    if len(name) < 2 or not name[1:].replace("-", "").replace("_", "").isalnum():
        return None
    return name.lower(), rest.strip()
