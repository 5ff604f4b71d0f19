"""The provider's prewarm builds the SDK's stream types, so a first reply builds none on the event loop.

The anthropic SDK builds an event type's pydantic schema the first time a stream meets
it. Without the prewarm that happened on the event loop at the first reply's first
token and again right after its last text (holding back the final frame). Schemas are
built once per process, so the check runs in a fresh interpreter: a profile hook on the
streaming thread records every call into pydantic's schema generation while a real
reply (fake server, real SDK) streams after ``prewarm()``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.fake_llm import FakeLLM, Reply, Tool

REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from core.providers.anthropic import ClaudeProvider
    from core.events import TextDelta, ThinkingDelta, ToolCallReady

    provider = ClaudeProvider("claude-sonnet-4-5", base_url=sys.argv[1], api_key="sk-ant-test-not-a-real-key")
    provider.prewarm()
    built = []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.replace("\\\\", "/").endswith("pydantic/_internal/_generate_schema.py"):
            built.append(frame.f_code.co_name)

    async def stream():
        seen = []
        async for item in provider.stream_message([{"role": "user", "content": "hi"}]):
            if isinstance(item, (TextDelta, ThinkingDelta)):
                seen.append(item.text)
            elif isinstance(item, ToolCallReady):
                seen.append(item.call.name)
        return seen

    sys.setprofile(hook)
    seen = asyncio.run(stream())
    sys.setprofile(None)
    print(json.dumps({"seen": seen, "schema_calls": len(built)}))
    """
)


def run_child(code: str, server: FakeLLM) -> dict:
    """Run ``code`` in a fresh interpreter against the fake server; the JSON it printed last."""
    done = subprocess.run([sys.executable, "-c", code, server.anthropic_url], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_first_reply_builds_no_sdk_type_on_the_loop() -> None:
    with FakeLLM() as server:
        server.script(Reply(text="Hello there, streamed in pieces.", thinking="Let me think.", tools=[Tool("readFile", {"path": "a.py"})]))
        result = run_child(CHILD, server)
    assert "".join(result["seen"][:-1]).startswith("Let me think.Hello there"), result["seen"]  # the reply really streamed
    assert result["seen"][-1] == "readFile"
    assert result["schema_calls"] == 0, f"{result['schema_calls']} calls into pydantic's schema generation while the first reply streamed"


LATER = textwrap.dedent(
    """
    import asyncio, gc, json, sys, threading
    from core.providers.anthropic import ClaudeProvider

    provider = ClaudeProvider("claude-sonnet-4-5", base_url=sys.argv[1], api_key="sk-ant-test-not-a-real-key")
    warm = threading.Thread(target=provider.prewarm)  # as the app does it: in a thread, after the first paint
    warm.start()
    warm.join()
    built = []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "create_generic_submodel":
            built.append(frame.f_globals.get("__name__"))

    async def reply():
        return [type(item).__name__ async for item in provider.stream_message([{"role": "user", "content": "hi"}])]

    async def main():
        kinds = []
        for _ in range(3):
            gc.collect()  # what a long session's collections do between replies
            kinds.append(await asyncio.create_task(reply()))  # each turn streams in a task of its own
        return kinds

    sys.setprofile(hook)
    kinds = asyncio.run(main())
    sys.setprofile(None)
    print(json.dumps({"kinds": kinds, "built": len(built)}))
    """
)


def test_later_replies_build_no_generic_model_on_the_loop() -> None:
    # pydantic keeps the SDK's parametrized models (ParsedMessage[...]) weakly, per context: without one
    # strong cache for the process each reply built them again on the loop (1-15 ms), the prewarm's never found.
    with FakeLLM() as server:
        for _ in range(3):
            server.script(Reply(text="Hello again."))
        result = run_child(LATER, server)
    assert all("TextDelta" in kinds for kinds in result["kinds"]), result["kinds"]  # three real replies streamed
    assert result["built"] == 0, f"{result['built']} generic model classes built while the replies streamed"


FIRST_TOOL = textwrap.dedent(
    """
    import asyncio, json, sys, tempfile, threading
    from pathlib import Path
    imported_on = []

    class Note:  # which thread imports jsonschema first
        def find_spec(self, name, path=None, target=None):
            if name == "jsonschema":
                imported_on.append(threading.current_thread().name)
            return None

    sys.meta_path.insert(0, Note())
    from core.app import Application
    from core.config import Settings

    project = Path(tempfile.mkdtemp())
    (project / "a.py").write_text("x = 1\\n")
    application = Application(Settings(project_root=project, anthropic_base_url=sys.argv[1], anthropic_api_key="test", max_retries=0))
    warm = threading.Thread(target=application.prewarm, name="prewarm")  # as the app does it after the first paint
    warm.start()
    warm.join()

    async def turn():
        return [event.kind async for event in application.handler.stream_query("read a.py")]

    kinds = asyncio.run(turn())
    print(json.dumps({"kinds": kinds, "imported_on": imported_on}))
    """
)


def test_the_first_tool_call_imports_no_validator_on_the_loop() -> None:
    # jsonschema's import (30-60 ms) ran on the event loop at a session's first tool call: the trace flood's worst stall.
    with FakeLLM() as server:
        server.script(Reply(tools=[Tool("readFile", {"path": "a.py"})]), Reply(text="It sets x."))
        result = run_child(FIRST_TOOL, server)
    assert "tool_call_finished" in result["kinds"] and result["kinds"][-1] == "turn_completed", result["kinds"]
    assert result["imported_on"] == ["prewarm"], result["imported_on"]
