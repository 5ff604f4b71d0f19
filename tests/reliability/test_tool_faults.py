"""Tool faults through the handler: endless output, commands that never end, Esc during a tool.

The command runs through ``executeFilePathCommand`` exactly as the model would call
it (approval mode ``allow``; since issue 22 only allowlisted programs run, so endless
output comes from ``cat`` reading a FIFO the test keeps writing to).
Checked: that the event loop (standing in for the UI) keeps running other tasks
while the command runs, RSS growth, the size of what goes back to the model, and
that no process is left behind. How fast is for the benchmarks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import psutil
import pytest

from core import events as ev
from tests.conftest import marked_settings
from tests.core.conftest import assert_history_valid
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.reliability.support import (
    Engine,
    assert_no_leaks,
    finished_calls,
    make_engine,
    rss_bytes,
)

MAX_RSS_GROWTH = 48 * 2**20


@pytest.fixture
async def engine(fake_llm: FakeLLM, tmp_path: Path, app_log: Path, request: pytest.FixtureRequest) -> Engine:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "README.md").write_text("hello\n")
    engine = make_engine("anthropic", fake_llm, root, **{"approval_mode": "allow", "command_timeout": 5, **marked_settings(request)})
    fake_llm.script(Reply(text="warm"))
    await engine.handler.handle_query("warm up")  # the SDK import (tens of MB) is not the tool's doing
    fake_llm.clear()
    return engine


def descendants() -> list[psutil.Process]:
    return psutil.Process().children(recursive=True)


def alive(processes: list[psutil.Process]) -> list[str]:
    out = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                out.append(f"{process.pid} {process.name()}")
        except psutil.NoSuchProcess:
            continue
    return out


async def still_alive(processes: list[psutil.Process], timeout: float = 15.0) -> list[str]:
    """The processes still alive once they have had ``timeout`` seconds to die.

    A SIGKILLed process (bwrap tearing down its namespaces) is not gone the instant the
    kill returns, least of all on a loaded machine: wait on the condition, not on luck.
    """
    deadline = time.monotonic() + timeout
    while (living := alive(processes)) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return living


async def run_command(engine: Engine, fake: FakeLLM, command: str) -> tuple[list[ev.Event], bool, int]:
    """One turn in which the model runs ``command``: events, whether the loop ran while it did, RSS growth.

    When the tool call starts, a task is scheduled that needs a few turns of the
    event loop; it has finished by the time the call ends only if the command ran
    without holding the loop.
    """
    fake.script(Reply(tools=[Tool("executeFilePathCommand", {"command": command})]), Reply(text="done"))
    rss = rss_bytes()
    events: list[ev.Event] = []
    ran_meanwhile = False
    bystander: asyncio.Task[None] | None = None

    async def other_work() -> None:
        for _ in range(3):
            await asyncio.sleep(0)

    async for event in engine.handler.stream_query(f"run {command}"):
        events.append(event)
        if isinstance(event, ev.ToolCallStarted):
            bystander = asyncio.create_task(other_work())
        elif isinstance(event, ev.ToolCallFinished) and bystander is not None:
            ran_meanwhile = bystander.done()
    return events, ran_meanwhile, rss_bytes() - rss


ENDLESS = [
    pytest.param(("y\n", "cat endless.fifo"), id="yes"),
    pytest.param(("".join(f"{n}\n" for n in range(1000)), "cat endless.fifo"), id="seq"),
    pytest.param(("a" * 200 + "\n", "cat endless.fifo | head -n 100000000"), id="long-lines-piped"),
]


@pytest.fixture
def endless_fifo(engine: Engine) -> Iterator[Callable[[str], None]]:
    """``endless.fifo`` in the project; the returned function starts writing a chunk to it until nobody reads."""
    fifo = engine.handler.project_root / "endless.fifo"
    os.mkfifo(fifo)
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def write(chunk: str) -> None:
        data = chunk.encode() * max(1, 65536 // len(chunk))

        def pump() -> None:
            fd = os.open(fifo, os.O_WRONLY)  # blocks until the command opens it for reading
            try:
                while not stop.is_set():
                    os.write(fd, data)
            except BrokenPipeError:
                pass
            finally:
                os.close(fd)

        threads.append(threading.Thread(target=pump, daemon=True))
        threads[-1].start()

    yield write
    stop.set()
    for thread in threads:
        if thread.is_alive():  # still blocked in open(): the command never read; unblock it
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        thread.join(5)


@pytest.mark.parametrize("case", ENDLESS)
async def test_endless_output_is_capped_and_the_loop_stays_responsive(
    engine: Engine, fake_llm: FakeLLM, endless_fifo: Callable[[str], None], case: tuple[str, str]
) -> None:
    chunk, command = case
    endless_fifo(chunk)
    before = descendants()
    events, ran_meanwhile, grown = await run_command(engine, fake_llm, command)
    (call,) = finished_calls(events)
    assert call.status == "success" and "(output truncated)" in call.result or call.metadata.get("truncated")
    assert len(call.result) < 10_000, "the model gets a bounded result"
    assert len(str(fake_llm.requests[-1].body)) < 20_000
    assert events[-1].kind == "turn_completed"
    assert await still_alive([p for p in descendants() if p not in before]) == []
    assert grown < MAX_RSS_GROWTH, f"RSS grew {grown / 2**20:.0f} MB"
    assert ran_meanwhile, "the event loop (the UI) was held while the command ran"
    assert_no_leaks(fake_llm)


@pytest.mark.settings(command_timeout=1.0)
@pytest.mark.parametrize("command", ["tail -f README.md | grep -v x", "tail -f README.md"])
async def test_a_command_that_never_ends_is_killed_at_the_timeout(
    engine: Engine, fake_llm: FakeLLM, command: str
) -> None:
    before = descendants()
    events, ran_meanwhile, _ = await run_command(engine, fake_llm, command)
    (call,) = finished_calls(events)
    assert call.status == "error" and "longer than 1 s" in call.result
    assert ran_meanwhile
    assert await still_alive([p for p in descendants() if p not in before]) == []
    assert events[-1].kind == "turn_completed"
    assert_no_leaks(fake_llm)


@pytest.mark.settings(command_timeout=60)
async def test_esc_during_a_command_kills_it_and_the_next_turn_works(engine: Engine, fake_llm: FakeLLM) -> None:
    fake_llm.script(Reply(text="Waiting.", tools=[Tool("executeFilePathCommand", {"command": "tail -f README.md"})]))
    before = descendants()
    started_event = asyncio.Event()

    async def consume() -> None:
        async for event in engine.handler.stream_query("wait for it"):
            if isinstance(event, ev.ToolCallStarted):
                started_event.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started_event.wait(), 30)  # hang detectors, not speed bounds: bwrap starts slowly on a loaded machine
    deadline = time.monotonic() + 30
    spawned = [p for p in descendants() if p not in before]
    while "tail" not in [p.name() for p in spawned]:
        assert time.monotonic() < deadline, [p.name() for p in spawned]
        await asyncio.sleep(0.02)
        spawned = [p for p in descendants() if p not in before]
    assert {p.name() for p in spawned} <= {"tail", "bwrap"}  # in the sandbox, when bubblewrap works
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=30)  # the command would never end, its timeout is 60 s
    assert task in done and task.cancelled()
    assert await still_alive(spawned) == [], "the process group was not killed"
    assert_history_valid(engine.handler.conversation_history)
    synthetic = engine.handler.conversation_history[-1]
    assert synthetic["role"] == "tool" and synthetic["is_error"] and "interrupted" in synthetic["content"]
    fake_llm.script(Reply(text="next turn"))
    assert (await engine.handler.handle_query("again"))["content"] == "next turn"
    assert_no_leaks(fake_llm)
