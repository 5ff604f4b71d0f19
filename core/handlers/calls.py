"""One tool call's plumbing: live events while it runs, its result's size cap and its trace status."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable

from core.types import Decision, TaskResult, ToolStatus, is_error


async def pump(queue: asyncio.Queue[Any], work: Awaitable[Any], outcome: list[Any]) -> AsyncIterator[Any]:
    """Run ``work`` as a task, yielding what it puts in ``queue`` meanwhile; its result goes to ``outcome``.

    Cancelling the consumer cancels the work and waits for it to clean up (an
    approval prompt closes, a command's processes are killed).
    """
    task = asyncio.ensure_future(work)
    try:
        while not task.done() or not queue.empty():
            if not queue.empty():
                yield queue.get_nowait()
                continue
            getter = asyncio.ensure_future(queue.get())
            try:
                await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                if not getter.done():
                    getter.cancel()
            if getter.done() and not getter.cancelled():
                yield getter.result()
        outcome.append(task.result())
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def tool_status(result: TaskResult) -> str:
    """The trace status of a finished call's result (see ``core.events.TOOL_STATUSES``).

    A command the policy refused never ran: ``refused``, or ``denied`` when the
    refusal was a user's or the approval mode's "no".
    """
    if not is_error(result):
        return ToolStatus.SUCCESS
    metadata = result.get("metadata") or {}
    if metadata.get("reason") == "denied":
        return ToolStatus.DENIED
    if metadata.get("reason") == "max_tool_calls":
        return ToolStatus.NOT_RUN
    if metadata.get("command_status") == "refused":
        return ToolStatus.DENIED if metadata.get("decision") == Decision.DENY.value else ToolStatus.REFUSED
    return ToolStatus.ERROR


def cap_result(result: TaskResult, limit: int) -> TaskResult:
    """``result`` with its content cut to ``limit`` characters, saying how much was left out.

    A tool that prints megabytes would otherwise fill the model's context, the
    history and the session transcript.
    """
    content = result.get("content", "")
    if not limit or len(content) <= limit:
        return result
    head = content[:limit]
    cut_at = head.rfind("\n")
    if cut_at > limit // 2:
        head = head[:cut_at]
    omitted = len(content) - len(head)
    note = f"\n[output truncated: {omitted:,} more characters ({content.count(chr(10), len(head)):,} lines) not shown]"
    metadata = {**(result.get("metadata") or {}), "truncated_chars": omitted, "full_chars": len(content)}
    return {**result, "content": head + note, "metadata": metadata}
