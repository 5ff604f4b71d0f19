"""One MCP server connection, on the official ``mcp`` SDK (``ClientSession`` over stdio or streamable HTTP).

A server lives in one background task (:meth:`McpServer.start`) that holds the
SDK's context managers open: it spawns the process (or connects), initializes,
lists the tools, then waits until it is stopped or the process exits. Nothing
here blocks the caller: failures become the ``failed`` state with a last error.

The server's stderr is read through a pipe into our log (never the terminal), and
its last lines explain a failure. Its environment is its config's ``env``, a
minimal ``PATH`` and git's hardening (plus the few identity variables the SDK
always passes: HOME, LOGNAME, SHELL, TERM, USER), never our keys.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from core.mcp.config import McpServerConfig

log = logging.getLogger(__name__)

MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin"
STDERR_LINES_LOGGED = 2000
"""Lines of one server's stderr written to the log; the rest is drained unlogged."""
STOP_TIMEOUT = 5.0


class ServerState(enum.StrEnum):
    """Where a server is in its life."""

    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    STOPPED = "stopped"
    DISABLED = "disabled"


class McpCallError(RuntimeError):
    """A tool call could not be made or did not finish (not a tool's own error result)."""


def server_environment(config: McpServerConfig, command_path: str) -> dict[str, str]:
    """The variables a stdio server gets from us: a minimal PATH, git's hardening, then its config's env.

    The hardening pins the programs the repository's own git config names (filters,
    diff drivers...) for the repository the server works in: its ``cwd``, or the
    ``--repository`` argument of a git server.
    """
    from core.gitutil import harden_git_environment

    directory = os.path.dirname(command_path)
    path = MINIMAL_PATH if not directory or directory in MINIMAL_PATH.split(":") else f"{directory}:{MINIMAL_PATH}"
    env: dict[str, str] = {"PATH": path}
    repository = _repository(config)
    harden_git_environment(env, cwd=repository)
    env.update(config.env)
    return env


def _repository(config: McpServerConfig) -> Path | None:
    args = list(config.args)
    for flag in ("--repository", "-r"):
        if flag in args[:-1]:
            candidate = Path(args[args.index(flag) + 1]).expanduser()
            if candidate.is_dir():
                return candidate
    return Path(config.cwd) if config.cwd and os.path.isdir(config.cwd) else None


def resolve_command(command: str) -> str:
    """``command`` as an absolute path, looked up on the user's PATH.

    Raises:
        McpCallError: the program does not exist.
    """
    if os.sep in command:
        if os.access(command, os.X_OK):
            return os.path.abspath(command)
        raise McpCallError(f"command {command!r} does not exist or is not executable")
    found = shutil.which(command)
    if found is None:
        raise McpCallError(f"command {command!r} was not found on PATH")
    return found


class McpServer:
    """A configured server, its state, its tools and its session while it runs."""

    def __init__(self, config: McpServerConfig, *, on_change: Callable[["McpServer"], None] | None = None) -> None:
        self.config = config
        self.name = config.name
        self.state = ServerState.STARTING if config.enabled else ServerState.DISABLED
        self.tools: list[Any] = []
        """The server's ``types.Tool`` list, as it last reported it."""
        self.last_error = ""
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=12)
        self.server_info = ""
        self.started_at = 0.0
        self.ready_after = 0.0
        """Seconds from spawn to tools listed."""
        self.session: Any = None
        self._on_change = on_change
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._gone = asyncio.Event()
        """Set when the session ends (stopped, failed, exited): pending calls stop waiting."""
        self._stderr_task: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> None:
        """Start connecting in the background (on the running event loop)."""
        if not self.config.enabled:
            self.state = ServerState.DISABLED
            self._settled.set()
            return
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._gone = asyncio.Event()
        self.state = ServerState.STARTING
        self.last_error = ""
        self.stderr_tail.clear()
        self._task = asyncio.create_task(self._run(), name=f"mcp:{self.name}")
        self._changed()

    async def wait_settled(self) -> None:
        """Wait until the server is ready or has failed (or was never started)."""
        if self._task is None and self.state is not ServerState.STARTING:
            return
        await self._settled.wait()

    async def stop(self) -> None:
        """Close the session and end the process (stdin closed, then SIGTERM, then SIGKILL)."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stop.set()
        if self.state is ServerState.STARTING:
            task.cancel()
        try:
            async with asyncio.timeout(STOP_TIMEOUT):
                await asyncio.shield(task)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
        except Exception:  # noqa: BLE001 - stopping is best effort; the task logs its own failure
            log.exception("MCP server %s did not stop cleanly", self.name)
        if self.state in (ServerState.READY, ServerState.STARTING):
            self.state = ServerState.STOPPED
        self.session = None
        self._changed()

    async def restart(self) -> None:
        """Stop (if running) and start again."""
        await self.stop()
        self.start()

    def _changed(self) -> None:
        if self._on_change is not None:
            try:
                self._on_change(self)
            except Exception:  # noqa: BLE001 - a listener must never break the connection
                log.exception("MCP state listener failed")

    async def _run(self) -> None:
        self.started_at = time.monotonic()
        try:
            async with contextlib.AsyncExitStack() as stack:
                session = await self._connect(stack)
                import anyio

                with anyio.fail_after(self.config.startup_timeout):
                    init = await session.initialize()
                    tools = await _list_all_tools(session)
                info = init.serverInfo
                self.server_info = f"{info.name} {info.version}".strip()
                self.tools, self.session = tools, session
                self.ready_after = time.monotonic() - self.started_at
                self.state = ServerState.READY
                log.info("MCP server %s ready in %.2fs: %d tools (%s)", self.name, self.ready_after, len(tools), self.server_info)
                self._settled.set()
                self._changed()
                await self._wait_for_stop_or_exit()
                if not self._stop.is_set():
                    self._fail("the server process exited")
                self._gone.set()
        except TimeoutError:
            self._fail(f"did not start within {self.config.startup_timeout:g} seconds")
        except asyncio.CancelledError:
            if not self._stop.is_set():
                raise
        except McpCallError as exc:
            self._fail(str(exc))
        except BaseException as exc:  # noqa: BLE001 - ExceptionGroups from the SDK's task groups
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            message = _describe(exc)
            if self.state is ServerState.STARTING and isinstance(_leaf(exc), TimeoutError):
                message = f"did not start within {self.config.startup_timeout:g} seconds"
            elif self.state is ServerState.STARTING and _is_disconnect(exc):
                message = "the server exited during start-up"
            self._fail(message)
        finally:
            self.session = None
            self._gone.set()
            if self._stderr_task is not None:
                self._stderr_task.cancel()
                self._stderr_task = None
            self._settled.set()
            self._changed()

    async def _connect(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp import ClientSession, types

        if self.config.url:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await stack.enter_async_context(create_mcp_http_client(headers=dict(self.config.headers) or None))
            read, write, _ = await stack.enter_async_context(streamable_http_client(self.config.url, http_client=http))
        else:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            command = resolve_command(self.config.command)
            cwd = self.config.cwd or None
            if cwd is not None and not os.path.isdir(cwd):
                raise McpCallError(f"cwd {cwd!r} is not a directory")
            env = await asyncio.to_thread(server_environment, self.config, command)  # lists the repository's git config
            params = StdioServerParameters(command=command, args=list(self.config.args), env=env, cwd=cwd)
            read_fd, write_fd = os.pipe()
            errlog = os.fdopen(write_fd, "w")
            try:
                read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            except BaseException:
                os.close(read_fd)
                raise
            finally:
                errlog.close()  # the child holds its own copy: EOF on the pipe means it exited
            self._stderr_task = asyncio.create_task(self._drain_stderr(read_fd), name=f"mcp-stderr:{self.name}")
        version = _our_version()
        return await stack.enter_async_context(
            ClientSession(read, write, client_info=types.Implementation(name="assistant-tui", version=version))
        )

    async def _drain_stderr(self, fd: int) -> None:
        """Log the server's stderr line by line until it closes (the process exited)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 16)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb"))
        logged = 0
        try:
            while True:
                try:
                    raw = await reader.readline()
                except ValueError:  # a line over the limit: take what is there
                    raw = await reader.read(1 << 16)
                if not raw:
                    return
                line = raw.decode("utf-8", errors="replace").rstrip()[:500]
                if not line:
                    continue
                self.stderr_tail.append(line)
                if logged < STDERR_LINES_LOGGED:
                    logged += 1
                    log.info("mcp %s stderr: %s", self.name, line)
        finally:
            transport.close()

    async def _wait_for_stop_or_exit(self) -> None:
        waiters: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._stop.wait())]
        if self._stderr_task is not None:
            waiters.append(self._stderr_task)  # type: ignore[arg-type]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiters[0].cancel()

    def _fail(self, message: str) -> None:
        tail = " | ".join(list(self.stderr_tail)[-3:])
        self.last_error = f"{message} (stderr: {tail})" if tail else message
        self.state = ServerState.FAILED
        log.warning("MCP server %s failed: %s", self.name, self.last_error)

    # -- calls -------------------------------------------------------------
    async def call_tool(self, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
        """Call ``tool`` and return the SDK's ``CallToolResult``.

        On a timeout or a cancellation (Esc) the server is sent the protocol's
        ``notifications/cancelled`` for the request, so it can stop the work.

        Raises:
            McpCallError: the server is not running, the connection broke, or the call timed out.
        """
        session = self.session
        if session is None or self.state is not ServerState.READY:
            detail = f": {self.last_error}" if self.last_error else ""
            raise McpCallError(f"MCP server {self.name} is {self.state.value}{detail}. /mcp shows it and can restart it.")
        from mcp.shared.exceptions import McpError

        # The 1.x SDK neither sends the cancellation nor exposes the id of a call
        # (python-sdk issue #230): the id is the session's next one, read right before the call.
        request_id = getattr(session, "_request_id", None)
        call = asyncio.ensure_future(session.call_tool(tool, arguments))
        gone = asyncio.ensure_future(self._gone.wait())  # the process exited: the SDK may never answer
        try:
            done, _ = await asyncio.wait({call, gone}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            call.cancel()
            self._send_cancel(session, request_id, "cancelled by the user")
            raise
        finally:
            gone.cancel()
        if call not in done:
            call.cancel()
            if gone in done:
                raise McpCallError(f"MCP server {self.name} stopped during the call: {self.last_error or 'it exited'}")
            self._send_cancel(session, request_id, f"timed out after {timeout:g} seconds")
            raise McpCallError(f"{tool} on MCP server {self.name} timed out after {timeout:g} seconds; the server was asked to cancel it")
        try:
            return call.result()
        except McpError as exc:
            raise McpCallError(f"MCP server {self.name}: {exc.error.message}") from None
        except Exception as exc:  # noqa: BLE001 - transport failures become the tool's error result
            raise McpCallError(f"MCP server {self.name}: {_describe(exc)}") from None

    def _send_cancel(self, session: Any, request_id: Any, reason: str) -> None:
        """Send ``notifications/cancelled`` without waiting (the caller is being cancelled)."""
        if request_id is None:
            log.warning("cannot cancel a call on MCP server %s: the SDK gave no request id", self.name)
            return
        from mcp import types

        notification = types.ClientNotification(
            types.CancelledNotification(params=types.CancelledNotificationParams(requestId=request_id, reason=reason))
        )

        async def send() -> None:
            try:
                async with asyncio.timeout(5):
                    await session.send_notification(notification)
                log.info("MCP server %s: sent notifications/cancelled for request %s (%s)", self.name, request_id, reason)
            except Exception:  # noqa: BLE001 - the server may be gone
                log.warning("could not send the cancellation to MCP server %s", self.name, exc_info=True)

        task = asyncio.get_running_loop().create_task(send())
        _BACKGROUND.add(task)
        task.add_done_callback(_BACKGROUND.discard)


_BACKGROUND: set[asyncio.Task[None]] = set()


async def _list_all_tools(session: Any) -> list[Any]:
    """Every tool, following pagination cursors (bounded)."""
    tools: list[Any] = []
    cursor = None
    for _ in range(100):
        page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
        tools.extend(page.tools)
        cursor = page.nextCursor
        if not cursor:
            break
    return tools


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups of the SDK's task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _is_disconnect(exc: BaseException) -> bool:
    """True when ``exc`` (or the first of a group) says the other side went away."""
    exc = _leaf(exc)
    import anyio

    if isinstance(exc, (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, BrokenPipeError, ConnectionResetError)):
        return True
    return getattr(getattr(exc, "error", None), "message", None) == "Connection closed"


def _describe(exc: BaseException) -> str:
    """A readable one-line cause, unwrapping the SDK's exception groups."""
    exc = _leaf(exc)
    error = getattr(exc, "error", None)
    message = getattr(error, "message", None) or str(exc) or type(exc).__name__
    if isinstance(exc, OSError) or error is not None or message == type(exc).__name__:
        return message
    return f"{type(exc).__name__}: {message}"


def _our_version() -> str:
    try:
        from importlib.metadata import version

        return version("assistant-tui")
    except Exception:  # noqa: BLE001
        return "0"
