"""Where the writers meet the checkpoints: each call below is the one line a writer adds (issue 26).

Every writer runs between two snapshots: the tool loop's tools that may change things
(aider, ``editFile``, ``runCommand``, ``runTests``, MCP tools not marked read-only), the
user's ``/run`` and ``/test``, and ``/task`` (aider run directly).
"""

from __future__ import annotations

import logging
import shlex
from typing import Any, Awaitable, Callable, Sequence

from core.callables import call_sync_or_async
from core.types import TaskResult

log = logging.getLogger(__name__)


async def checkpointed_call(handler: Any, call: Any, spec: dict[str, Any], changes: bool,
                            run: Callable[[], Awaitable[TaskResult]]) -> TaskResult:
    """Run one tool call of the loop under a checkpoint when its tool may change files.

    A spec's ``writes`` (``params -> paths | None``) names the files the tool will write, so only
    those are snapshotted; without it the whole tree is.
    """
    checkpoints = getattr(handler, "checkpoints", None)
    if checkpoints is None or not changes:
        return await run()
    writes: Sequence[str] | None = None
    if callable(spec.get("writes")):
        try:
            writes = await call_sync_or_async(spec["writes"], call.parameters)
        except Exception:  # noqa: BLE001 - the tool reports its own problem; snapshot everything
            log.exception("%s: which files it writes is unknown", call.name)
    return await checkpoints.around(call.name, run, writes=writes, label=_label(call.name, call.parameters))


async def checkpointed_command(application: Any, label: str, run: Callable[[], Awaitable[TaskResult]]) -> TaskResult:
    """Run the user's own writer (``/run``, ``/test``, ``/task``) under a checkpoint."""
    checkpoints = getattr(application, "checkpoints", None)
    if checkpoints is None or label.split()[:2] == ["/task", "list"]:  # listing the tasks writes nothing
        return await run()
    return await checkpoints.around(label.split()[0], run, label=label)


def _label(name: str, params: dict[str, Any]) -> str:
    for key in ("command", "path", "prompt", "query"):
        value = params.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return f"{name} {shlex.join(value)}"
        if isinstance(value, str):
            return f"{name} {value}"
    return name
