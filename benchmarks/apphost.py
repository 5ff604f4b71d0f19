"""Running the real app headless against the fake server, and observing its frames.

Textual's headless driver composes every frame (layout, widget rendering, the
compositor's update) but does not turn it into terminal escape codes; the
:class:`PaintRecorder` does that conversion too (``render_segments``, exactly
what the terminal driver would write), so a frame costs what it costs in a
terminal, and timestamps every frame.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator

from core.config import Settings

SIZE = (120, 40)
"""Terminal size of every benchmarked app."""

Clock = Callable[[], float]


def bench_settings(project_root: Path, url: str, **changes: Any) -> Settings:
    """Settings for a benchmark: Anthropic against the fake server, tools allowed."""
    values: dict[str, Any] = dict(
        provider="anthropic",
        anthropic_api_key="sk-ant-bench-not-a-real-key",
        anthropic_base_url=url,
        project_root=project_root,
        approval_mode="allow",
        max_retries=0,
    )
    values.update(changes)
    return Settings(**values)


class StreamClock:
    """Wraps a provider's ``stream_message`` to timestamp the text chunks it yields."""

    def __init__(self, provider: Any) -> None:
        self.chunks: list[float] = []
        original = provider.stream_message

        async def stream_message(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            from core.events import TextDelta

            async for item in original(*args, **kwargs):
                if isinstance(item, TextDelta):
                    self.chunks.append(time.perf_counter())
                yield item

        provider.stream_message = stream_message

    @property
    def first(self) -> float | None:
        return self.chunks[0] if self.chunks else None

    @property
    def last(self) -> float | None:
        return self.chunks[-1] if self.chunks else None


class PaintRecorder:
    """Timestamps every frame an app paints (and renders it to escape codes like a terminal would).

    ``listeners`` are called with the frame's time after each frame.
    """

    def __init__(self, app: Any, *, render_terminal: bool = True) -> None:
        from textual._compositor import CompositorUpdate

        self.times: list[float] = []
        self.listeners: list[Callable[[float], None]] = []
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            if renderable is not None and not app._batch_count:
                if render_terminal and isinstance(renderable, CompositorUpdate):
                    renderable.render_segments(app.console)
                now = time.perf_counter()
                self.times.append(now)
                for listener in list(self.listeners):
                    listener(now)
            original(screen, renderable)

        app._display = display

    def first_after(self, moment: float) -> float | None:
        """The first frame painted after ``moment``."""
        return next((t for t in self.times if t > moment), None)

    def count_between(self, start: float, end: float) -> int:
        return sum(1 for t in self.times if start <= t <= end)


@contextlib.contextmanager
def track_markdown(on_append: Callable[[Any, float], None]) -> Iterator[None]:
    """Call ``on_append(widget, when)`` each time any ``Markdown.append`` has mounted its blocks."""
    from textual.widgets import Markdown

    original = Markdown.append

    def append(self: Any, markdown: str) -> Any:
        pending = original(self, markdown)

        async def finished() -> None:
            await pending
            on_append(self, time.perf_counter())

        return finished()

    Markdown.append = append  # type: ignore[method-assign]
    try:
        yield
    finally:
        Markdown.append = original  # type: ignore[method-assign]


def send_key(app: Any, key: str, character: str | None) -> None:
    """Deliver a key the way the terminal driver does (without waiting for the app to settle, unlike Pilot)."""
    from textual import events

    event = events.Key(key, character)
    event.set_sender(app)
    app._driver.send_message(event)


def build_app(settings: Settings, handler: Any = None, **options: Any) -> Any:
    """The real app as ``make_app`` builds it for the CLI (with its Application), or driven by ``handler``."""
    from tui.app import make_app

    app = make_app(settings, handler=handler, **options)
    if getattr(app, "engine_error", ""):
        raise RuntimeError(f"the app could not build its engine: {app.engine_error}")
    return app
