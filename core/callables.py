"""Calling a function that may be sync or async, in one way everywhere.

Tool executors, task executors, the SPEC's direct and subtask tools and the
aider context lookup may each be a plain function or a coroutine function.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable


async def call_sync_or_async(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Call ``function`` without blocking the event loop and return its result.

    A coroutine function (or an object whose ``__call__`` is one) is awaited on the
    loop; anything else runs in a worker thread (it may block: a file read, an
    index that is still being built), and an awaitable it returns is awaited.

    Args:
        function: The callable.
        *args: Positional arguments for it.
        **kwargs: Keyword arguments for it.
    """
    if inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(getattr(function, "__call__", None)):
        return await function(*args, **kwargs)
    value = await asyncio.to_thread(function, *args, **kwargs)
    return await value if inspect.isawaitable(value) else value
