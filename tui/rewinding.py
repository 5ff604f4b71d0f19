"""``/rewind``: choose a turn on :class:`~tui.screens.rewind.RewindScreen`, then rewind files, conversation or both (issue 26).

The planning and the writes run in a thread (``core.checkpoints.rewind``); after a conversation
rewind the chat and the trace are redrawn from the transcript, which now ends before that turn.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.slash import CommandContext


async def rewind(ctx: "CommandContext", args: str) -> None:
    """Open the rewind screen (``/rewind 3`` starts on turn 3)."""
    from core.checkpoints.rewind import apply, find_row, list_rows, plan
    from core.checkpoints.shadow import CheckpointError
    from tui.screens.rewind import RewindChoice, RewindScreen
    from tui.widgets.chat import NoteMessage

    chat, conversation = ctx.chat, ctx.conversation
    checkpoints = ctx.engine.checkpoints
    if checkpoints is None:
        await chat.add(NoteMessage("Rewinding needs the engine, which did not start.", kind="warning"))
        return
    if conversation.running:
        await chat.add(NoteMessage("A reply is running: wait for it (or Esc) before rewinding.", kind="warning"))
        return
    rows = await asyncio.to_thread(list_rows, checkpoints)
    if not rows:
        await chat.add(NoteMessage("Nothing to rewind yet: this session has no turns.", kind="info"))
        return

    async def plan_for(row: Any) -> Any:
        return await asyncio.to_thread(plan, checkpoints, row)

    async def chosen(choice: RewindChoice | None) -> None:
        if choice is None:
            return
        try:
            row, _ = await asyncio.to_thread(find_row, checkpoints, choice.key)
            the_plan = await plan_for(row) if choice.files else None
            outcome = await asyncio.to_thread(apply, checkpoints, the_plan or _empty(row), files=choice.files,
                                              conversation=choice.conversation, force=choice.force)
        except (CheckpointError, OSError) as exc:
            await chat.add(NoteMessage(str(exc), kind="error", title="/rewind"))
            return
        if outcome.conversation:
            await _redraw(ctx.engine, conversation, ctx.sessions)
        await chat.add(NoteMessage(outcome.message(row), kind="info", title="Rewound"))

    ctx.screens.push_screen(RewindScreen(rows, plan_for, selected=args.strip()), chosen)


def _empty(row: Any) -> Any:
    from core.checkpoints.rewind import RewindPlan

    return RewindPlan(row=row)


async def _redraw(engine: Any, conversation: Any, sessions: Any) -> None:
    """Redraw the chat and the trace from the transcript (the conversation now ends before the rewound turn)."""
    from core.sessions import load_session

    stored = engine.session.stored
    await conversation.chat.clear()
    await conversation.trace.clear()
    if stored is not None and stored.path.exists():
        await sessions.restore(await asyncio.to_thread(load_session, stored))
