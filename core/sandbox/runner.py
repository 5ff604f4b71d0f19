"""Running one command in the sandbox: live output, limits, and a clean kill.

The command runs as its own process group (``start_new_session``) under bubblewrap
with ``--die-with-parent`` and a new PID namespace: killing the group (and the pids
cgroup, when there is one) takes the whole tree down, and anything that escaped
the group dies with the namespace's first process. Output is read as it comes,
decoded incrementally, handed to ``on_output`` in batches (at most every
``FLUSH_SECONDS`` per stream, so a command printing 100k lines costs the event loop
a few dozen callbacks, not 100k), and kept as a head and a tail for the result.
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import os
import re
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable, Literal, Sequence

from core.sandbox import history, seccomp
from core.sandbox.bwrap import bwrap_argv, sandbox_env
from core.sandbox.limits import Limits, PidsCgroup, limit_wrapper, make_cgroup
from core.sandbox.protect import MountPoints, Moved, make_mount_points, sweep
from core.sandbox.walk import ProjectScan, scan_project, walk_protected

log = logging.getLogger(__name__)

OutputCallback = Callable[[str, str], "Awaitable[None] | None"]
RunStatus = Literal["exited", "timeout", "output_limit", "error"]

FLUSH_SECONDS = 0.05
FLUSH_BYTES = 64 * 1024
HEAD_CHARS = 8_000
TAIL_CHARS = 40_000
_READ = 64 * 1024
_REAP_SECONDS = 1.0
_CHILD_PID = re.compile(rb'"child-pid"\s*:\s*(\d+)\s*[,}\n]')


@dataclass
class RunResult:
    """What happened to one run."""

    status: RunStatus
    returncode: int | None = None
    output: str = ""
    """stdout and stderr as they interleaved; the middle left out past ``HEAD_CHARS + TAIL_CHARS``."""
    omitted_chars: int = 0
    output_bytes: int = 0
    duration: float = 0.0
    pid: int | None = None
    """Process id of the outermost process (bubblewrap), for checking the tree is gone."""
    process_limit_hit: bool = False
    sandboxed: bool = True
    argv: list[str] = field(default_factory=list)
    error: str = ""
    moved: list[Moved] = field(default_factory=list)
    """Configuration files the command created (``.env.x``, a ``.git`` in a subdirectory), moved out of the project."""

    @property
    def ok(self) -> bool:
        return self.status == "exited" and self.returncode == 0


class _Capture:
    """The start and the end of the output, and the pending batches per stream."""

    def __init__(self) -> None:
        self.head: list[str] = []
        self.head_len = 0
        self.tail: deque[str] = deque()
        self.tail_len = 0
        self.omitted = 0
        self.bytes = 0
        self.pending: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self.pending_len: dict[str, int] = {"stdout": 0, "stderr": 0}

    def add(self, text: str, stream: str) -> None:
        self.pending[stream].append(text)
        self.pending_len[stream] += len(text)
        if self.head_len < HEAD_CHARS:
            take = text[: HEAD_CHARS - self.head_len]
            self.head.append(take)
            self.head_len += len(take)
            text = text[len(take) :]
        if text:
            self.tail.append(text)
            self.tail_len += len(text)
            while self.tail_len - len(self.tail[0]) >= TAIL_CHARS:
                dropped = self.tail.popleft()
                self.tail_len -= len(dropped)
                self.omitted += len(dropped)

    def take(self, stream: str) -> str:
        text = "".join(self.pending[stream])
        self.pending[stream] = []
        self.pending_len[stream] = 0
        return text

    def text(self) -> str:
        tail = "".join(self.tail)
        if self.tail_len > TAIL_CHARS:
            cut = self.tail_len - TAIL_CHARS
            self.omitted += cut
            self.tail = deque([tail[cut:]])
            self.tail_len = TAIL_CHARS
            tail = tail[cut:]
        head = "".join(self.head)
        if self.omitted:
            return f"{head}\n[... {self.omitted:,} characters left out ...]\n{tail}"
        return head + tail


class _Tree:
    """How to kill one run's processes: the sandbox's first process, the group, the cgroup."""

    def __init__(self, proc: asyncio.subprocess.Process, cgroup: PidsCgroup | None, info: asyncio.Task[int | None] | None) -> None:
        self.proc = proc
        self.cgroup = cgroup
        self.info = info

    def kill(self, *, everything: bool = False) -> None:
        """SIGKILL everything at once.

        The sandbox's first process (PID 1 of its namespace) goes first: the kernel then
        kills every process in the namespace, and that process is only reaped (so
        bubblewrap only exits) once they are all gone. The process group and the cgroup
        catch the rest, and anything run unsandboxed (``everything`` kills the group even when
        the first process is known: the last resort).
        """
        child = self.info.result() if self.info is not None and self.info.done() and not self.info.cancelled() else None
        if child:
            try:
                os.kill(child, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if child and not everything:
            return  # bubblewrap exits once the namespace is empty: waiting for it is waiting for all
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.cgroup is not None:
            self.cgroup.kill()


async def _child_pid(reader: asyncio.StreamReader) -> int | None:
    """The sandbox's first process, from bubblewrap's ``--info-fd`` JSON."""
    data = b""
    # Not to the end: bubblewrap writes the first field before the rest, and the
    # sandboxed processes may keep the descriptor open.
    while not (found := _CHILD_PID.search(data)) and (chunk := await reader.read(4096)):
        data += chunk
    return int(found.group(1)) if found else None


async def run_command(
    argv: Sequence[str],
    *,
    project_root: Path,
    bwrap: str | None,
    limits: Limits = Limits(),
    network: bool = False,
    cwd: Path | None = None,
    read_only: Sequence[str] = (),
    on_output: OutputCallback | None = None,
    rlimit_nproc: bool = False,
) -> RunResult:
    """Run ``argv`` (no shell) under bubblewrap, or bare when ``bwrap`` is None.

    Args:
        argv: Program and arguments.
        project_root: The writable project; the working directory unless ``cwd``.
        bwrap: Path of ``bwrap``; None runs the command unsandboxed (only when the user allowed it).
        limits: Time, CPU, process and output limits.
        network: Give the command the host's network.
        cwd: Working directory (inside the project).
        read_only: Extra host paths visible read-only (toolchains).
        on_output: Called with ``(text, stream)`` batches as output arrives.
        rlimit_nproc: Apply the process limit with ``RLIMIT_NPROC`` inside the sandbox
            (when no pids cgroup is available and we are not root).

    Returns:
        A RunResult. Failures to start are results (status ``error``), not exceptions.

    Raises:
        asyncio.CancelledError: When cancelled, after the whole process tree was killed.
    """
    started = time.monotonic()
    wall_started = time.time()
    root = project_root.resolve()
    extra = [p for p in read_only if os.path.isabs(p)]
    env = sandbox_env(root, extra)
    cgroup = make_cgroup(limits.max_processes)
    info_read, info_write = os.pipe() if bwrap is not None else (None, None)
    filter_fd = seccomp.filter_fd() if bwrap is not None else None
    scan: ProjectScan | None = None
    points: MountPoints | None = None
    if bwrap is not None:
        # The walk reads the tree (and small files' content): off the event loop.
        scan, points = await asyncio.to_thread(_prepare, root, tuple(p for p in extra if os.path.exists(p)))
        full = bwrap_argv(bwrap, argv, project_root=root, cwd=cwd, network=network, read_only=extra,
                          nproc=limits.max_processes if rlimit_nproc and cgroup is None else None, info_fd=info_write,
                          scan=scan, mount_points=points, seccomp_fd=filter_fd)
    else:
        full = list(argv)
        env["HOME"] = str(root)
    full = limit_wrapper(limits, cgroup) + full
    capture = _Capture()
    result = RunResult(status="exited", sandboxed=bwrap is not None, argv=list(argv))
    info: asyncio.Task[int | None] | None = None
    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                *full, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=str(cwd or root), env=env, start_new_session=True,
                pass_fds=tuple(fd for fd in (info_write, filter_fd) if fd is not None),
            )
        except OSError as exc:
            result.status, result.error = "error", f"could not start {argv[0]}: {exc.strerror or exc}"
            return result
        finally:
            for fd in (info_write, filter_fd):
                if fd is not None:
                    os.close(fd)
        if info_read is not None:
            reader = asyncio.StreamReader()
            loop = asyncio.get_running_loop()
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(info_read, "rb"))
            info_read = None
            info = asyncio.create_task(_child_pid(reader))
        result.pid = proc.pid
        await _pump(proc, capture, limits, on_output, result, _Tree(proc, cgroup, info))
        if cgroup is not None and cgroup.limit_hit():
            result.process_limit_hit = True
    finally:
        if info_read is not None:
            os.close(info_read)
        if info is not None:
            info.cancel()
            await asyncio.gather(info, return_exceptions=True)
        if cgroup is not None:
            for _ in range(100):  # at most 1 s: processes killed with the namespace are still exiting
                if cgroup.empty():
                    break
                await asyncio.sleep(0.01)
            cgroup.remove()
        if scan is not None:
            await asyncio.to_thread(_finish, root, scan, points, wall_started, result)
        result.duration = time.monotonic() - started
    result.output = capture.text()
    if result.moved:
        names = ", ".join(m.path for m in result.moved)
        result.output += (f"\n[sandbox] moved out of the project after the run: {names}. Commands may not create "
                          "files that git, aider or the app read as configuration (.git, .env*, .envrc, .aider*...).")
    said = history.notice(root, scan.git_configs, scan.secret_files) if scan is not None else None
    if said:
        result.output += "\n" + said
    result.omitted_chars = capture.omitted
    result.output_bytes = capture.bytes
    return result


def _prepare(root: Path, visible: tuple[str, ...]) -> tuple[ProjectScan, MountPoints]:
    scan = scan_project(root, visible)
    # git runs here, off the event loop; bwrap_argv then hits the cache
    history.secrets_in_history(root, scan.git_configs, scan.secret_files)
    return scan, make_mount_points(root)


def _finish(root: Path, scan: ProjectScan, points: MountPoints | None, started: float, result: RunResult) -> None:
    """After the run: protected entries it created are moved out, its mount points removed (blocking)."""
    from core.paths import state_dir

    try:
        result.moved = sweep(root, scan.protected, scan.protected_links, started, state_dir() / "quarantine",
                             walk_protected(root))
    except OSError as exc:
        log.warning("checking %s after a sandboxed run failed: %s", root, exc)
    finally:
        if points is not None:
            points.release()


async def _pump(
    proc: asyncio.subprocess.Process,
    capture: _Capture,
    limits: Limits,
    on_output: OutputCallback | None,
    result: RunResult,
    tree: _Tree,
) -> None:
    over = asyncio.Event()

    async def flush(stream: str) -> None:
        text = capture.take(stream)
        if text and on_output is not None:
            maybe = on_output(text, stream)
            if maybe is not None:
                await maybe

    async def read(stream: asyncio.StreamReader, name: str) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        last = time.monotonic()
        while data := await stream.read(_READ):
            if over.is_set():
                continue  # keep draining so the pipe closes, keep nothing
            capture.bytes += len(data)
            if capture.bytes > limits.max_output:
                data = data[: max(0, len(data) - (capture.bytes - limits.max_output))]
                capture.bytes = limits.max_output
                over.set()
            capture.add(decoder.decode(data), name)
            now = time.monotonic()
            if over.is_set() or now - last >= FLUSH_SECONDS or capture.pending_len[name] >= FLUSH_BYTES:
                last = now
                await flush(name)
        capture.add(decoder.decode(b"", final=True), name)
        await flush(name)

    async def ticker() -> None:
        while True:  # output that trickles in (pytest's dots) is shown within FLUSH_SECONDS
            await asyncio.sleep(FLUSH_SECONDS)
            for name in ("stdout", "stderr"):
                if capture.pending_len[name]:
                    await flush(name)

    readers = [asyncio.create_task(read(proc.stdout, "stdout")), asyncio.create_task(read(proc.stderr, "stderr"))]  # type: ignore[arg-type]
    tick = asyncio.create_task(ticker())
    overflow = asyncio.create_task(over.wait())
    done = asyncio.gather(proc.wait(), *readers)
    try:
        async with asyncio.timeout(limits.timeout):
            await asyncio.wait([done, overflow], return_when=asyncio.FIRST_COMPLETED)
            if over.is_set():
                result.status = "output_limit"
                tree.kill()
            await done
    except TimeoutError:
        result.status = "timeout"
        tree.kill()
        await _reap(proc, readers, tree)
    except BaseException:
        tree.kill()
        await _reap(proc, readers, tree)
        raise
    finally:
        tick.cancel()
        overflow.cancel()
        if not done.done():
            done.cancel()
        await asyncio.gather(done, tick, overflow, return_exceptions=True)
    result.returncode = proc.returncode


async def _reap(proc: asyncio.subprocess.Process, readers: list[asyncio.Task[None]], tree: _Tree) -> None:
    """Wait (briefly) for the killed tree and its pipes, so nothing is left behind."""
    try:
        async with asyncio.timeout(_REAP_SECONDS):
            await proc.wait()
    except TimeoutError:
        log.warning("process %s did not exit within %.1fs of SIGKILL", proc.pid, _REAP_SECONDS)
        tree.kill(everything=True)
    try:
        async with asyncio.timeout(_REAP_SECONDS):
            await asyncio.gather(proc.wait(), *readers, return_exceptions=True)
    except TimeoutError:
        log.warning("the output pipes of %s stayed open after SIGKILL", proc.pid)
    for reader in readers:
        reader.cancel()
    await asyncio.gather(*readers, return_exceptions=True)
