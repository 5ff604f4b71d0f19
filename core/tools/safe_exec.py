"""The ``executeFilePathCommand`` tool: read-only file-finding commands, run safely.

A command line from the model is checked by :mod:`core.tools.command_policy`
(never a shell; an allowlist of read-only programs and options; paths outside
the project refused), then run with ``asyncio.create_subprocess_exec``: pipes
connected here, each stage in its own process group (killed as a whole on
timeout, on output overflow and on cancellation), in the project root, with an
environment stripped of secrets.

Whenever bubblewrap works on the machine, every stage runs inside it
(:mod:`core.tools.find_sandbox`): the project read-only, no network,
nothing of the home directory, secret files masked. Without it the allowlist
alone stands between the model and the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from core.approvals import Approvals, Need
from core.gitutil import GitRefused, git_env, user_identity
from core.sandbox.preflight import SandboxStatus
from core.tools.command_policy import SOURCES, Approval, CommandRefused, ls_listing_dir, plan_command
from core.tools.env_dirs import skipped_note, take_skipped
from core.tools.find_sandbox import (
    CHILD_PATH,
    hides_git_objects,
    known_status,
    sandbox_status,
    sandboxed_env,
    sandboxed_stages,
)
from core.tools.output_paths import MAX_CHECKED_LINES, FoundPaths, find_paths_in_output, parse_file_paths_from_output
from core.tools.paths_guard import is_inside, relative_display
from core.secrets import env_file_values, redact, scrubbed_env, withhold_secret_lines
from core.trust import root_problem
from core.types import ApprovalRequest, Approver, TaskResult, ToolCall, error_result, ok_result

__all__ = [
    "FILE_PATH_COMMAND_SPEC",
    "CommandResult",
    "execute_command_safely",
    "FoundPaths",
    "find_paths_in_output",
    "parse_file_paths_from_output",
    "run_file_path_command",
    "scrubbed_env",
]

log = logging.getLogger(__name__)

TOOL_NAME = "executeFilePathCommand"
STDERR_CAP = 64 * 1024
OUTPUT_SHOWN = 2000
"""Characters of a command's output shown to the model when it printed no paths (the rest is counted, not shown)."""
MAX_LISTED_PATHS = 500
HIDDEN_HISTORY = (
    "git could not read its objects: the project's git history holds a secret file, so git's object store is "
    "hidden in the sandbox. Search the working tree instead: git grep PATTERN (no revision, no --cached), "
    "grep -rl PATTERN . or rg -l PATTERN."
)
_CHUNK = 64 * 1024
_REAP_SECONDS = 2.0
# Programs whose exit status 1 means "nothing matched", not a failure.
_NO_MATCH_IS_ONE = frozenset({"grep", "rg", "git"})
# Keeps pagers quiet in the child; git's own hardening comes from core.gitutil.git_env.
_CHILD_EXTRA_ENV = {"PAGER": "cat"}

CommandStatus = Literal["success", "error", "refused", "timeout", "cancelled"]

FILE_PATH_COMMAND_SPEC: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": (
        "Run a read-only file-finding command in the project root (in a sandbox: the project read-only, no "
        "network) and get back the file paths it prints. There is no shell: one program, optionally piped with '|' "
        "into filters. Only these programs run: find, ls, git ls-files, git grep, grep (e.g. grep -rl PATTERN .), "
        "rg, fd; cat, head, tail, wc, nl, file, stat on project files; filters after '|': head, tail, sort, uniq, "
        "wc, grep; with the user's approval git's read-only subcommands (status, log, diff, show...). Anything else "
        "is refused, as are ';', '&&', '$(...)', redirection, find -exec/-delete, paths outside the project and "
        "secret files (.env, keys). find and grep -r leave out .venv, node_modules, __pycache__ and other "
        "environment directories unless you name one as a path. Example: find . -name '*.py' | grep auth"
    ),
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The command line, e.g. git ls-files '*.py'"}},
        "required": ["command"],
    },
}


@dataclass(frozen=True)
class CommandResult:
    """What happened to a command.

    ``status`` is ``success``, ``error`` (non-zero exit or could not start),
    ``refused`` (never ran; ``reason`` says why, written for the model),
    ``timeout`` (killed; partial output kept) or ``cancelled`` (reserved for
    callers: :func:`execute_command_safely` re-raises ``CancelledError``).
    """

    status: CommandStatus
    stdout: str = ""
    stderr: str = ""
    returncode: int | None = None
    reason: str = ""
    truncated: bool = False
    argv: list[list[str]] = field(default_factory=list)
    decision: str = ""
    """How approval went when it was needed: a Decision value, ``allow_mode``, ``session``, or empty."""
    duration: float = 0.0


class _NotRunnable(Exception):
    pass


def _search_path(env: Mapping[str, str], root: Path) -> str:
    """PATH without relative entries or directories inside the project (a repo cannot plant a ``find``)."""
    keep = []
    for entry in env.get("PATH", os.defpath).split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        try:
            if is_inside(Path(entry).resolve(), root):
                continue
        except OSError:
            continue
        keep.append(entry)
    return os.pathsep.join(keep)


def child_env(base: Mapping[str, str], project_root: Path, *, git: bool = False, blame: bool = False) -> dict[str, str]:
    """The environment of a command's children: ``base`` (already scrubbed) with the fixed PATH.

    With ``git``, also git's hardening (:func:`core.gitutil.git_env`): no program the
    repository names, no system or global config (the user's name and e-mail kept).

    Raises:
        GitRefused: The repository points git outside the project.
    """
    env = {**base, **_CHILD_EXTRA_ENV, "PATH": CHILD_PATH}
    if git:
        env = git_env(project_root, env, identity=user_identity(), global_config=False, blame=blame)
    return env


def _resolve_programs(stages: list[list[str]], env: Mapping[str, str], root: Path, *,
                      sandboxed: bool = False) -> list[list[str]]:
    """Each stage's program as an absolute path (sandboxed: only the system directories the sandbox holds)."""
    path = CHILD_PATH if sandboxed else _search_path(env, root)
    resolved = []
    for argv in stages:
        found = shutil.which(argv[0], path=path)
        if found is None:
            hint = " Use find or grep -rl instead." if argv[0] in ("rg", "fd", "fdfind") else ""
            where = "in the system directories the sandbox holds" if sandboxed else "on PATH"
            raise _NotRunnable(f"The program {argv[0]!r} is not installed (not found {where}).{hint}")
        resolved.append([found, *argv[1:]])
    return resolved


def _display(stages: list[list[str]]) -> str:
    return " | ".join(shlex.join(argv) for argv in stages)


async def _approve(
    command: str,
    display: str,
    pending: list[Approval],
    *,
    approvals: Approvals,
    remembered: bool,
    ask: Approver | None,
    tool_call_id: str,
) -> tuple[str, str]:
    """Ask :class:`Approvals` (the one place approval is decided); returns (decision, refusal reason or "")."""
    keys = tuple(dict.fromkeys(a.key for a in pending))
    why = " ".join(dict.fromkeys(a.reason for a in pending))
    use_instead = f"Read-only file-finding commands run without approval: {', '.join(SOURCES)}."

    async def prepare(asked: tuple[str, ...]) -> ApprovalRequest:
        return ApprovalRequest(
            tool_call=ToolCall(id=tool_call_id or TOOL_NAME, name=TOOL_NAME, parameters={"command": command}),
            title=f"Run {', '.join(asked or keys)}?",
            detail=display,
            reason=why,
            session_key=",".join(asked) if remembered else "",  # offered only when remembered
        )

    need = Need(
        keys=keys if remembered else (),
        changes=False,
        read_only_reason=f"{why} It needs approval and the approval mode is 'deny'. {use_instead}",
        nobody_reason=f"{why} It needs the user's approval, which cannot be asked here. {use_instead}",
        declined_reason=f"The user declined to run: {display}. {use_instead}",
    )
    ruling = await approvals.decide(need, prepare, ask=ask)
    decision = {"mode": "allow_mode", "session": "session", "nobody": ""}.get(ruling.via, ruling.decision.value)
    return decision, ruling.reason


def _kill_groups(procs: list[asyncio.subprocess.Process]) -> None:
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


async def _reap(procs: list[asyncio.subprocess.Process], readers: list[asyncio.Task[None]]) -> None:
    """Wait briefly for killed processes and their pipes, so nothing is left behind."""
    try:
        async with asyncio.timeout(_REAP_SECONDS):
            await asyncio.gather(*(proc.wait() for proc in procs), *readers, return_exceptions=True)
    except TimeoutError:
        log.warning("processes %s did not finish after SIGKILL", [p.pid for p in procs])
    for reader in readers:
        reader.cancel()
    await asyncio.gather(*readers, return_exceptions=True)


async def _drain(stream: asyncio.StreamReader, sink: bytearray, cap: int) -> None:
    while chunk := await stream.read(_CHUNK):
        if len(sink) < cap:
            sink += chunk[: cap - len(sink)]


def _pump_withholding(source: int, sink: int, root: Path) -> None:
    """Copy the first stage's output to the second, without the lines of secret files (a thread)."""
    try:
        with os.fdopen(source, "rb") as reader, os.fdopen(sink, "wb") as writer:
            pending = b""
            while chunk := reader.read1(_CHUNK):
                pending += chunk
                cut = max(pending.rfind(b"\n"), pending.rfind(b"\0"))
                if cut < 0:
                    pending = pending if len(pending) < _CHUNK * 16 else b""  # no file name this long
                    continue
                ready, pending = pending[: cut + 1], pending[cut + 1 :]
                kept, _ = withhold_secret_lines(ready.decode("utf-8", "surrogateescape"), root)
                writer.write(kept.encode("utf-8", "surrogateescape"))
                writer.flush()
            if pending:
                kept, _ = withhold_secret_lines(pending.decode("utf-8", "surrogateescape"), root)
                writer.write(kept.encode("utf-8", "surrogateescape"))
    except OSError:  # the next stage ended (broken pipe) or the pipeline was killed
        pass


async def _spawn(
    stages: list[list[str]], cwd: Path, env: dict[str, str], withhold_after_first: bool = False
) -> list[asyncio.subprocess.Process]:
    """Start every stage, connecting stdout of one to stdin of the next with os.pipe.

    With ``withhold_after_first``, the first stage's output passes through
    :func:`_pump_withholding` on its way to the second (a content search piped into a filter).
    """
    procs: list[asyncio.subprocess.Process] = []
    previous: int | None = None
    try:
        for index, argv in enumerate(stages):
            read_next, write = os.pipe() if index < len(stages) - 1 else (None, None)
            stdin, previous = previous, None
            starting = asyncio.ensure_future(asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL if stdin is None else stdin,
                stdout=asyncio.subprocess.PIPE if write is None else write,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
            ))
            try:
                # Shielded: a cancellation while the process starts must still give us the process to kill.
                proc = await asyncio.shield(starting)
            except asyncio.CancelledError:
                if not starting.cancelled():
                    with contextlib.suppress(Exception):
                        procs.append(await starting)
                if read_next is not None:
                    os.close(read_next)
                raise
            except BaseException:
                if read_next is not None:
                    os.close(read_next)
                raise
            finally:
                for fd in (stdin, write):
                    if fd is not None:
                        os.close(fd)
            previous = read_next
            procs.append(proc)
            if index == 0 and withhold_after_first and read_next is not None:
                filtered, into_next = os.pipe()
                threading.Thread(target=_pump_withholding, args=(read_next, into_next, cwd), daemon=True).start()
                previous = filtered
    except BaseException:
        _kill_groups(procs)
        await _reap(procs, [])
        raise
    return procs


async def _run(
    stages: list[list[str]], *, cwd: Path, env: dict[str, str], timeout: float, max_output: int,
    withhold_after_first: bool = False,
) -> tuple[str, bytes, bytes, int | None, bool]:
    """Run a planned pipeline; returns (status, stdout, stderr, returncode, truncated)."""
    procs = await _spawn(stages, cwd, env, withhold_after_first)
    last = procs[-1]
    assert last.stdout is not None
    stdout = bytearray()
    errors = [bytearray() for _ in procs]
    readers = [
        asyncio.create_task(_drain(p.stderr, buf, STDERR_CAP))  # type: ignore[arg-type]
        for p, buf in zip(procs, errors)
    ]
    truncated = False

    def discard_rest() -> None:
        # Keep reading (and dropping) stdout so the pipe closes and the process can be reaped.
        if len(readers) == len(procs):
            readers.append(asyncio.create_task(_drain(last.stdout, bytearray(), 0)))  # type: ignore[arg-type]

    try:
        async with asyncio.timeout(timeout):
            while chunk := await last.stdout.read(_CHUNK):
                room = max_output - len(stdout)
                if len(chunk) > room:
                    stdout += chunk[:room]
                    truncated = True
                    _kill_groups(procs)
                    break
                stdout += chunk
            discard_rest()
            await asyncio.gather(*(proc.wait() for proc in procs), *readers)
    except TimeoutError:
        _kill_groups(procs)
        discard_rest()
        await _reap(procs, readers)
        return "timeout", bytes(stdout), b"".join(errors), last.returncode, truncated
    except BaseException:  # CancelledError above all: kill, reap, re-raise
        _kill_groups(procs)
        discard_rest()
        await _reap(procs, readers)
        raise
    if truncated:
        del stdout[stdout.rfind(b"\n") + 1 :]
    return "done", bytes(stdout), b"".join(errors), last.returncode, truncated


async def execute_command_safely(
    command: str,
    *,
    project_root: Path,
    timeout: float = 30.0,
    max_output: int = 1_000_000,
    secrets: Sequence[str] = (),
    approve: Approver | None = None,
    approval_mode: str = "ask",
    approvals: Approvals | None = None,
    ask: Approver | None = None,
    tool_call_id: str = "",
    sandbox: SandboxStatus | None = None,
) -> CommandResult:
    """Run a command line from the model without a shell, if policy allows it.

    Args:
        command: The command line (see ``FILE_PATH_COMMAND_SPEC`` for what is allowed).
        project_root: Working directory; no path argument may leave it.
        timeout: Seconds before every process group of the pipeline is killed.
        max_output: Bytes of stdout kept; beyond it the pipeline is killed and the
            result marked truncated (cut back to the last complete line).
        secrets: Secret values kept out of the child environment and redacted from output.
        approve: Asked about commands outside the read-only allowlist when
            ``approval_mode`` is ``ask`` (a one-off caller without ``approvals``; nothing is remembered).
            Never asked about shell syntax or forbidden options.
        approval_mode: ``ask``, ``allow`` (run without asking) or ``deny``, with ``approve``.
        approvals: The session's :class:`core.approvals.Approvals` (mode, approver, "always"
            answers): it decides, and remembers an "always"; ``approve`` and ``approval_mode`` are then unused.
        ask: How the question is put (e.g. a turn reporting the wait); the approvals' approver by default.
        tool_call_id: Id of the tool call, carried in the approval request.
        sandbox: Whether and where bubblewrap works; None probes once (:func:`sandbox_status`).
            Every stage runs inside it when it is available.

    Returns:
        A CommandResult; refusals and failures are results, not exceptions.

    Raises:
        asyncio.CancelledError: When cancelled, after killing every process group.
    """
    started = time.monotonic()
    secret_values = [s for s in secrets if s]
    secret_values += await asyncio.to_thread(env_file_values, project_root)

    def finish(status: CommandStatus, **fields: Any) -> CommandResult:
        for name in ("stdout", "stderr", "reason"):
            if fields.get(name):
                fields[name] = redact(fields[name], secret_values)
        return CommandResult(status=status, duration=time.monotonic() - started, **fields)

    try:
        plan = plan_command(command, project_root)
    except CommandRefused as exc:
        log.info("refused command (%s): %s", exc.kind, redact(exc.reason, secret_values))
        return finish("refused", reason=exc.reason)
    if problem := root_problem(project_root):
        return finish("refused", reason=f"{problem}.")
    base_env = scrubbed_env(secret_values)
    planned = [list(stage) for stage in plan.stages]
    if sandbox is None:
        sandbox = known_status() or await asyncio.to_thread(sandbox_status)
    bwrap = sandbox.bwrap if sandbox.available else None
    try:
        stages = _resolve_programs(planned, base_env, project_root.resolve(), sandboxed=bwrap is not None)
        gits = [stage for stage in planned if stage[0] == "git"]
        env = child_env(base_env, project_root, git=bool(gits),
                        blame=any(word in ("blame", "annotate") for stage in gits for word in stage))
    except _NotRunnable as exc:
        return finish("error", reason=str(exc), argv=planned)
    except GitRefused as exc:
        return finish("refused", reason=f"git is not run in this project: {exc.reason}.", argv=planned)
    display = _display(stages)
    decision = ""
    if plan.approvals:
        decision, refusal = await _approve(
            command, display, list(plan.approvals), approvals=approvals or Approvals(approval_mode, approve),
            remembered=approvals is not None, ask=ask, tool_call_id=tool_call_id,
        )
        if refusal:
            return finish("refused", reason=refusal, argv=stages, decision=decision)
    log.info("running %s%s", redact(display, secret_values), " (sandboxed)" if bwrap else " (UNSANDBOXED)")
    launched = stages
    if bwrap is not None:
        env = sandboxed_env(env)
        launched = await asyncio.to_thread(sandboxed_stages, stages, bwrap, project_root.resolve())
    try:
        status, out, err, code, truncated = await _run(
            launched, cwd=project_root, env=env, timeout=timeout, max_output=max_output,
            withhold_after_first=plan.filter_secrets and len(stages) > 1,
        )
    except OSError as exc:
        return finish("error", reason=f"Could not start {display}: {exc.strerror or exc}.", argv=stages,
                      decision=decision)
    stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    withheld = 0
    if plan.filter_secrets and stdout and len(stages) == 1:
        stdout, withheld = await asyncio.to_thread(withhold_secret_lines, stdout, project_root)
    if withheld:
        log.info("withheld %d output line(s) of secret or unnamed files", withheld)
    masked = 0
    stderr, skipped = take_skipped(stderr)
    if bwrap is not None and stderr:
        stderr, masked = without_masked_errors(stderr)
    notes = [MASKED_NOTE.format(masked)] if masked else []
    if note := skipped_note(skipped or list(plan.skipped_dirs)):
        notes.append(note)
    common = dict(stdout=stdout, stderr=stderr, returncode=code, truncated=truncated, argv=stages, decision=decision)
    if status == "timeout":
        return finish("timeout", reason=f"The command ran longer than {timeout:g} s and was stopped. "
                      "Narrow the search (a subdirectory, -maxdepth, a more specific pattern).", **common)
    if truncated:
        return finish("success", reason=" ".join([f"The output passed {max_output} bytes; it was cut there and the "
                                                  "command was stopped. Narrow the search.", *notes]), **common)
    program = Path(stages[-1][0]).name
    quiet = not stderr.strip()
    if code == 0 or (program in _NO_MATCH_IS_ONE and quiet and (code == 1 or (code == 2 and masked))):
        return finish("success", reason=" ".join(notes), **common)
    if bwrap is not None and gits and await asyncio.to_thread(hides_git_objects, bwrap, project_root.resolve()):
        # git's own message names the blobs (and files) it could not read: replaced, not shown.
        return finish("error", reason=HIDDEN_HISTORY, **{**common, "stderr": ""})
    first_line = stderr.strip().splitlines()[0] if stderr.strip() else "no error message"
    return finish("error", reason=f"The command exited with status {code}: {first_line}", **common)


MASKED_NOTE = ("{} file(s) could not be read: secret files are masked in the sandbox the command runs in, "
               "and were skipped.")


def without_masked_errors(stderr: str) -> tuple[str, int]:
    """``stderr`` without the "Permission denied" lines of masked files (they would name them), and their count.

    Inside the read-only sandbox nothing else is denied: the masks (mode 000) are what a
    command cannot read, and which secret file it tried to read is itself a secret.
    """
    kept: list[str] = []
    dropped = 0
    for line in stderr.splitlines(keepends=True):
        if "Permission denied" in line:
            dropped += 1
        else:
            kept.append(line)
    return "".join(kept), dropped


def _listing(paths: list[str], root: Path) -> str:
    shown = [relative_display(Path(p), root) for p in paths[:MAX_LISTED_PATHS]]
    more = len(paths) - len(shown)
    tail = [f"... and {more} more; narrow the search to see them."] if more > 0 else []
    return "\n".join(shown + tail)


async def run_file_path_command(
    params: Mapping[str, Any],
    *,
    project_root: Path,
    timeout: float = 30.0,
    secrets: Sequence[str] = (),
    approve: Approver | None = None,
    approval_mode: str = "ask",
    approvals: Approvals | None = None,
    ask: Approver | None = None,
    tool_call_id: str = "",
    max_output: int = 1_000_000,
) -> TaskResult:
    """Executor of ``executeFilePathCommand``: run the command, report the paths found.

    Success content lists the paths relative to the project root, one per line;
    ``metadata["paths"]`` holds them absolute. Refusals, failures and timeouts are
    error results whose content tells the model what to change.
    """
    command = params.get("command")
    if not isinstance(command, str) or not command.strip():
        return error_result("The 'command' parameter must be a non-empty string, e.g. find . -name '*.py'")
    result = await execute_command_safely(
        command, project_root=project_root, timeout=timeout, max_output=max_output, secrets=secrets,
        approve=approve, approval_mode=approval_mode, approvals=approvals, ask=ask, tool_call_id=tool_call_id,
    )
    listed_dir = ls_listing_dir(result.argv[0]) if result.argv else None
    base = project_root.resolve() / listed_dir if listed_dir else None
    found = FoundPaths([])
    if result.stdout:
        found = await asyncio.to_thread(find_paths_in_output, result.stdout, project_root, base=base)
    paths = found.paths
    meta = dict(command=command, paths=paths, argv=result.argv, returncode=result.returncode,
                command_status=result.status, truncated=result.truncated, decision=result.decision,
                unchecked_lines=found.unchecked_lines)
    unchecked = (f"Only the first {MAX_CHECKED_LINES} distinct lines of output were checked for paths; "
                 f"{found.unchecked_lines} more were not. Narrow the search.") if found.unchecked_lines else ""
    if result.status == "refused":
        return error_result(f"Refused: {result.reason}", **meta)
    if result.status == "timeout":
        partial = f"\nPaths found before it stopped:\n{_listing(paths, project_root)}" if paths else ""
        return error_result("\n".join(filter(None, [f"{result.reason}{partial}", unchecked])), **meta)
    if result.status == "error" and not paths:
        detail = f"\n{result.stderr.strip()[:2000]}" if result.stderr.strip() else ""
        return error_result(f"{result.reason}{detail}", **meta)
    notes = [note for note in (result.reason, unchecked) if note]
    if paths:
        body = f"Found {len(paths)} path(s):\n{_listing(paths, project_root)}"
    elif result.stdout.strip():
        output = result.stdout.strip()
        shown = output[:OUTPUT_SHOWN] + (f"\n[... {len(output) - OUTPUT_SHOWN:,} more characters not shown]" if len(output) > OUTPUT_SHOWN else "")
        body = "The command printed no paths of existing files inside the project. Its output:\n" + shown
    else:
        body = "The command found no files."
    return ok_result("\n".join([body, *notes]), **meta)
