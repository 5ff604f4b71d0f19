"""``python -m core.acp.sandboxed SPEC``: what an ACP client's terminal runs for ``runCommand``.

The agent writes SPEC (a JSON file in a private temporary directory: the argv, its
time limit and network flag, the project and the agent's settings overrides) and
asks the client to run this module on it. It runs the argv exactly as the agent
would itself (``CommandTools.run``: the sandbox, its limits, the protected files
swept afterwards), prints the output as it comes, so the client's terminal shows
it, and writes the run's result as JSON to the path SPEC names, for the agent.
A terminal ``kill`` (SIGTERM, SIGINT, SIGHUP) stops the whole process tree.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import signal
import sys
from pathlib import Path
from typing import Any, Sequence


async def _run(spec: dict[str, Any]) -> Any:
    from core.config import load_settings
    from core.sandbox import Preflight
    from core.tools.commands import CommandTools

    root = Path(spec["project_root"])
    settings = load_settings({**spec.get("overrides", {}), "project_root": root})
    tools = CommandTools(settings, Preflight(root))

    def show(text: str, stream: str) -> None:
        (sys.stderr if stream == "stderr" else sys.stdout).write(text)
        (sys.stderr if stream == "stderr" else sys.stdout).flush()

    task = asyncio.ensure_future(tools.run(list(spec["argv"]), timeout=spec.get("timeout"), network=bool(spec.get("network")), on_output=show))
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(number, task.cancel)
    return await task


def main(argv: Sequence[str] | None = None) -> int:
    """Run the SPEC's command; the exit status is the command's (1 when it did not run, 130 when stopped)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        sys.stderr.write("usage: python -m core.acp.sandboxed SPEC.json\n")
        return 2
    spec = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    try:
        result = asyncio.run(_run(spec))
    except asyncio.CancelledError:
        sys.stderr.write("\n[stopped]\n")
        return 130
    except Exception as exc:  # noqa: BLE001 - the agent reads the result file, the user the terminal
        sys.stderr.write(f"assistant-tui could not run the command: {exc}\n")
        return 1
    Path(spec["result"]).write_text(json.dumps(dataclasses.asdict(result)), encoding="utf-8")
    if result.status == "error":
        sys.stderr.write(f"Not run: {result.error}\n")
    return result.returncode if isinstance(result.returncode, int) and 0 <= result.returncode < 256 else 1


if __name__ == "__main__":
    raise SystemExit(main())
