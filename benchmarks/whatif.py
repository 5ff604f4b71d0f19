"""What-if patches: the fixes proposed in FINDINGS.md, applied at run time so owners can measure them.

``python -m benchmarks --whatif coalesce,status --only firehose,keys`` runs the
benchmarks with these patches applied in every benchmark process (through the
``BENCH_WHATIF`` environment variable). Nothing here changes the app's files;
the report says which patches were on, and is written to the cache directory
unless ``--output`` is given.
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any, Callable

ENV = "BENCH_WHATIF"


def _status() -> None:
    """StatusLine.set_state does nothing when the state is unchanged, and never asks for a layout."""
    from tui.widgets.status import StatusLine

    original = StatusLine.set_state

    def set_state(self: Any, state: str) -> None:
        if state != self.state:
            original(self, state)

    StatusLine.set_state = set_state  # type: ignore[method-assign]


def _coalesce(interval: float = 0.05) -> None:
    """AssistantMessage.append writes to the Markdown stream at most every ``interval`` seconds."""
    from tui.widgets.chat import AssistantMessage

    append, finish = AssistantMessage.append, AssistantMessage.finish

    async def flush(self: Any) -> None:
        self._whatif_timer = None
        text, self._whatif_buffer = getattr(self, "_whatif_buffer", ""), ""
        if text and not self.finished:
            self._whatif_flushed = time.perf_counter()
            await append(self, text)

    async def coalesced(self: Any, fragment: str) -> None:
        self._whatif_buffer = getattr(self, "_whatif_buffer", "") + fragment
        if time.perf_counter() - getattr(self, "_whatif_flushed", 0.0) >= interval:
            await flush(self)
        elif getattr(self, "_whatif_timer", None) is None:
            self._whatif_timer = self.set_timer(interval, lambda: flush(self))

    async def finishing(self: Any, content: str | None = None, *, interrupted: bool = False) -> None:
        text, self._whatif_buffer = getattr(self, "_whatif_buffer", ""), ""
        if text and not self.finished:
            await append(self, text)
        await finish(self, content, interrupted=interrupted)

    AssistantMessage.append = coalesced  # type: ignore[method-assign]
    AssistantMessage.finish = finishing  # type: ignore[method-assign]


def _gcfreeze() -> None:
    """``gc.collect(); gc.freeze()`` when a turn starts and when the file picker opens."""
    from core import events as ev
    from tui.app import AssistantApp
    from tui.turn import TurnRenderer

    handle, pick = TurnRenderer.handle, AssistantApp.action_pick_files

    async def handling(self: Any, event: Any) -> None:
        if isinstance(event, ev.TurnStarted):
            gc.collect()
            gc.freeze()
        await handle(self, event)

    async def picking(self: Any) -> None:
        gc.collect()
        gc.freeze()
        await pick(self)

    TurnRenderer.handle = handling  # type: ignore[method-assign]
    AssistantApp.action_pick_files = picking  # type: ignore[method-assign]


def _window() -> None:
    """A smaller live tree: 60 chat nodes, 20 trace views, 40 records redrawn on resume."""
    import tui.sessions
    from tui.widgets.chat import ChatView
    from tui.widgets.trace import ToolTrace

    ChatView.max_nodes = 60
    ToolTrace.max_live = 20
    tui.sessions.RESTORE_RECORDS = 40


PATCHES: dict[str, Callable[[], None]] = {"status": _status, "coalesce": _coalesce, "gcfreeze": _gcfreeze, "window": _window}
"""Name -> patch; see each function's docstring."""


def active() -> list[str]:
    """The patches asked for in the environment."""
    return [name for name in os.environ.get(ENV, "").split(",") if name]


def apply_from_environment() -> list[str]:
    """Apply the patches named in ``BENCH_WHATIF``; returns their names.

    Raises:
        ValueError: an unknown patch name.
    """
    names = active()
    unknown = sorted(set(names) - set(PATCHES))
    if unknown:
        raise ValueError(f"unknown what-if patch(es): {', '.join(unknown)}; choose from {', '.join(PATCHES)}")
    for name in names:
        PATCHES[name]()
    return names
