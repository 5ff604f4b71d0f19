"""12. The file-finding tool in bubblewrap: what the sandbox adds to one `find`, and the policy decision."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from benchmarks.harness import BenchResult, Figure, at_most, percentile

TITLE = "File-finding command in the sandbox"
METHOD = """\
`execute_command_safely("find . -name '*.py'")` (core/tools/safe_exec.py), the whole
tool path: the policy decision, the secret-value scan of the project's `.env` files,
program resolution, and the run with its pipes, process group and output cap; in a
project of 40 directories and 800 files (400 of them `.py`, a `.env`, a
`node_modules` and a `.venv`). Sandboxed: the stage runs in bubblewrap (project
read-only, no network, no HOME, secret files masked: `bwrap_argv(...,
project_read_only=True)`; its walk of the project for secret files is reused while
the project's directories are unchanged, checked with one `stat` each). Anchor:
the same call with the sandbox switched off (`SandboxStatus(available=False)`),
alternated run by run. The overhead is the difference of the medians of each
repeat (target ≤ 15 ms); the difference of each repeat's fastest runs is shown
too (what the sandbox adds without preemption). The policy decision is `plan_command` alone for the same
command line (target ≤ 1 ms)."""

COMMAND = "find . -name '*.py'"


def _project(base: Path) -> Path:
    root = base / "proj"
    for d in range(40):
        folder = root / f"pkg{d:02d}"
        folder.mkdir(parents=True)
        for f in range(10):
            (folder / f"mod{f}.py").write_text(f"def f{f}():\n    return {f}\n")
            (folder / f"data{f}.txt").write_text("x\n")
    for name in ("node_modules/left-pad/index.js", ".venv/lib/site.py", ".env"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("TOKEN=x\n" if name == ".env" else "x = 1\n")
    hour_ago = time.time() - 3600  # as a project is between edits (see core/tools/find_sandbox.py)
    for entry in [*root.rglob("*"), root]:
        os.utime(entry, (hour_ago, hour_ago))
    return root


async def _runs(root: Path, count: int) -> tuple[list[float], list[float]]:
    from core.sandbox.preflight import SandboxStatus
    from core.tools.safe_exec import execute_command_safely, sandbox_status

    status = await asyncio.to_thread(sandbox_status, root)
    if not status.available:
        raise RuntimeError(status.problem)
    off = SandboxStatus(available=False, problem="benchmark anchor")
    sandboxed: list[float] = []
    bare: list[float] = []
    for _ in range(count):
        for sandbox, sink in ((status, sandboxed), (off, bare)):
            began = time.perf_counter()
            result = await execute_command_safely(COMMAND, project_root=root, sandbox=sandbox)
            sink.append((time.perf_counter() - began) * 1000)
            if result.status != "success" or result.stdout.count(".py") < 400:
                raise RuntimeError(f"{COMMAND} did not list the project: {result.status} {result.reason}")
    return sandboxed, bare


def _decisions(root: Path, count: int) -> list[float]:
    from core.tools.command_policy import plan_command

    out = []
    for _ in range(count):
        began = time.perf_counter()
        plan_command(COMMAND, root)
        out.append((time.perf_counter() - began) * 1000)
    return out


async def _run(quick: bool) -> BenchResult:
    runs, repeats = (5, 1) if quick else (30, 5)
    result = BenchResult("findsandbox", TITLE, parameters={"runs per repeat": runs, "repeats": repeats,
                                                           "command": COMMAND})
    with tempfile.TemporaryDirectory(prefix="atui-findsandbox-") as tmp:
        root = _project(Path(tmp))
        await _runs(root, 2)  # the probe, imports and caches warm
        sandboxed50, bare50, overhead, fastest, decisions = [], [], [], [], []
        for _ in range(repeats):
            sandboxed, bare = await _runs(root, runs)
            sandboxed50.append(percentile(sandboxed, 50))
            bare50.append(percentile(bare, 50))
            overhead.append(sandboxed50[-1] - bare50[-1])
            fastest.append(min(sandboxed) - min(bare))
            decisions.append(percentile(_decisions(root, runs * 10), 50))
    result.add(Figure(f"`{COMMAND}`, sandboxed, call to result", "ms", sandboxed50, bare50, "the same call unsandboxed"))
    result.add(Figure("sandbox overhead over unsandboxed (difference of medians)", "ms", overhead, target=at_most(15.0)))
    result.add(Figure("sandbox overhead, fastest run of each (difference of minimums)", "ms", fastest,
                      note="the least the sandbox adds, without the preemptions of a busy machine"))
    result.add(Figure("policy decision for the command (p50)", "ms", decisions, target=at_most(1.0)))
    result.notes.append(f"Load average when measured: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs.")
    return result


def run(quick: bool = False) -> BenchResult:
    return asyncio.run(_run(quick))
