"""The live-output channel from a running tool to the handler's event stream.

The handler sets a sink for the call it runs (a context variable, so the tool's
task and the tasks it starts see it, and nothing else does); a tool that produces
output as it goes (a command in the sandbox) calls :func:`emit` with each batch.
The handler turns batches into ``ToolOutputChunk`` events.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Callable

OutputSink = Callable[[str, str], None]

output_sink: ContextVar[OutputSink | None] = ContextVar("tool_output_sink", default=None)


def emit(text: str, stream: str = "stdout") -> None:
    """Hand a batch of output of the running tool call to whoever watches it (no-op when nobody does)."""
    sink = output_sink.get()
    if sink is not None and text:
        sink(text, stream)
