"""2. Streaming firehose: 40,000 characters of mixed Markdown streamed unpaced through the real provider."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.child import run_child
from benchmarks.apphost import SIZE, PaintRecorder, StreamClock, bench_settings, build_app, track_markdown
from benchmarks.content import CHARS_PER_TOKEN, mixed_markdown
from benchmarks.harness import BenchResult, Figure, at_least, at_most, wait_until
from benchmarks.server import ReplySpec, ServerProcess
from benchmarks.stalls import diagnosis

TITLE = "Streaming firehose"
METHOD = """\
The fake server streams the text as fast as it can write it (12-character
deltas, about 3 tokens each) through the real `ClaudeProvider` (anthropic SDK),
`PassthroughHandler.stream_query` and the app's chat view. Times: the first and
last text chunk as the provider yields them, and the first frame painted after
the chat's Markdown has mounted the whole text. Rate = tokens (characters ÷ 4)
÷ (final frame − first chunk); final lag = final frame − last chunk. The anchor
is stock Textual alone: a `Markdown` in an anchored `VerticalScroll` fed the
same deltas through `Markdown.get_stream` (no network, no SDK) as fast as it
accepts them. Every app and anchor run has a fresh process of its own."""


def _measure(paints: PaintRecorder, done: dict[str, float], first: float, last: float, chars: int) -> dict[str, float]:
    final = paints.first_after(done["content"]) or done["content"]
    return {
        "tokens_per_second": chars / CHARS_PER_TOKEN / (final - first),
        "final_lag_ms": (final - last) * 1000,
        "frames": float(paints.count_between(first, final)),
        "seconds": final - first,
    }


def _content_tracker(chars: int) -> tuple[dict[str, float], Any]:
    done: dict[str, float] = {}

    def on_append(widget: Any, when: float) -> None:
        if "content" not in done and len(widget.source) >= chars:
            done["content"] = when

    return done, on_append


async def app_once(server: ServerProcess, text: str, project: Path, diagnose: bool = False) -> dict[str, Any]:
    """Stream ``text`` through the real app; returns rate, final lag and frame count.

    With ``diagnose``, also where the loop's time went while streaming (stack sampling; not a measurement).
    """
    server.script(ReplySpec(text=text, chunk=12))
    settings = bench_settings(project, server.url)
    app = build_app(settings)
    clock = StreamClock(app.handler.model_provider)
    paints = PaintRecorder(app)
    done, on_append = _content_tracker(len(text))
    with track_markdown(on_append):
        async with app.run_test(size=SIZE) as pilot, diagnosis(diagnose, threshold=0.0) as sampler:
            await pilot.pause()
            await app.submit("Explain the streaming pipeline.")
            if not await wait_until(lambda: "content" in done and not app.turn_running, timeout=300):
                raise RuntimeError("the app never showed the whole reply")
            await wait_until(lambda: paints.first_after(done["content"]) is not None, timeout=5)
    assert clock.first is not None and clock.last is not None
    measured: dict[str, Any] = dict(_measure(paints, done, clock.first, clock.last, len(text)))
    if sampler is not None:
        measured["profile"] = sampler.window(clock.first, paints.first_after(done["content"])).describe()
    return measured


async def anchor_once(text: str, chunk: int = 12) -> dict[str, float]:
    """Stream ``text`` into stock Markdown through MarkdownStream, as fast as it takes it."""
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll
    from textual.widgets import Markdown

    class StreamApp(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Markdown()

        def on_mount(self) -> None:
            self.query_one(VerticalScroll).anchor()

    app = StreamApp()
    paints = PaintRecorder(app)
    done, on_append = _content_tracker(len(text))
    fragments = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    with track_markdown(on_append):
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            stream = Markdown.get_stream(app.query_one(Markdown))
            first = time.perf_counter()
            for fragment in fragments:
                await stream.write(fragment)
            last = time.perf_counter()
            await stream.stop()
            if not await wait_until(lambda: "content" in done, timeout=300):
                raise RuntimeError("stock Markdown never showed the whole text")
            await wait_until(lambda: paints.first_after(done["content"]) is not None, timeout=5)
    return _measure(paints, done, first, last, len(text))


def measure_app(chars: int, diagnose: bool = False) -> dict[str, Any]:
    """The app streaming ``chars`` characters, in this (fresh) process."""

    async def go() -> dict[str, Any]:
        with ServerProcess() as server, tempfile.TemporaryDirectory(prefix="atui-firehose-") as tmp:
            return await app_once(server, mixed_markdown(chars, seed=7), Path(tmp), diagnose)

    return asyncio.run(go())


def measure_anchor(chars: int) -> dict[str, float]:
    """Stock Markdown streaming the same text, in this (fresh) process."""
    return asyncio.run(anchor_once(mixed_markdown(chars, seed=7)))


def run(quick: bool = False) -> BenchResult:
    chars = 3_000 if quick else 40_000
    repeats = 1 if quick else 5
    result = BenchResult("firehose", TITLE, parameters={"characters": chars, "tokens": chars // CHARS_PER_TOKEN, "repeats": repeats, "delta": "12 chars"})
    apps = []
    anchors = []
    for _ in range(repeats):
        apps.append(run_child("firehose", "measure_app", {"chars": chars}))
        anchors.append(run_child("firehose", "measure_anchor", {"chars": chars}))
    if not quick:
        diagnostic = run_child("firehose", "measure_app", {"chars": chars, "diagnose": True})
        result.notes.append(f"Diagnostic repeat (the loop thread's stack sampled every 2 ms while streaming; not measured): {diagnostic['profile']}.")
    anchor_name = "stock Markdown + MarkdownStream"
    result.add(Figure("sustained rate rendered", "tokens/s", [a["tokens_per_second"] for a in apps], [a["tokens_per_second"] for a in anchors], anchor_name, at_least(2500)))
    result.add(Figure("last byte → final frame", "ms", [a["final_lag_ms"] for a in apps], [a["final_lag_ms"] for a in anchors], anchor_name, at_most(50)))
    result.add(Figure("frames painted while streaming", "frames", [a["frames"] for a in apps], [a["frames"] for a in anchors], anchor_name))
    return result
