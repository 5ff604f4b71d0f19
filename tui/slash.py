"""What the slash commands do that need no model: /help, /reset, /add, /drop, /files, /task, /run …

Each function receives a :class:`CommandContext` (the services a command may use) and its
arguments; ``tui.commands`` lists them, with what each needs, in the one registry.
"""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence

from textual.binding import Binding

from tui.format import context_figure, format_tokens
from tui.help import LongNote, help_renderable
from tui.widgets.chat import MarkdownNote, NoteMessage

if TYPE_CHECKING:
    from tui.hosts import CommandHost

    from tui.context_ops import FileContext
    from tui.conversation import Conversation
    from tui.engine import Engine
    from tui.sessions import Sessions
    from tui.widgets.chat import ChatView
    from tui.widgets.prompt import PromptInput


@dataclass(frozen=True, kw_only=True)
class CommandContext:
    """The services a command may use; a command's ``needs`` names the ones it does."""

    engine: "Engine"
    """The Application and its handler (``engine.application`` may be None: the engine did not start)."""
    chat: "ChatView"
    """Where a command writes its notes."""
    prompt: "PromptInput"
    files: "FileContext"
    """The file context (/add, /drop, /files)."""
    sessions: "Sessions"
    """The session store and the current session (/new, /sessions, /export)."""
    conversation: "Conversation"
    """The turn worker (/task, /run, /test)."""
    screens: "CommandHost"
    """What a command may ask of the app (a screen, quitting): :class:`tui.hosts.CommandHost`."""
    keys: Callable[[], Sequence[tuple[str, list[Binding]]]]
    """The key bindings by where they work (/help; gathered when asked, so the screens they name load then)."""
    commands: Sequence[Any]
    """The command registry (/help)."""


CommandFn = Callable[[CommandContext, str], Awaitable[None]]


async def note(chat: "ChatView", text: str, kind: str = "info", title: str = "") -> None:
    """Write a note into the chat."""
    await chat.add(NoteMessage(text, kind=kind, title=title))  # type: ignore[arg-type]


async def help_(ctx: CommandContext, args: str) -> None:
    widget = LongNote(help_renderable(ctx.keys(), ctx.commands), classes="md-note help")
    widget.border_title = "Keys and commands"
    await ctx.chat.add(widget)


async def quit_(ctx: CommandContext, args: str) -> None:
    ctx.screens.exit()


async def reset(ctx: CommandContext, args: str) -> None:
    await ctx.sessions.new()
    kept = len(ctx.files.pinned)
    if kept:
        await note(ctx.chat, f"{kept} picked file{'s' if kept != 1 else ''} stay in context (/drop to remove).")


async def sessions(ctx: CommandContext, args: str) -> None:
    if not ctx.sessions.supported:
        await note(ctx.chat, "Sessions are not available: the engine did not start.", "warning")
        return
    from core.sessions import SessionError

    from tui.screens.sessions import SessionPickerScreen

    try:
        found = await asyncio.to_thread(ctx.sessions.list_sessions)
    except SessionError as exc:
        await note(ctx.chat, str(exc), "error", "/sessions")
        return
    current = ctx.sessions.current_id

    async def chosen(session_id: str | None) -> None:
        if session_id and session_id != current:
            await ctx.sessions.switch(session_id)

    ctx.screens.push_screen(SessionPickerScreen(found, current), chosen)


async def export(ctx: CommandContext, args: str) -> None:
    await ctx.sessions.export(args)


async def add(ctx: CommandContext, args: str) -> None:
    if not args:
        await note(ctx.chat, "Usage: /add <glob or path>, e.g. /add src/**/*.py", "warning")
        return
    added = 0
    for pattern in args.split():
        outcome = await ctx.files.add_files(pattern)
        if not outcome.confirming:
            added += len(outcome.added)
    if added:
        await note(ctx.chat, f"Added {added} file{'s' if added != 1 else ''} to the context.")


async def drop(ctx: CommandContext, args: str) -> None:
    if not args:
        await note(ctx.chat, "Usage: /drop <glob or path>", "warning")
        return
    dropped = [path for pattern in args.split() for path in await ctx.files.drop_files(pattern)]
    message = f"Dropped {len(dropped)} file{'s' if len(dropped) != 1 else ''}." if dropped else f"Nothing in the context matches {args!r}."
    await note(ctx.chat, message, "info" if dropped else "warning")


async def files(ctx: CommandContext, args: str) -> None:
    """``/files``: the picked files and the context figure, as the session's file context and metrics give them."""
    picked = [entry for entry in ctx.engine.session.context.entries() if entry.source == "picked"]
    if not picked:
        await note(ctx.chat, "No files in the context. Add some with @, ctrl+o or /add <glob>.")
        return
    rows = [f"- `{entry.display}` · {format_tokens(entry.tokens)} tokens{' · read-only' if entry.read_only else ''}" for entry in picked]
    figure = context_figure(ctx.engine.metrics() or {})[1]
    rows.append(f"\nFiles **{format_tokens(sum(entry.tokens for entry in picked))}** tokens · context **{figure}** tokens")
    await ctx.chat.add(MarkdownNote("\n".join(rows), title=f"Context · {len(picked)} files"))


async def cost(ctx: CommandContext, args: str) -> None:
    from tui.cost import cost_report

    widget = LongNote(cost_report(ctx.engine.session), classes="md-note cost")  # the totals first
    widget.border_title = "Cost"
    await ctx.chat.add(widget)


async def budget(ctx: CommandContext, args: str) -> None:
    from tui.cost import budget_message

    await note(ctx.chat, budget_message(ctx.engine.session), "info", "/budget")


async def task(ctx: CommandContext, args: str) -> None:
    await ctx.conversation.run_task(args)


async def mcp(ctx: CommandContext, args: str) -> None:
    manager = ctx.engine.mcp
    if manager is None:
        await note(ctx.chat, "MCP servers are not available: the engine did not start.", "warning")
        return
    from tui.screens.mcp import McpScreen

    ctx.screens.push_screen(McpScreen(manager))


async def sandbox_test(ctx: CommandContext, args: str) -> None:
    from core.tools.testcmd import TestCommandError

    application = ctx.engine.application
    if application is None:
        await note(ctx.chat, "The engine did not start (see the message above).", "error", "/test")
        return
    try:
        argv = application.test_argv() + shlex.split(args)
    except (TestCommandError, ValueError) as exc:
        await note(ctx.chat, str(exc), "error", "/test")
        return
    await ctx.conversation.run_command(argv, f"/test {args}".rstrip())


async def sandbox_run(ctx: CommandContext, args: str) -> None:
    try:
        argv = shlex.split(args)
    except ValueError as exc:
        await note(ctx.chat, f"/run: {exc}. Quote arguments like a shell would.", "warning")
        ctx.prompt.restore(f"/run {args}")
        return
    if not argv:
        await note(ctx.chat, "Usage: /run <command>, e.g. /run pytest -q tests/test_calc.py (no shell; use /run sh -c '...' for one)", "warning")
        return
    await ctx.conversation.run_command(argv, f"/run {args}")
