"""7. Loop overhead: a 50-step tool loop against a zero-latency server; handler CPU per step."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any, AsyncIterator

from benchmarks.apphost import bench_settings
from benchmarks.harness import BenchResult, Figure, at_most
from benchmarks.server import ReplySpec, ServerProcess

TITLE = "Tool-loop overhead"
METHOD = """\
The fake server (unpaced) answers 49 responses with one tool call each, then a
final answer; the handler is the one `core.app.Application` builds (all the
app's tools registered), with a trivial async tool `noop` added, declared
`read_only` (it writes nothing; an undeclared tool counts as a writer and gets a
whole-tree checkpoint before and after every call: a `git status` each when it
changes nothing, which the checkpoints benchmark measures on its own). One user turn
runs the 50 steps (`stream_query`, events consumed). CPU is process time
(`time.process_time`). The SDK share is the CPU spent inside the provider's
stream iterator (the anthropic SDK, httpx and SSE parsing) minus the adapter's
own request building (`ClaudeProvider._request`, which is ours); the tool share
is the CPU inside the tool's executor. Handler CPU per step = (total − SDK −
tool) ÷ 50: the loop, validation, events, history, token estimate, system
prompt, relevance lookup and the adapter's conversion. Anchor: the bare anthropic
SDK driving the same 50 steps by hand (stream, append `tool_use` and
`tool_result`, repeat) with the same system prompt and tool list on the wire,
total CPU per step. A warm-up turn runs first."""

STEPS = 50


class CpuSplit:
    """Accumulates process CPU time spent inside wrapped calls."""

    def __init__(self) -> None:
        self.sdk = 0.0
        self.adapter = 0.0
        self.tool = 0.0

    def wrap_provider(self, provider: Any) -> None:
        original_stream = provider.stream_message
        original_request = provider._request

        def request(*args: Any, **kwargs: Any) -> Any:
            began = time.process_time()
            try:
                return original_request(*args, **kwargs)
            finally:
                self.adapter += time.process_time() - began

        async def stream_message(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            iterator = original_stream(*args, **kwargs).__aiter__()
            while True:
                began = time.process_time()
                try:
                    item = await iterator.__anext__()
                except StopAsyncIteration:
                    self.sdk += time.process_time() - began
                    return
                self.sdk += time.process_time() - began
                yield item

        provider._request = request
        provider.stream_message = stream_message

    def tool_executor(self) -> Any:
        async def noop(params: dict[str, Any]) -> str:
            began = time.process_time()
            try:
                return f"step {params.get('step')} done"
            finally:
                self.tool += time.process_time() - began

        return noop


def _script(server: ServerProcess) -> None:
    server.script(*[ReplySpec(tools=[{"name": "noop", "input": {"step": n}}]) for n in range(STEPS - 1)], ReplySpec(text="All fifty steps are done."))


NOOP_SPEC = {
    "name": "noop",
    "description": "Does nothing and says so.",
    "read_only": True,  # writes nothing: no checkpoint around it (issue 26's cost is benchmarks/checkpoints.py's)
    "input_schema": {"type": "object", "properties": {"step": {"type": "integer"}}, "required": ["step"]},
}


async def handler_once(server: ServerProcess, project: Path) -> dict[str, float]:
    """One 50-step turn through the app's handler; CPU shares in ms per step."""
    from core.app import Application

    application = Application(bench_settings(project, server.url, max_tool_calls=STEPS * 2))
    handler = application.handler
    split = CpuSplit()
    split.wrap_provider(handler.model_provider)
    handler.register_tool(NOOP_SPEC, split.tool_executor())
    _script(server)
    began = time.process_time()
    wall = time.perf_counter()
    tools = 0
    async for event in handler.stream_query("Run the noop tool fifty times."):
        if event.kind == "tool_call_finished":
            tools += 1
        elif event.kind == "turn_failed":
            raise RuntimeError(f"the turn failed: {event.message}")
    total = time.process_time() - began
    wall = time.perf_counter() - wall
    if tools != STEPS - 1:
        raise RuntimeError(f"expected {STEPS - 1} tool calls, saw {tools}")
    sdk = split.sdk - split.adapter
    return {
        "handler_ms": (total - sdk - split.tool) / STEPS * 1000,
        "adapter_ms": split.adapter / STEPS * 1000,
        "sdk_ms": sdk / STEPS * 1000,
        "total_ms": total / STEPS * 1000,
        "wall_ms": wall / STEPS * 1000,
    }


async def sdk_once(server: ServerProcess, project: Path) -> dict[str, float]:
    """The same 50 steps with the bare anthropic SDK (same system prompt and tools on the wire); total CPU ms per step."""
    import anthropic

    from core.app import Application
    from core.handlers.passthrough import PASSTHROUGH_INSTRUCTIONS

    application = Application(bench_settings(project, server.url))
    application.handler.register_tool(NOOP_SPEC, lambda params: "")
    system = application.handler._build_system_prompt(PASSTHROUGH_INSTRUCTIONS)
    tools = application.provider.convert_tools(application.handler.get_tool_specs())
    client = anthropic.AsyncAnthropic(api_key="sk-ant-bench-not-a-real-key", base_url=server.url, max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Run the noop tool fifty times."}]
    _script(server)
    began = time.process_time()
    wall = time.perf_counter()
    for _ in range(STEPS):
        async with client.messages.stream(model="claude-sonnet-4-5", max_tokens=8192, system=system, messages=messages, tools=tools) as stream:
            async for _event in stream:
                pass
            final = await stream.get_final_message()
        calls = [block for block in final.content if block.type == "tool_use"]
        if not calls:
            break
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in calls]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": c.id, "content": f"step {c.input.get('step')} done"} for c in calls]})
    total = time.process_time() - began
    wall = time.perf_counter() - wall
    await client.close()
    return {"total_ms": total / STEPS * 1000, "wall_ms": wall / STEPS * 1000}


async def _run(quick: bool) -> BenchResult:
    repeats = 1 if quick else 7
    result = BenchResult("loop", TITLE, parameters={"steps": STEPS, "repeats": repeats})
    handler_runs: list[dict[str, float]] = []
    sdk_runs: list[dict[str, float]] = []
    with ServerProcess() as server, tempfile.TemporaryDirectory(prefix="atui-loop-") as tmp:
        project = Path(tmp)
        (project / "README.md").write_text("# bench\n", encoding="utf-8")
        await handler_once(server, project)
        await sdk_once(server, project)
        for _ in range(repeats):
            handler_runs.append(await handler_once(server, project))
            sdk_runs.append(await sdk_once(server, project))
    result.add(Figure("handler CPU per step (outside SDK and tool)", "ms", [r["handler_ms"] for r in handler_runs], target=at_most(1.0)))
    result.add(Figure("  of which the adapter's request building", "ms", [r["adapter_ms"] for r in handler_runs]))
    result.add(Figure("SDK CPU per step (inside the provider stream)", "ms", [r["sdk_ms"] for r in handler_runs]))
    result.add(Figure("total CPU per step", "ms", [r["total_ms"] for r in handler_runs], [r["total_ms"] for r in sdk_runs], "bare anthropic SDK loop"))
    result.add(Figure("wall time per step", "ms", [r["wall_ms"] for r in handler_runs], [r["wall_ms"] for r in sdk_runs], "bare anthropic SDK loop"))
    return result


def run(quick: bool = False) -> BenchResult:
    return asyncio.run(_run(quick))
