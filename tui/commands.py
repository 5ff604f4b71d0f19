"""The command registry: slash commands and palette actions, one list of command objects.

Prompt completion, ``/help``, the dispatcher (:func:`run`) and the command palette
(``tui.palette``) all read :data:`COMMANDS`. Each command says what it needs from
:class:`~tui.slash.CommandContext`; to add one, write its function in ``tui.slash`` and
list it here.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui import model_commands, rewinding, slash
from tui.slash import CommandContext, CommandFn
from tui.widgets.prompt import Completion

if TYPE_CHECKING:
    from tui.file_source import FileSource


@dataclass(frozen=True, kw_only=True)
class Command:
    """A slash command typed in the prompt (e.g. ``/plan <request>``) or an app action offered in the palette."""

    name: str
    """The command with its slash (``/plan``), or the palette title of an action."""
    help: str
    """One-line description."""
    args: str = ""
    """Argument synopsis shown in completion and ``/help`` (may be empty)."""
    to_model: bool = False
    """True when the whole line is sent to the model as a query (``/plan``, ``/aider``)."""
    run: CommandFn | None = None
    """What the command does (slash commands the model does not see)."""
    needs: frozenset[str] = frozenset()
    """The :class:`~tui.slash.CommandContext` fields ``run`` uses (a test checks it uses no other)."""
    action: str = ""
    """Palette-only entries: the app's Textual action to run (e.g. ``cancel_turn``)."""
    synonyms: tuple[str, ...] = ()
    """Other words people use for it; the palette matches them too."""

    @property
    def usage(self) -> str:
        return f"{self.name} {self.args}".rstrip()

    @property
    def is_slash(self) -> bool:
        return self.name.startswith("/")


def _cmd(name: str, args: str, help: str, run: CommandFn | None = None, *needs: str, to_model: bool = False, synonyms: tuple[str, ...] = ()) -> Command:
    return Command(name=name, args=args, help=help, run=run, needs=frozenset(needs), to_model=to_model, synonyms=synonyms)


def _action(name: str, action: str, help: str, synonyms: tuple[str, ...] = ()) -> Command:
    return Command(name=name, help=help, action=action, synonyms=synonyms)


COMMANDS: tuple[Command, ...] = (
    _action("Cancel the running reply", "cancel_turn", "Esc: stop streaming and running tools", synonyms=('stop', 'abort', 'interrupt')),
    _action("Pick files into the context", "pick_files", "ctrl+o: fuzzy file picker", synonyms=('files', 'open file', 'attach', 'add files', 'context')),
    _action("Focus the context pane", "toggle_focus('context')", "ctrl+g (again: back to the prompt)", synonyms=('files', 'context', 'pinned files')),
    _action("Focus the tool trace", "toggle_focus('trace')", "ctrl+t (again: back to the prompt)", synonyms=('tools', 'tool calls', 'log', 'activity')),
    _action("Focus the chat", "toggle_focus('chat')", "ctrl+l: scroll it (again: back to the prompt)", synonyms=('scroll', 'read', 'answers')),
    _action("Focus the prompt", "toggle_focus('prompt')", "esc (from a pane)", synonyms=('input', 'type')),
    _action("Quit", "quit", "ctrl+q", synonyms=('exit', 'close')),
    _action("Show the whole conversation", "transcript", "f2: every message, including pruned ones", synonyms=('transcript', 'history', 'conversation', 'messages', 'scrollback', 'log')),
    _action("Show or hide the model's thinking", "toggle_thinking", "f3: the newest thinking block", synonyms=('reasoning', 'thoughts')),
    _cmd("/plan", "<request>", "Ask for a step-by-step plan, shown as a checklist", to_model=True, synonyms=('steps', 'checklist', 'todo')),
    _cmd("/aider", "<instruction>", "Have aider edit the code (the model picks how)", to_model=True, synonyms=('edit code', 'change code', 'refactor', 'fix')),
    _cmd("/continue", "", "Have the model go on with an answer cut off at the output limit", to_model=True, synonyms=('go on', 'more', 'cut off', 'truncated')),
    _cmd("/task", "<name> key=value... or list", "Run a structured task directly, no model needed", slash.task, "conversation", synonyms=('tasks', 'template', 'structured')),
    _cmd("/test", "[args]", "Run the project's tests in the sandbox; the output joins the conversation", slash.sandbox_test, "engine", "chat", "conversation", synonyms=('tests', 'pytest', 'check')),
    _cmd("/run", "<command>", "Run a command in the sandbox; the output joins the conversation", slash.sandbox_run, "chat", "prompt", "conversation", synonyms=('shell', 'command', 'execute', 'terminal')),
    _cmd("/add", "<glob or path>", "Add files to the context", slash.add, "files", "chat", synonyms=('files', 'context', 'attach', 'include', 'pin')),
    _cmd("/drop", "<glob or path>", "Drop files from the context", slash.drop, "files", "chat", synonyms=('remove file', 'unpin', 'exclude', 'context')),
    _cmd("/files", "", "List the files in the context", slash.files, "engine", "chat", synonyms=('context', 'pinned', 'list files')),
    _cmd("/rewind", "[turn]", "Undo: restore files, conversation or both to before a turn (shows the diff)", rewinding.rewind, "chat", "conversation", "engine", "screens", "sessions", synonyms=('undo', 'revert', 'checkpoint', 'restore', 'go back')),
    _cmd("/reset", "", "Clear the conversation and the trace (picked files stay)", slash.reset, "sessions", "files", "chat", synonyms=('clear', 'forget', 'wipe', 'conversation')),
    _cmd("/sessions", "", "Browse saved sessions", slash.sessions, "sessions", "chat", "screens", synonyms=('history', 'conversations', 'resume', 'switch session', 'open session')),
    _cmd("/new", "", "Start a new session", slash.reset, "sessions", "files", "chat", synonyms=('new conversation', 'fresh', 'start over')),
    _cmd("/export", "[path]", "Write the conversation as Markdown (default: the state directory)", slash.export, "sessions", synonyms=('save', 'transcript', 'markdown', 'download', 'conversation')),
    _cmd("/cost", "", "Tokens, cache hit rate and estimated cost, per turn and per model", slash.cost, "engine", "chat", synonyms=('tokens', 'usage', 'price', 'spend', 'money')),
    _cmd("/compact", "[focus]", "Compact the conversation now: old tool results pruned, the older part summarized (f2 still shows all)", model_commands.compact, "engine", "chat", "conversation", synonyms=('summarize', 'shrink', 'context full', 'window')),
    _cmd("/model", "[name]", "List the configured providers' models (window, price) or switch for the next turn", model_commands.model, "engine", "chat", "conversation", synonyms=('switch model', 'provider', 'llm', 'gpt', 'claude')),
    _cmd("/budget", "", "Give the session a fresh budget allowance after a budget stop", slash.budget, "engine", "chat", synonyms=('limit', 'allowance', 'spend')),
    _cmd("/mcp", "", "MCP servers: state, tools, last error; r restarts one", slash.mcp, "engine", "chat", "screens", synonyms=('servers', 'tools', 'plugins')),
    _cmd("/help", "", "List keys and commands", slash.help_, "keys", "commands", "chat", synonyms=('keys', 'shortcuts', 'keyboard', 'commands')),
    _cmd("/quit", "", "Quit assistant-tui", slash.quit_, "screens", synonyms=('exit', 'close')),
)

SLASH_COMMANDS: tuple[Command, ...] = tuple(command for command in COMMANDS if command.is_slash)
"""The commands typed in the prompt, in the order completion and ``/help`` show them."""

_BY_NAME = {command.name: command for command in SLASH_COMMANDS}


def find_command(name: str) -> Command | None:
    """The command called ``name`` (with its slash), or None."""
    return _BY_NAME.get(name)


def suggest(name: str, limit: int = 2) -> list[Command]:
    """Slash commands a user who typed the unknown ``name`` (``/undo``, ``/exit``, ``/exprot``) probably meant.

    Commands that list the word among their synonyms come first (``/undo`` is ``/rewind``), then
    names that differ by a typo.
    """
    word = name.lstrip("/").lower()
    by_synonym = [command for command in SLASH_COMMANDS if word in command.synonyms]
    close = difflib.get_close_matches("/" + word, [command.name for command in SLASH_COMMANDS], n=limit, cutoff=0.7)
    found = by_synonym + [_BY_NAME[match] for match in close if _BY_NAME[match] not in by_synonym]
    return found[:limit]


def unknown_command_text(name: str) -> str:
    """What the chat says about an unknown command: the command it probably meant (with what it does), and where the rest are."""
    meant = suggest(name)
    if len(meant) == 1:
        hint = f" Did you mean {meant[0].usage}? {meant[0].help.rstrip('.')}."
    elif meant:
        hint = " Did you mean " + " or ".join(command.name for command in meant) + "?"
    else:
        hint = ""
    return f"Unknown command {name}.{hint} Type /help for the list (start with // to send a message beginning with /)."


def complete_command(prefix: str) -> list[Command]:
    """Commands whose name starts with ``prefix`` (e.g. ``/p``), in table order."""
    prefix = prefix.lower()
    return [command for command in SLASH_COMMANDS if command.name.startswith(prefix)]


def complete(line: str, *, files: "FileSource") -> tuple[int, list[Completion]] | None:
    """The prompt's completer: slash commands at the start of the line, ``@`` files anywhere (the line is up to the cursor)."""
    if line.startswith("/") and " " not in line:
        return 0, [Completion(c.name, c.usage, c.help) for c in complete_command(line)]
    at = line.rfind("@")
    if at != -1 and (at == 0 or line[at - 1].isspace()) and " " not in line[at:]:
        return at, [Completion("@" + path, path, "", kind="file", highlight=tuple(hl)) for path, hl in files.search(line[at + 1 :], 8)]
    return None


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


async def run(ctx: CommandContext, name: str, args: str) -> None:
    """Run the slash command ``name`` (with its slash) that needs no model."""
    command = find_command(name)
    if command is None or command.run is None:
        await slash.note(ctx.chat, f"{name} is not available in this version yet.", "warning")
        return
    await command.run(ctx, args)


async def submit(ctx: CommandContext, text: str) -> None:
    """What the user sent: a slash command run here, or a query (``/plan …``, ``//…``) for the model."""
    parsed = parse_command(text)
    command = find_command(parsed[0]) if parsed else None
    if parsed and command is None:
        await slash.note(ctx.chat, unknown_command_text(parsed[0]), "warning")
        ctx.prompt.restore(text)
    elif parsed and command is not None and not command.to_model:
        await run(ctx, command.name, parsed[1])
    else:
        await ctx.conversation.start(text[1:] if text.lstrip().startswith("//") else text)
