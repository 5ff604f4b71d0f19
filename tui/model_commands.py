"""``/compact [focus]`` and ``/model [name]`` (issue 27): the TUI's side of ``core.compaction.commands``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.slash import CommandContext


def _refresh_status(app: Any, engine: Any) -> None:
    """The status line after a change between turns: the model's name and the context figure."""
    status: Any = getattr(app, "status", None)
    if status is not None:
        status.set_provider(engine.provider_label)
        status.update_metrics(engine.session.metrics())


async def compact(ctx: "CommandContext", args: str) -> None:
    """Compact the conversation now, with an optional focus for the summary."""
    from core.compaction.compactor import CompactionFailed
    from tui.widgets.chat import NoteMessage

    if ctx.conversation.running:
        await ctx.chat.add(NoteMessage("A reply is running: /compact when it has finished (or Esc first).", kind="warning", title="/compact"))
        return
    try:
        line = await ctx.engine.session.compact(args.strip())
    except CompactionFailed as exc:
        await ctx.chat.add(NoteMessage(str(exc), kind="warning", title="/compact"))
        return
    await ctx.chat.add(NoteMessage(line, kind="info", title="/compact"))
    _refresh_status(ctx.screens, ctx.engine)


async def model(ctx: "CommandContext", args: str) -> None:
    """``/model``: the configured providers' models with window and price; ``/model NAME`` switches for the next turn."""
    from core.compaction.commands import ModelSwitchError, model_listing
    from tui.widgets.chat import MarkdownNote, NoteMessage

    if not args.strip():
        listing = await model_listing(ctx.engine.session.handler)
        await ctx.chat.add(MarkdownNote(f"```\n{listing}\n```", title="/model"))
        return
    if ctx.conversation.running:
        await ctx.chat.add(NoteMessage("A reply is running: switch models when it has finished.", kind="warning", title="/model"))
        return
    try:
        line = await ctx.engine.session.switch_model(args.strip())
    except ModelSwitchError as exc:
        await ctx.chat.add(NoteMessage(str(exc), kind="warning", title="/model"))
        return
    await ctx.chat.add(NoteMessage(line, kind="info", title="/model"))
    _refresh_status(ctx.screens, ctx.engine)
