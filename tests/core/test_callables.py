"""The one way to call a sync-or-async function: sync ones never run on the event loop's thread."""

from __future__ import annotations

import threading

from core.callables import call_sync_or_async


async def test_sync_functions_run_in_a_worker_thread_and_async_ones_on_the_loop() -> None:
    loop_thread = threading.get_ident()

    def blocking(x: int, *, y: int) -> tuple[int, bool]:
        return x + y, threading.get_ident() == loop_thread

    async def coroutine(x: int) -> tuple[int, bool]:
        return x, threading.get_ident() == loop_thread

    class AsyncCallable:
        async def __call__(self, x: int) -> tuple[int, bool]:
            return x * 2, threading.get_ident() == loop_thread

    async def later() -> str:
        return "awaited"

    assert await call_sync_or_async(blocking, 1, y=2) == (3, False)
    assert await call_sync_or_async(coroutine, 4) == (4, True)
    assert await call_sync_or_async(AsyncCallable(), 5) == (10, True)
    assert await call_sync_or_async(lambda: later()) == "awaited"  # a sync wrapper returning a coroutine
