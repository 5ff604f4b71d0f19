"""Checkpoints (issue 26): a whole-tree checkpoint against `git status`, a known-writes turn, growth, loop lag."""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from benchmarks.harness import BenchResult, Figure, at_most, percentile

TITLE = "Checkpoints before a change"
METHOD = """\
A git project of 80,000 committed files (400 directories of 200 small files; `--quick`: 2,000)
with its shadow repository already holding one checkpoint (the first, which hashes every file,
is reported apart). Each repeat times, side by side: `git status --porcelain` in the project (the
anchor) and the checkpoint taken before a command (`Checkpoints.snapshot(None)`: the app watches
the project's directories with inotify, so when no event came since the status behind the latest
snapshot began that snapshot is the answer, with no git process; otherwise one `git status` on the
shadow's index against its latest snapshot, whose stat and untracked caches spare an unchanged
tree from rehashing and walking; plus the check of the top-level ignored directories), target at
most 1.2x the anchor. A new session's first whole-tree checkpoint sets the watch up (a new
`Checkpoints` on the existing shadow: the ignored directories from git, a walk of the
directories, `git status`): shown apart, beside the same anchor. A turn that writes nothing (its tool calls are read-only) runs no
git at all: the hook's own time is shown. A command's whole cost is shown too: the time
`Checkpoints.around` adds to a command that rewrites one file (the snapshot before, the one after
with `update-index` and `write-tree` for that file, and the record), beside the same anchor. A writer that names its files (`editFile`, aider's automatic edit) snapshots
only those, before and after (blobs and a tree written directly, no git process), and records the
difference: the time `Checkpoints.around` adds to a one-line `editFile` (its
whole time minus the edit's own, shown apart), target under 50 ms. The state directory's growth is measured for such a
turn and for a command turn that rewrites one file. The event loop's lag (a 2 ms ticker) is
measured while a whole-tree checkpoint runs through `around` (it runs in a worker thread),
target under 16 ms, beside the same ticker for as long with nothing running (the machine's own lag)."""

FILES_PER_DIR = 200


def _git(root: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    subprocess.run(["git", "-c", "gc.auto=0", *args], cwd=root, env=env, check=True, capture_output=True)


def _project(base: Path, files: int) -> Path:
    root = base / "proj"
    for d in range(max(1, files // FILES_PER_DIR)):
        folder = root / "src" / f"d{d:03d}"
        folder.mkdir(parents=True)
        for f in range(min(files, FILES_PER_DIR)):
            (folder / f"f{f:03d}.py").write_text(f"def f{f}():\n    return {d}\n")
    (root / ".gitignore").write_text("node_modules/\n")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    return root


def _status(root: Path) -> float:
    began = time.perf_counter()
    subprocess.run(["git", "status", "--porcelain"], cwd=root, check=True, capture_output=True)
    return (time.perf_counter() - began) * 1000


async def _lag_during(work: "asyncio.Future[object]") -> float:
    """The loop's worst lag (ms) over a 2 ms ticker while ``work`` runs."""
    worst = 0.0
    while not work.done():
        began = time.perf_counter()
        await asyncio.sleep(0.002)
        worst = max(worst, (time.perf_counter() - began) * 1000 - 2.0)
    await work
    return worst


async def _run(quick: bool) -> BenchResult:
    from core.checkpoints.hooks import checkpointed_call
    from core.checkpoints.manager import Checkpoints
    from core.tools.edit_file import edit_file
    from core.types import ToolCall, ok_result

    files, repeats = (2_000, 3) if quick else (80_000, 5)
    result = BenchResult("checkpoints", TITLE, parameters={"files": files, "repeats": repeats})
    with tempfile.TemporaryDirectory(prefix="atui-checkpoints-") as tmp:
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")
        root = _project(Path(tmp), files)
        checkpoints = Checkpoints(root)
        began = time.perf_counter()
        await asyncio.to_thread(checkpoints.snapshot, None)
        first = (time.perf_counter() - began) * 1000
        _status(root)
        whole, status, known, edits, lag, idle, nothing, edit_growth, command_growth = [], [], [], [], [], [], [], [], []
        setup: list[float] = []
        command_part: list[float] = []
        target = root / "src" / "d000" / "f000.py"
        for repeat in range(repeats):
            status.append(_status(root))
            began = time.perf_counter()
            await asyncio.to_thread(checkpoints.snapshot, None)
            whole.append((time.perf_counter() - began) * 1000)
            session = Checkpoints(root)  # a new session on the same project: its watch is set up
            began = time.perf_counter()
            await asyncio.to_thread(session.snapshot, None)
            setup.append((time.perf_counter() - began) * 1000)
            session.close()

            reader = SimpleNamespace(checkpoints=checkpoints)  # a handler, as the hook sees it
            began = time.perf_counter()
            await checkpointed_call(reader, ToolCall(id="r", name="readFile", parameters={}), {}, False,
                                    lambda: _value(ok_result("read")))
            nothing.append((time.perf_counter() - began) * 1000)

            size = _size(checkpoints.repo.git_dir)
            params = {"path": str(target.relative_to(root)),
                      "edits": [{"old_text": f"return {repeat}" if repeat else "return 0", "new_text": f"return {repeat + 1}"}]}
            edit_ms: list[float] = []

            async def edit() -> dict:
                start = time.perf_counter()
                done = await asyncio.to_thread(edit_file, params, root)
                edit_ms.append((time.perf_counter() - start) * 1000)
                return done

            began = time.perf_counter()
            outcome = await checkpoints.around("editFile", edit, writes=[params["path"]])
            known.append((time.perf_counter() - began) * 1000 - edit_ms[0])
            edits.append(edit_ms[0])
            if "files_changed" not in outcome.get("metadata", {}):
                raise RuntimeError(f"the edit was not recorded: {outcome.get('content')}")
            edit_growth.append(float(_size(checkpoints.repo.git_dir) - size))

            size = _size(checkpoints.repo.git_dir)

            command_ms: list[float] = []

            async def command() -> dict:
                start = time.perf_counter()
                (root / "src" / "d001" / "f001.py").write_text(f"def changed():\n    return {repeat}\n")
                command_ms.append((time.perf_counter() - start) * 1000)
                return ok_result("ran")

            work = asyncio.ensure_future(checkpoints.around("runCommand", command))
            began = time.perf_counter()
            lag.append(await _lag_during(work))
            command_part.append((time.perf_counter() - began) * 1000 - command_ms[0])
            if "files_changed" not in work.result().get("metadata", {}):
                raise RuntimeError(f"the command's change was not recorded: {work.result().get('content')}")
            idle.append(await _lag_during(asyncio.ensure_future(asyncio.sleep(time.perf_counter() - began))))
            command_growth.append(float(_size(checkpoints.repo.git_dir) - size))
    result.add(Figure("whole-tree checkpoint of an unchanged tree (before a command)", "ms", whole, status,
                      "`git status --porcelain` on the same tree", target=at_most(1.2, "ratio")))
    result.add(Figure("a new session's first whole-tree checkpoint (sets the watch up)", "ms", setup, status,
                      "`git status --porcelain` on the same tree"))
    result.add(Figure("a command rewriting one file: the checkpoints' part, before + after + record", "ms", command_part,
                      status, "`git status --porcelain` on the same tree"))
    result.add(Figure("first checkpoint of the project (hashes every file once)", "ms", [first]))
    result.add(Figure("a turn that writes nothing: the hook around a read-only call", "ms", nothing, target=at_most(1.0)))
    result.add(Figure("a known-writes turn (editFile): the checkpoint's part, before + after + record", "ms", known,
                      target=at_most(50.0)))
    result.add(Figure("the edit itself (editFile's checks and atomic write), for scale", "ms", edits))
    result.add(Figure("state directory growth, one-line editFile turn", "bytes", edit_growth))
    result.add(Figure("state directory growth, a command turn rewriting one file", "bytes", command_growth))
    result.add(Figure("event loop lag while a whole-tree checkpoint runs (worst)", "ms", lag, idle,
                      "the same ticker for as long with nothing running", target=at_most(16.0)))
    result.notes.append(f"Load average when measured: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
                        f"p50 of the checkpoint {percentile(whole, 50):.0f} ms, of git status {percentile(status, 50):.0f} ms.")
    return result


def _size(directory: Path) -> int:
    """A directory's size on disk (the shadow repository)."""
    total = 0
    for folder, _dirs, names in os.walk(directory):
        for name in names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


async def _value(value: object) -> object:
    return value


def run(quick: bool = False) -> BenchResult:
    return asyncio.run(_run(quick))
