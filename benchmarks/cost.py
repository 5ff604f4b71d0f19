"""9. Cost: a scripted 30-step session against a fake server that accounts prompt caching as documented."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.apphost import bench_settings
from benchmarks.harness import BenchResult, Figure, at_least, at_most

TITLE = "Request prefix and prompt caching"
METHOD = """\
One scripted session of 30 model responses in 8 user turns, through the handler the
app builds (`core.app.Application`, all its tools) with the real anthropic SDK,
against the fake server (`tests/fake_llm.py`) with its prompt-cache accounting
(`tests/fake_cache.py`: prefix match up to each `cache_control` breakpoint with
the documented 20-block lookback, 1,024-token minimum, reads vs writes, 5-minute
lifetime; tokens counted as bytes/4). The session reads and finds files with the
real `readFile` and `executeFilePathCommand` tools (re-reading some, which are
answered with a pointer to the earlier result), picks files into the context
between turns (one of them edited and so sent again, one already read whole), and
asks one `/plan`.
Figures: the byte-identical common prefix of each request and the previous one
(tools, system and messages as canonical JSON, `cache_control` markers left out as
the cache ignores them), averaged from the third request on, as a share of the
previous request (what was sent before and is resent unchanged) and as a share of
the request itself (which also counts what the step appended: a whole file read
early in a session is a large part of it), per request and over all their bytes
together; the share of input
tokens read from the cache; billed-equivalent input tokens (uncached input + 1.25 x
cache writes + 0.1 x cache reads, Anthropic's 5-minute prices relative to base
input) against the same session with caching off (`prompt_cache = false`: every
input token billed at 1x). The same session on the OpenAI-compatible side reports
the share of prompt tokens the server said were cached (`cached_tokens`), which
needs nothing but the stable prefix."""

FILES = {
    f"src/module_{n}.py": "".join(
        f'def function_{n}_{i}(value: int) -> int:\n    """Return value scaled by {i} for module {n}."""\n    return value * {i} + {n}\n\n\n'
        for i in range(14)
    )
    for n in range(8)
}


def _tool(name: str, **params: Any) -> dict[str, Any]:
    return {"name": name, "input": params}


# (query, files picked before it, tool steps (each a list of tool calls), final answer): 30 responses in all.
TURNS: list[tuple[str, list[str], list[list[dict[str, Any]]], str]] = [
    ("Which modules does this project have?", [], [[_tool("executeFilePathCommand", command="find src -name '*.py'")]], "There are eight modules under src/."),
    ("What does module 0 do?", [], [[_tool("readFile", path="src/module_0.py")]], "Module 0 scales values."),
    ("Compare modules 1 and 2.", ["src/module_1.py", "src/module_2.py"], [[_tool("readFile", path="src/module_3.py")]], "They differ by offset."),
    ("Read modules 4 to 6 and summarise.", [], [[_tool("readFile", path=f"src/module_{n}.py")] for n in (4, 5, 6)], "All three follow one pattern."),
    ("/plan add input validation to every function", [], [[_tool("readFile", path="src/module_7.py")], [_tool("executeFilePathCommand", command="grep -rl 'def ' src")]], "<plan>\n1. Add checks\n2. Add tests\n</plan>"),
    ("Look at module 1 again, I changed it.", ["src/module_1.py", "src/module_2.py"], [[_tool("readFile", path="src/module_1.py", start_line=1, end_line=20)]], "Module 1 now has a new function."),
    ("Walk through every module once more.", [], [[_tool("readFile", path=f"src/module_{n}.py", start_line=1, end_line=30)] for n in range(8)], "Done: every module checked."),
    ("Any module without tests?", ["src/module_3.py"], [[_tool("executeFilePathCommand", command="find . -name 'test_*.py'")], [_tool("readFile", path="src/module_0.py", start_line=1, end_line=10)], [_tool("readFile", path="src/module_2.py", start_line=1, end_line=10)], [_tool("readFile", path="src/module_5.py", start_line=1, end_line=10)], [_tool("readFile", path="src/module_3.py", start_line=1, end_line=10)]], "None has tests."),
]
RESPONSES = sum(len(steps) + 1 for _, _, steps, _ in TURNS)


def _replies(steps: list[list[dict[str, Any]]], final: str) -> list[Any]:
    from tests.fake_llm import Reply, Tool

    return [Reply(text="Let me look.", tools=[Tool(t["name"], t["input"]) for t in calls]) for calls in steps] + [Reply(text=final)]


def canonical(body: dict[str, Any], api: str) -> bytes:
    """The prompt as the cache sees it: tools, system, messages, without cache_control markers."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    parts = [body.get("tools") or [], body.get("system") or "", body.get("messages") or []] if api == "anthropic" else [body.get("tools") or [], body.get("messages") or []]
    return json.dumps(strip(parts), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def prefix_shares(bodies: list[bytes], of_previous: bool = True) -> list[float]:
    """For each request after the first: the bytes it shares as a prefix with the previous request,
    over the previous request's length (how much of what was sent is resent unchanged) or, with
    ``of_previous`` False, over its own length (which also counts what this step appended)."""
    from tests.fake_cache import _common_prefix

    return [
        _common_prefix(previous, current) / len(previous if of_previous else current) for previous, current in zip(bodies, bodies[1:])
    ]


async def session(kind: str, caching: bool) -> dict[str, Any]:
    """Run the scripted session; the requests' canonical bytes and the usage of each response."""
    from core.app import Application
    from core.handlers.pacing import Pacing
    from tests.fake_cache import PromptCaching
    from tests.fake_llm import FakeLLM

    with tempfile.TemporaryDirectory(prefix="atui-cost-") as tmp, FakeLLM() as fake:
        project = Path(tmp)
        for name, text in FILES.items():
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            (project / name).write_text(text, encoding="utf-8")
        fake.caching = PromptCaching()
        url = fake.anthropic_url if kind == "anthropic" else fake.openai_url
        settings = bench_settings(project, url, max_tool_calls=50, prompt_cache=caching, model="claude-sonnet-4-5" if kind == "anthropic" else "gpt-4o-mini")
        if kind == "openai":
            settings = bench_settings(project, "", provider="openai", openai_base_url=url, openai_api_key="sk-bench", max_tool_calls=50, model="gpt-4o-mini")
        application = Application(settings, pacing=Pacing(wall_clock=lambda: "2026-11-23 10:00 UTC"))
        handler = application.handler
        usages: list[dict[str, Any]] = []
        for query, picks, steps, final in TURNS:
            if picks:
                handler.file_context.replace([str(project / p) for p in picks])
            if query.startswith("Look at module 1 again"):
                (project / "src/module_1.py").write_text(FILES["src/module_1.py"] + "def added() -> None:\n    pass\n", encoding="utf-8")
            fake.script(*_replies(steps, final))
            async for event in handler.stream_query(query):
                if event.kind == "assistant_message":
                    usages.append(dict(event.usage))
                elif event.kind == "turn_failed":
                    raise RuntimeError(f"the turn failed: {event.message}")
        bodies = [canonical(r.body, kind) for r in fake.requests]
        reads = [str(m["content"]) for m in handler.conversation_history if m.get("name") == "readFile"]
        pointed = sum(text.startswith("[Not sent again") for text in reads)
        summary = handler.usage.summary()
        application.session_state.close()
    if len(bodies) != RESPONSES:
        raise RuntimeError(f"expected {RESPONSES} requests, saw {len(bodies)}")
    return {"bodies": bodies, "usages": usages, "summary": summary, "reads": len(reads), "pointed": pointed}


def billed_equivalent(usages: list[dict[str, Any]]) -> float:
    """Input tokens at Anthropic's relative prices: uncached 1x, 5-minute writes 1.25x, reads 0.1x."""
    return sum(u["input_tokens"] + 1.25 * u["cache_write_tokens"] + 0.1 * u["cache_read_tokens"] for u in usages)


async def _run(quick: bool) -> BenchResult:
    result = BenchResult("cost", TITLE, parameters={"responses": RESPONSES, "turns": len(TURNS)})
    cached = await session("anthropic", True)
    uncached = await session("anthropic", False)
    shares = prefix_shares(cached["bodies"])[1:]  # from the third request on
    own = prefix_shares(cached["bodies"], of_previous=False)[1:]
    prompt = sum(u["input_tokens"] + u["cache_write_tokens"] + u["cache_read_tokens"] for u in cached["usages"])
    read = sum(u["cache_read_tokens"] for u in cached["usages"])
    result.add(Figure("previous request resent as a byte-identical prefix (mean, 3rd on)", "%", [100 * sum(shares) / len(shares)], target=at_least(95.0)))
    result.add(Figure("  lowest single request", "%", [100 * min(shares)]))
    result.add(Figure("request bytes that are the previous request's prefix (mean, 3rd on)", "%", [100 * sum(own) / len(own)], target=at_least(95.0)))
    result.add(Figure("  lowest single request (a step that appends a whole file)", "%", [100 * min(own)]))
    later = cached["bodies"][2:]
    result.add(Figure("  all those requests' bytes together", "%", [100 * sum(s * len(b) for s, b in zip(own, later)) / sum(len(b) for b in later)]))
    result.add(Figure("cache-read share of input tokens", "%", [100 * read / prompt], target=at_least(85.0)))
    result.add(
        Figure(
            "billed-equivalent input tokens",
            "tokens",
            [billed_equivalent(cached["usages"])],
            [billed_equivalent(uncached["usages"])],
            "the same session with caching off",
            target=at_most(0.25, of="ratio"),
        )
    )
    cost = cached["summary"]["cost"] or 0.0
    cost_off = uncached["summary"]["cost"] or 0.0
    result.add(Figure("estimated session cost, claude-sonnet-4-5 prices", "$", [cost], [cost_off], "the same session with caching off"))
    openai = await session("openai", True)
    o_prompt = sum(u["input_tokens"] + u["cache_read_tokens"] for u in openai["usages"])
    o_read = sum(u["cache_read_tokens"] for u in openai["usages"])
    result.add(Figure("OpenAI-compatible: cached_tokens share of prompt tokens", "%", [100 * o_read / o_prompt]))
    result.notes.append(
        f"{RESPONSES} requests; prompt tokens {prompt:,} (cached run), {sum(u['input_tokens'] for u in uncached['usages']):,} (caching off); "
        f"cache reads {read:,}, writes {sum(u['cache_write_tokens'] for u in cached['usages']):,}; "
        f"{cached['pointed']} of {cached['reads']} readFile calls answered with a pointer to lines the conversation already held."
    )
    return result


def run(quick: bool = False) -> BenchResult:
    return asyncio.run(_run(quick))
