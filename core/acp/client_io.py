"""Files and commands through the ACP client, when it offers them (``fs/*``, ``terminal/*``).

An editor that offers ``fs.readTextFile`` has the user's unsaved buffers: ``readFile``
then returns the buffer's text, after the same guards as a read from disk (the path
inside the project, the file policy: secrets, ignored and binary files), which run
first on the file as it is on disk. One that offers ``fs.writeTextFile`` gets each file
an edit changed (``editFile``, aider) through it, so the edit lands in its buffer and
its review of the agent's changes; a file outside the project or protected from aider
is never sent, and an edit of a file with unsaved changes in the editor is refused
before it runs (it would be made to the saved text and overwrite the buffer).

One that offers ``terminal`` runs ``runCommand`` and ``runTests`` in its own terminal,
so the user watches them there. What the client starts is always our own launcher
(``python -m core.acp.sandboxed SPEC``), never the model's command line: the argv
travels in a private file, and the launcher runs it exactly as ``CommandTools.run``
does here (in the sandbox, under its limits). Approval is unchanged: the tool's own
policy decides before the executor runs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from acp import RequestError, tool_terminal_ref, update_tool_call
from acp.schema import EnvVariable

from core.sandbox import RunResult
from core.sandbox.protect import Moved
from core.tools.aider_guard import protected_reason
from core.tools.files import MAX_READ_CHARS, numbered_line
from core.tools.paths_guard import PathRefused, resolve_in_root
from core.secrets import is_secret_path, redact
from core.callables import call_sync_or_async
from core.types import TaskResult, error_result, is_error, ok_result

log = logging.getLogger(__name__)

LAUNCHER = "core.acp.sandboxed"
EDIT_TOOLS = ("editFile", "aiderAutomatic", "aiderInteractive")


def client_offers(capabilities: Any) -> tuple[bool, bool, bool]:
    """(read files, write files, terminal) as the client's ``initialize`` capabilities say."""
    fs = getattr(capabilities, "fs", None)
    return bool(getattr(fs, "read_text_file", False)), bool(getattr(fs, "write_text_file", False)), bool(getattr(capabilities, "terminal", False))


def buffer_lines(text: str, start: int | None, end: int | None, limit: int = MAX_READ_CHARS) -> tuple[str, int, int, bool]:
    """A buffer's lines as ``readFile`` shows them: numbered, from ``start`` to ``end``, ending on a whole line within ``limit``."""
    out: list[str] = []
    size = 0
    first = last = 0
    budget = max(limit - 200, 1)  # room for the continuation hint
    for number, raw in enumerate(text.splitlines(keepends=True), start=1):
        if number < (start or 1) or (end is not None and number > end):
            continue
        line = numbered_line(number, raw)
        if size + len(line) + bool(out) > budget:
            return ("\n".join(out), first, last, True) if out else (line[:budget], number, number, True)
        out.append(line)
        size += len(line) + 1
        first, last = first or number, number
    return "\n".join(out), first, last, False


class ClientIO:
    """One session's route to the client's buffers and terminal.

    Args:
        conn: the connection to the client (``read_text_file``, ``create_terminal``...).
        session_id: the ACP session.
        application: the session's Application (project root, settings, tools).
        capabilities: the client's capabilities from ``initialize``.
        overrides: the agent's settings from its command line (the launcher applies them too).
    """

    def __init__(self, conn: Any, session_id: str, application: Any, capabilities: Any, overrides: dict[str, Any]) -> None:
        self.conn = conn
        self.session_id = session_id
        self.application = application
        self.root = application.project_root
        self.reads, self.writes, self.terminal = client_offers(capabilities)
        self.overrides = overrides
        self.terminals: dict[str, str] = {}
        """Tool call id -> the client terminal it ran in (its final update shows that terminal)."""

    def install(self) -> None:
        """Route the session's tools through the client where it offers to take them."""
        handler = self.application.handler
        wrappers = {"readFile": self.reads and self._read, "runCommand": self.terminal and self._run_command,
                    "runTests": self.terminal and self._run_tests}
        for name in EDIT_TOOLS:
            wrappers[name] = self.writes and self._edit
        for name, wrapper in wrappers.items():
            spec = handler.registered_tools.get(name)
            if wrapper and spec is not None:
                original = handler.tool_executors[name]
                handler.register_tool({**spec, "takes_call_id": True}, _bound(wrapper, original, bool(spec.get("takes_call_id"))))

    # -- files ---------------------------------------------------------------------
    async def _read(self, original: Any, params: dict[str, Any], tool_call_id: str = "", **extra: Any) -> TaskResult:
        result = await call_sync_or_async(original, params, **extra)  # every guard, on the file as it is on disk
        meta = dict(result.get("metadata") or {})
        if is_error(result) or not meta.get("path"):
            return result
        try:
            response = await self.conn.read_text_file(session_id=self.session_id, path=meta["path"])
        except (RequestError, ConnectionError) as exc:
            log.info("the client could not read %s (%s); the file on disk was read", meta["path"], exc)
            return result
        start, end = params.get("start_line"), params.get("end_line")
        limit = self.application.settings.max_tool_result_chars or MAX_READ_CHARS
        text, first, last, cut = buffer_lines(response.content, start if isinstance(start, int) else None, end if isinstance(end, int) else None, limit)
        shown = os.path.relpath(meta["path"], self.root)
        meta.update(start_line=first, end_line=last, truncated=cut, size=len(response.content.encode("utf-8", "surrogatepass")), source="client")
        meta.pop("total_lines", None)
        meta.pop("continue_line", None)
        if not text:
            return ok_result(f"{shown} {'has no line ' + str(start) if start else 'is empty'}.", **meta)
        if start is None and end is None and not cut:
            meta["total_lines"] = last
        if cut:
            meta["continue_line"] = last + 1
            text += f"\n[read cut at {limit:,} characters after line {last}; continue with start_line={last + 1}]"
        return ok_result(text, **meta)

    async def _edit(self, original: Any, params: dict[str, Any], tool_call_id: str = "", **extra: Any) -> TaskResult:
        named = params.get("path") if isinstance(params.get("path"), str) else params.get("file_context")
        for raw in [named] if isinstance(named, str) else [p for p in named or [] if isinstance(p, str)]:
            if problem := await self._unsaved(raw):
                return error_result(problem, reason="unsaved_in_editor")
        result = await call_sync_or_async(original, params, **extra)
        meta = result.get("metadata") or {}
        edited = list(meta.get("edited_files") or []) + ([meta["path"]] if isinstance(meta.get("path"), str) and not is_error(result) else [])
        sent = [path for path in edited if isinstance(path, str) and await self._send_file(path)]
        if sent:
            result = {**result, "metadata": {**(result.get("metadata") or {}), "sent_to_client": sent}}
        return result

    async def _unsaved(self, raw: str) -> str | None:
        """Why an edit of ``raw`` would lose the user's unsaved changes in the editor, or None."""
        if not self.reads:
            return None
        try:
            path = resolve_in_root(raw, self.root)
            disk = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (PathRefused, OSError, UnicodeDecodeError):
            return None  # the tool itself refuses or creates it
        try:
            buffer = (await self.conn.read_text_file(session_id=self.session_id, path=str(path))).content
        except (RequestError, ConnectionError):
            return None
        if buffer == disk:
            return None
        shown = os.path.relpath(path, self.root)
        return (f"{shown} has unsaved changes in the editor, and the edit would be made to the saved file: nothing was "
                "changed. Ask the user to save it (readFile shows the unsaved text), then make the edit again.")

    async def _send_file(self, raw: str) -> bool:
        """Hand an edited file's new text to the client's buffer (only inside the project, never a protected file)."""
        try:
            path = resolve_in_root(raw, self.root)
        except PathRefused as exc:
            log.warning("not sending %s to the client: %s", raw, exc)
            return False
        if reason := (protected_reason(path, self.root) or is_secret_path(path)):
            log.warning("not sending %s to the client: %s", raw, reason)
            return False
        try:
            text = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False  # deleted, or not text: the client sees the disk
        try:
            await self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text)
        except (RequestError, ConnectionError) as exc:
            log.warning("the client did not take the edit of %s: %s", raw, exc)
            return False
        return True

    # -- commands ------------------------------------------------------------------
    async def _run_command(self, original: Any, params: dict[str, Any], tool_call_id: str = "", **extra: Any) -> TaskResult:
        from core.tools.commands import describe

        argv = params.get("command")
        if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv) and argv[0]):
            return await call_sync_or_async(original, params, **extra)  # it reports the mistake
        timeout = params.get("timeout_s")
        return describe(await self.run_in_terminal(argv, tool_call_id, timeout=timeout if isinstance(timeout, (int, float)) else None,
                                                   network=bool(params.get("network"))))

    async def _run_tests(self, original: Any, params: dict[str, Any], tool_call_id: str = "", **extra: Any) -> TaskResult:
        from core.tools.commands import describe
        from core.tools.testcmd import TestCommandError

        extra_args = params.get("args") or []
        try:
            argv, source = self.application.commands.test_command()
        except TestCommandError:
            return await call_sync_or_async(original, params, **extra)
        if not isinstance(extra_args, list) or not all(isinstance(a, str) for a in extra_args):
            return await call_sync_or_async(original, params, **extra)
        result = describe(await self.run_in_terminal(argv + extra_args, tool_call_id), tests=True)
        result["metadata"]["test_command_source"] = source
        return result

    async def run_in_terminal(self, argv: list[str], call_id: str, *, timeout: float | None = None, network: bool = False) -> RunResult:
        """Run ``argv`` through the launcher in a client terminal; the result as ``CommandTools.run`` gives it."""
        settings = self.application.settings
        folder = Path(tempfile.mkdtemp(prefix="assistant-tui-run-"))
        spec, outcome = folder / "run.json", folder / "result.json"
        spec.write_text(json.dumps({"argv": argv, "timeout": timeout, "network": network, "project_root": str(self.root),
                                    "overrides": _jsonable(self.overrides), "result": str(outcome)}), encoding="utf-8")
        env = [EnvVariable(name="PYTHONPATH", value=os.environ["PYTHONPATH"])] if os.environ.get("PYTHONPATH") else []
        terminal_id = ""
        try:
            created = await self.conn.create_terminal(session_id=self.session_id, command=sys.executable, args=["-m", LAUNCHER, str(spec)],
                                                      cwd=str(self.root), env=env, output_byte_limit=settings.sandbox_max_output)
            terminal_id = created.terminal_id
            self.terminals[call_id] = terminal_id
            await self.conn.session_update(session_id=self.session_id, update=update_tool_call(call_id, status="in_progress", content=[tool_terminal_ref(terminal_id)]))
            try:
                async with asyncio.timeout(settings.sandbox_timeout + 5):  # the launcher enforces the real limit
                    exit_status = await self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal_id)
            except (TimeoutError, asyncio.CancelledError):
                await self._kill(terminal_id)
                raise
            output = await self.conn.terminal_output(session_id=self.session_id, terminal_id=terminal_id)
            return await asyncio.to_thread(_result, outcome, argv, exit_status, output.output, settings.secrets())
        except TimeoutError:
            return RunResult(status="timeout", argv=list(argv), error="the client's terminal did not finish")
        except (RequestError, ConnectionError) as exc:
            return RunResult(status="error", argv=list(argv), sandboxed=False, error=f"the client's terminal failed: {exc}")
        finally:
            if terminal_id:
                await self._release(terminal_id)
            shutil.rmtree(folder, ignore_errors=True)

    async def _kill(self, terminal_id: str) -> None:
        try:
            await asyncio.shield(self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal_id))
        except (RequestError, ConnectionError) as exc:
            log.info("could not kill terminal %s: %s", terminal_id, exc)

    async def _release(self, terminal_id: str) -> None:
        try:
            await asyncio.shield(self.conn.release_terminal(session_id=self.session_id, terminal_id=terminal_id))
        except (RequestError, ConnectionError) as exc:
            log.info("could not release terminal %s: %s", terminal_id, exc)

    def terminal_content(self, call_id: str) -> list[Any]:
        """The terminal a finished call ran in, to keep showing it in the call's final update."""
        terminal_id = self.terminals.pop(call_id, "")
        return [tool_terminal_ref(terminal_id)] if terminal_id else []


def _bound(wrapper: Any, original: Any, passes_call_id: bool) -> Any:
    async def executor(params: dict[str, Any], tool_call_id: str = "") -> TaskResult:
        extra = {"tool_call_id": tool_call_id} if passes_call_id else {}
        return await wrapper(original, params, tool_call_id, **extra)

    return executor


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if isinstance(value, (str, int, float, bool))}


def _result(outcome: Path, argv: list[str], exit_status: Any, output: str, secrets: list[str]) -> RunResult:
    """The launcher's account of the run; the terminal's own when the launcher wrote none (it was killed)."""
    try:
        data = json.loads(outcome.read_text(encoding="utf-8"))
        fields = {f.name for f in dataclasses.fields(RunResult)}
        result = RunResult(**{key: value for key, value in data.items() if key in fields})
        result.moved = [Moved(**moved) for moved in data.get("moved") or []]
    except (OSError, ValueError, TypeError):
        code = getattr(exit_status, "exit_code", None)
        result = RunResult(status="exited" if code is not None else "error", returncode=code, output=output, argv=list(argv),
                           error="" if code is not None else f"stopped by signal {getattr(exit_status, 'signal', None) or '?'}")
    result.output = redact(result.output, secrets)
    return result


__all__ = ["ClientIO", "buffer_lines", "client_offers"]
