"""``/compact [focus]`` and ``/model [name]`` (issue 27): the TUI's side of ``core.compaction.commands``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

if TYPE_CHECKING:
    from tui.conversation import Conversation
    from tui.slash import CommandContext
    from tui.widgets.chat import ChatView


async def _between_turns(chat: "ChatView", conversation: "Conversation", title: str, change: Callable[[], Awaitable[str]], refused: type[Exception]) -> None:
    """Make a change that must not happen mid-turn; say what it did (or why not) and redraw the status line."""
    from tui.widgets.chat import NoteMessage

    if conversation.running:
        await chat.add(NoteMessage(f"A reply is running: {title} when it has finished (or Esc first).", kind="warning", title=title))
        return
    try:
        line = await change()
    except refused as exc:
        await chat.add(NoteMessage(str(exc), kind="warning", title=title))
        return
    await chat.add(NoteMessage(line, kind="info", title=title))
    conversation.refresh_metrics(provider=True)


async def compact(ctx: "CommandContext", args: str) -> None:
    """Compact the conversation now, with an optional focus for the summary."""
    from core.compaction.compactor import CompactionFailed

    session = ctx.engine.session
    await _between_turns(ctx.chat, ctx.conversation, "/compact", lambda: session.compact(args.strip()), CompactionFailed)


async def model(ctx: "CommandContext", args: str) -> None:
    """``/model``: the configured providers' models with window and price; ``/model NAME`` switches for the next turn."""
    from core.compaction.commands import ModelSwitchError, model_listing
    from tui.widgets.chat import MarkdownNote

    session = ctx.engine.session
    if not args.strip():
        await ctx.chat.add(MarkdownNote(await model_listing(session.handler), title="/model"))
        return
    await _between_turns(ctx.chat, ctx.conversation, "/model", lambda: session.switch_model(args.strip()), ModelSwitchError)
