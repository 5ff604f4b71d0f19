"""The loopback fake LLM server in a process of its own.

Benchmarks measure the app's CPU and event-loop lag, so the server (threads
that write SSE and sleep to pace tokens) must not share the measured process.
:class:`ServerProcess` starts ``python -m benchmarks.server`` and scripts it
over a line protocol on stdin/stdout (one JSON object per line):

* ``{"op": "script", "items": [reply, ...]}`` queues replies
  (``{"text", "chunk", "tokens_per_second", "tools": [{"name", "input"}]}``);
* ``{"op": "clear"}`` drops the script and the recorded requests;
* ``{"op": "stats"}`` answers ``{"requests": n, "pending": n}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from benchmarks import paths


@dataclass
class ReplySpec:
    """One scripted model response (mirrors ``tests.fake_llm.Reply``)."""

    text: str = ""
    tokens_per_second: float | None = None
    chunk: int = 12
    tools: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "tokens_per_second": self.tokens_per_second, "chunk": self.chunk, "tools": self.tools}


class ServerProcess:
    """A running fake server process; use as a context manager."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> "ServerProcess":
        env = dict(os.environ, PYTHONPATH=paths.pythonpath())
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(paths.REPO),
            env=env,
        )
        self.url = self._read()["url"]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            try:
                self._proc.stdin.close()  # type: ignore[union-attr]
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
            self._proc = None

    def _read(self) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the fake LLM server process exited")
        return json.loads(line)

    def _call(self, **command: Any) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(command) + "\n")
        self._proc.stdin.flush()
        return self._read()

    def script(self, *replies: ReplySpec) -> None:
        """Queue replies, answered in order, one per request."""
        self._call(op="script", items=[r.to_json() for r in replies])

    def clear(self) -> None:
        self._call(op="clear")

    def stats(self) -> dict[str, Any]:
        return self._call(op="stats")

    def environment(self) -> dict[str, str]:
        """Variables pointing the Anthropic SDK at this server."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": "sk-ant-bench-not-a-real-key"}


def _serve() -> None:
    from tests.fake_llm import FakeLLM, Reply, Tool

    fake = FakeLLM().start()
    print(json.dumps({"url": fake.anthropic_url}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        op = command.get("op")
        answer: dict[str, Any] = {"ok": True}
        if op == "script":
            fake.script(
                *(
                    Reply(
                        text=item.get("text", ""),
                        chunk=item.get("chunk", 12),
                        tokens_per_second=item.get("tokens_per_second"),
                        tools=[Tool(name=t["name"], input=t.get("input", {})) for t in item.get("tools", [])],
                    )
                    for item in command["items"]
                )
            )
        elif op == "clear":
            fake.clear()
        elif op == "stats":
            answer = {"requests": len(fake.requests), "pending": fake.pending}
        else:
            answer = {"ok": False, "error": f"unknown op {op!r}"}
        print(json.dumps(answer), flush=True)
    fake.stop()


if __name__ == "__main__":
    _serve()
