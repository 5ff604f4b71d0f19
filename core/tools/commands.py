"""``runCommand`` and ``runTests``: the model's commands, run in the sandbox (issue 13).

Also what ``/run``, ``/test`` and ``auto_test`` use. Approval follows
``command_approval``: ``ask`` (each run; "always" remembers the program for the
session), ``sandbox-auto`` (sandboxed runs need none) or ``deny``; "always" is keyed by
the program as the sandbox resolves it (:meth:`CommandTools.program_key`). A
command that wants the network always asks the user, and is never remembered. Without a working sandbox, commands are
refused with the install command, unless ``allow_unsandboxed`` is set: then each
one asks, every time, and says it will run unsandboxed.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Literal, Sequence

from core.config import Settings
from core.sandbox import Limits, Preflight, RunResult, SandboxStatus, run_command
from core.sandbox.runner import OutputCallback
from core.tools.live_output import emit
from core.secrets import redact
from core.tools.testcmd import TestCommandError, resolve_test_command, tests_not_run
from core.trust import root_problem
from core.types import TaskResult, error_result, ok_result

log = logging.getLogger(__name__)

RESULT_TAIL_CHARS = 12_000
"""Characters of a command's output kept in the tool result (the end: where test summaries are)."""

RUN_COMMAND_SPEC: dict[str, Any] = {
    "name": "runCommand",
    "description": (
        "Run a program in a sandbox and get its exit status and output (streamed live to the user). "
        "`command` is the argv as a list, e.g. [\"pytest\", \"-q\", \"tests/test_calc.py\"]: there is no shell, "
        "so no pipes, redirection or globbing. The sandbox sees the project (writable) and the system's "
        "tools read-only; nothing else of the machine, no secrets, no network unless `network` is true "
        "(which the user must approve). The project's .venv/bin and node_modules/.bin come first on PATH."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "command": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Program and arguments."},
            "timeout_s": {"type": "number", "description": "Seconds before the command is killed (capped by the configuration)."},
            "network": {"type": "boolean", "description": "Give the command network access (asks the user). Default false."},
        },
        "required": ["command"],
    },
}

RUN_TESTS_SPEC: dict[str, Any] = {
    "name": "runTests",
    "description": (
        "Run the project's test suite (its configured or detected test command: pytest, npm test, cargo test, "
        "go test ./..., make test) in the sandbox and get the result; output streams live to the user. "
        "`args` are appended to the command, e.g. [\"tests/test_calc.py\"] to run one file."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"args": {"type": "array", "items": {"type": "string"}, "description": "Extra arguments."}},
    },
}


@dataclass(frozen=True)
class Verdict:
    """What approval a command needs: ``allow`` (automatic), ``deny`` (with a reason) or ``ask``."""

    action: Literal["allow", "deny", "ask"]
    reason: str = ""
    session_key: str = ""
    """Under which key "always for this session" is remembered; empty: it never is."""
    project_key: str = ""
    """Under which key "always for the project" is remembered (it covers every ``session_key`` of the tool); empty: not offered."""
    detail: str = ""
    title: str = ""
    """The approval's title when the run is more than a sandboxed command (network, no sandbox)."""
    routine: bool = False
    """A sandboxed run without network: approval mode ``allow`` (``--yes``) runs it unasked (``core.approvals``)."""


class CommandTools:
    """Runs commands for the model and the user, in the sandbox the preflight found."""

    def __init__(self, settings: Settings, preflight: Preflight | None = None) -> None:
        self.settings = settings
        self.project_root = Path(settings.project_root).resolve()
        self.preflight = preflight or Preflight(self.project_root)

    # -- what runs where ---------------------------------------------------------
    async def status(self) -> SandboxStatus:
        return await self.preflight.wait()

    def read_only_paths(self) -> list[str]:
        from core.sandbox.bwrap import venv_prefixes

        extra = [p for p in self.settings.sandbox_paths.split(os.pathsep) if p.strip()]
        return [os.path.expanduser(p.strip()) for p in extra] + venv_prefixes(self.project_root)

    def test_command(self) -> tuple[list[str], str]:
        """The test argv and where it came from.

        Raises:
            TestCommandError: none configured and none detected.
        """
        return resolve_test_command(self.project_root, self.settings.test_command)

    async def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None = None,
        network: bool = False,
        on_output: OutputCallback | None = None,
    ) -> RunResult:
        """Run ``argv`` sandboxed (or unsandboxed when allowed and the sandbox is unavailable).

        Callers decide approval first; this only runs. Output batches go to
        ``on_output`` (default: the running tool call's live output).
        """
        if problem := root_problem(self.project_root):  # the sandbox would hold all of HOME
            return RunResult(status="error", argv=list(argv), sandboxed=False, error=problem)
        status = await self.status()
        if not status.available and not self.settings.allow_unsandboxed:
            return RunResult(status="error", argv=list(argv), sandboxed=False, error=status.problem)
        limit = self.settings.sandbox_timeout
        limits = Limits(
            timeout=min(timeout, limit) if timeout and timeout > 0 else limit,
            max_processes=self.settings.sandbox_max_processes,
            max_output=self.settings.sandbox_max_output,
        )
        secrets = self.settings.secrets()

        def forward(text: str, stream: str) -> Any:
            text = redact(text, secrets)
            return on_output(text, stream) if on_output is not None else emit(text, stream)

        log.info("running %s (%s)", shlex.join(argv), "sandboxed" if status.available else "UNSANDBOXED")
        result = await run_command(
            argv, project_root=self.project_root, bwrap=status.bwrap if status.available else None, limits=limits,
            network=network, read_only=self.read_only_paths(), on_output=forward,
            rlimit_nproc=status.process_limit == "rlimit",
        )
        # Up to sandbox_max_output bytes: scanned in a thread, not on the event loop.
        result.output = await asyncio.to_thread(redact, result.output, secrets)
        return result

    # -- approval ----------------------------------------------------------------
    async def verdict(self, argv: Sequence[str], network: bool, *, user: bool = False) -> Verdict:
        """The approval a run needs (``user``: the user typed it, so only the sandbox matters)."""
        if problem := root_problem(self.project_root):
            return Verdict("deny", problem)
        status = await self.status()
        shown = shlex.join(argv)
        where = "in the sandbox" + (" WITH NETWORK ACCESS" if network else " (no network)")
        if not status.available:
            if not self.settings.allow_unsandboxed:
                return Verdict("deny", f"{status.problem} Commands are not run without the sandbox.")
            return Verdict("ask", title="Run UNSANDBOXED, with your full access?", detail=f"{shown}\n\nThe sandbox is unavailable: this runs UNSANDBOXED, with your "
                           f"user's full access. ({status.problem})")
        if user and not network:
            return Verdict("allow")
        if self.settings.command_approval == "deny":
            return Verdict("deny", "running commands is denied by the configuration (command_approval=deny).")
        if network:
            return Verdict("ask", title="Run WITH NETWORK ACCESS?", detail=f"{shown}\n\nruns {where}.")
        if self.settings.command_approval == "sandbox-auto":
            return Verdict("allow")
        return Verdict("ask", session_key=self.program_key("runCommand", argv), detail=f"{shown}\n\nruns {where}.", routine=True)

    def program_key(self, tool: str, argv: Sequence[str]) -> str:
        """What "always for this session" remembers for ``argv``: the program as the sandbox will find it.

        The program is resolved on the sandbox's PATH (the project's ``.venv/bin`` and
        ``node_modules/.bin`` first). Outside the project the key is its path; inside, its
        path and a hash of its content, so a ``./pytest`` or ``.venv/bin/pytest`` the model
        plants (or rewrites) never rides on an earlier "always pytest". Empty (never
        remembered) when it cannot be resolved or read.
        """
        if not argv or not argv[0]:
            return ""
        from core.sandbox.bwrap import sandbox_path

        program = argv[0]
        if "/" in program:
            found = str(self.project_root / program) if not os.path.isabs(program) else program
        else:
            found = shutil.which(program, path=sandbox_path(self.project_root, self.read_only_paths())) or ""
        if not found:
            return ""
        resolved = Path(found).resolve()
        if not resolved.is_relative_to(self.project_root):
            return f"{tool}:{resolved}"
        try:
            digest = hashlib.sha256(resolved.read_bytes()).hexdigest()[:16]
        except OSError:
            return ""
        return f"{tool}:{resolved}@{digest}"

    # -- the tools -----------------------------------------------------------------
    def register(self, handler: Any) -> bool:
        """Register ``runCommand`` and ``runTests`` on the handler."""
        timeout = self.settings.sandbox_timeout + 10
        run_spec = {**RUN_COMMAND_SPEC, "approval_policy": self._policy_run, "timeout": timeout}
        tests_spec = {**RUN_TESTS_SPEC, "approval_policy": self._policy_tests, "timeout": timeout}
        return bool(handler.register_tool(run_spec, self.run_command_tool) and handler.register_tool(tests_spec, self.run_tests_tool))

    async def _policy_run(self, params: dict[str, Any]) -> Verdict:
        argv = params.get("command")
        if not _is_argv(argv):
            return Verdict("allow")  # the executor reports the mistake
        return await self.verdict(argv, bool(params.get("network")))

    async def _policy_tests(self, params: dict[str, Any]) -> Verdict:
        try:
            argv, _ = self.test_command()
        except TestCommandError:
            return Verdict("allow")  # the executor reports it
        verdict = await self.verdict(argv + list(params.get("args") or []), False)
        key = self.program_key("runTests", argv) if verdict.session_key else ""
        return Verdict(verdict.action, verdict.reason, key, verdict.detail)

    async def run_command_tool(self, params: dict[str, Any]) -> TaskResult:
        argv = params.get("command")
        if not _is_argv(argv):
            return error_result('`command` must be a non-empty list of strings, e.g. ["pytest", "-q"]: it is run '
                                "without a shell.")
        timeout = params.get("timeout_s")
        return describe(await self.run(argv, timeout=timeout if isinstance(timeout, (int, float)) else None,
                                       network=bool(params.get("network"))))

    async def run_tests_tool(self, params: dict[str, Any]) -> TaskResult:
        try:
            argv, source = self.test_command()
        except TestCommandError as exc:
            return error_result(str(exc))
        extra = params.get("args") or []
        if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
            return error_result("`args` must be a list of strings")
        result = describe(await self.run(argv + extra), tests=True)
        result["metadata"]["test_command_source"] = source
        return result


def _is_argv(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(a, str) for a in value) and bool(value[0])


def describe(result: RunResult, *, tests: bool = False) -> TaskResult:
    """A run as a tool result: what ran, how it ended, and the end of its output."""
    shown = shlex.join(result.argv)
    where = "sandboxed" if result.sandboxed else "UNSANDBOXED"
    metadata: dict[str, Any] = {
        "argv": result.argv, "returncode": result.returncode, "run_status": result.status, "sandboxed": result.sandboxed,
        "duration": round(result.duration, 3), "output_bytes": result.output_bytes, "pid": result.pid,
        "process_limit_hit": result.process_limit_hit,
    }
    if result.status == "error":
        return error_result(f"$ {shown}\nNot run: {result.error}", **metadata)
    output = result.output
    if len(output) > RESULT_TAIL_CHARS:
        output = f"[... {len(output) - RESULT_TAIL_CHARS:,} earlier characters not shown ...]\n" + output[-RESULT_TAIL_CHARS:]
    seconds = f"{result.duration:.1f} s"
    if result.status == "timeout":
        ending = f"Killed after {seconds}: it ran past its time limit. The whole process tree was stopped."
    elif result.status == "output_limit":
        ending = f"Stopped after {result.output_bytes:,} bytes of output (the limit); the process tree was killed."
    elif result.returncode == 0:
        ending = f"{'Tests passed' if tests else 'Exit status 0'} ({seconds})."
    elif tests and (why := tests_not_run(result.argv, result.returncode, result.output)):
        ending = f"Could not run the tests: {why} ({seconds})."
    else:
        code = result.returncode
        signal_note = f" (killed by signal {-code})" if code is not None and code < 0 else ""
        ending = f"{'Tests failed: exit' if tests else 'Exit'} status {code}{signal_note} ({seconds})."
    if result.process_limit_hit:
        ending += " A process could not be started: the sandbox's process limit was reached."
    text = f"$ {shown}   [{where}]\n{output.rstrip()}\n{ending}" if output.strip() else f"$ {shown}   [{where}]\n{ending}"
    return (ok_result if result.ok else error_result)(text, **metadata)


AfterEdit = Callable[[str, list[str], TaskResult], Awaitable[TaskResult]]
