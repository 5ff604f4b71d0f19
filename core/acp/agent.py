"""AssistantAgent: our engine behind the Agent Client Protocol.

Each ACP session is one :class:`core.app.Application` for the client's working
directory (the same handler, tools and session recording as the TUI and ``-p``),
recorded under our own session id, so ``session/load`` and ``assistant-tui
--continue`` both find it. Approvals go to the client with
``session/request_permission``; ``session/cancel`` cancels the running turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as _dt
import logging
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.helpers import update_available_commands
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AvailableCommand,
    AvailableCommandInput,
    EmbeddedResourceContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    TextContentBlock,
    TextResourceContents,
    UnstructuredCommandInput,
)

from core import events as ev
from core.acp.updates import TurnMapper, history_updates, permission_tool_call
from core.types import ApprovalRequest, Decision, TaskResult, error_result

log = logging.getLogger(__name__)

VERSION = "0.1.0"

PERMISSION_OPTIONS = [
    PermissionOption(option_id=Decision.ALLOW_ONCE.value, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=Decision.ALLOW_SESSION.value, name="Allow always (this session)", kind="allow_always"),
    PermissionOption(option_id=Decision.DENY.value, name="Reject", kind="reject_once"),
]

MODES = [
    SessionMode(id="ask", name="Ask", description="Ask before tool calls that change things (aider edits, commands outside the read-only list)"),
    SessionMode(id="allow", name="Allow all", description="Run every tool call without asking"),
    SessionMode(id="deny", name="Read-only", description="Deny every tool call that would change things"),
]
"""Session modes: our approval modes (``approval_mode``), switchable from the client."""

COMMANDS = [
    ("plan", "A step-by-step plan, shown as a checklist", "what to plan"),
    ("aider", "Have aider edit the code", "the change to make"),
    ("task", "Run a structured task directly (/task list shows them)", "type:subtype key=value ..."),
]

INTERACTIVE_REFUSED = (
    "aiderInteractive needs a terminal, and an ACP client does not give one to the agent. "
    "Use aiderAutomatic with a precise prompt instead."
)


async def _no_terminal(run: Any) -> TaskResult:
    """The interactive-aider runner over ACP: there is no terminal to hand over."""
    return error_result(INTERACTIVE_REFUSED, reason="no_terminal")


@dataclasses.dataclass
class AcpSession:
    """One ACP session: its Application and the turn in progress."""

    id: str
    application: Any
    task: asyncio.Task[PromptResponse] | None = None
    mapper: TurnMapper | None = None
    cancelled: bool = False
    mcp_settled: bool = False


class AssistantAgent:
    """The ACP ``Agent``: initialize, session/new, session/load, session/list, session/prompt, session/cancel.

    Args:
        overrides: settings from the command line (applied to every session's settings).
        application_factory: builds an Application from settings (tests and embedding).
    """

    def __init__(self, overrides: dict[str, Any] | None = None, application_factory: Any = None) -> None:
        self.overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
        self.application_factory = application_factory
        self.sessions: dict[str, AcpSession] = {}
        self.conn: Any = None
        self._background: set[asyncio.Task[Any]] = set()

    def on_connect(self, conn: Any) -> None:
        """Keep the client connection (session updates, permission requests)."""
        self.conn = conn

    # -- lifecycle ---------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **_: Any) -> InitializeResponse:
        """Agree on the protocol version and say what we support."""
        log.info("ACP initialize: client %s, protocol %s", getattr(client_info, "name", "?"), protocol_version)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="assistant-tui", title="assistant-tui", version=VERSION),
        )

    async def authenticate(self, method_id: str, **_: Any) -> None:
        """No authentication methods: providers are configured in the environment or config file."""
        raise RequestError.invalid_params({"message": "assistant-tui has no authentication methods; configure the provider in its config."})

    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> NewSessionResponse:
        """A new session of the project at ``cwd``, recorded like the TUI's, with the client's MCP servers."""
        application = await self._application(cwd)
        notices = await asyncio.to_thread(self._start, application, None)
        notices += self._start_mcp(application, mcp_servers)
        session = self._register(application)
        self._later(self._after_open(session, notices))
        return NewSessionResponse(session_id=session.id, modes=_modes(application))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **_: Any) -> LoadSessionResponse:
        """Reopen a saved session and replay its conversation as session updates."""
        live = self.sessions.get(session_id)
        if live is not None:
            if live.task is not None:
                raise RequestError.invalid_request({"message": "That session has a prompt running; cancel it first."})
            history = live.application.session_state.history
            await self._replay(live, history)
            self._later(self._send_commands(live))
            return LoadSessionResponse(modes=_modes(live.application))
        application = await self._application(cwd)
        notices = await asyncio.to_thread(self._start, application, session_id)
        notices += self._start_mcp(application, mcp_servers)
        session = self._register(application)
        await self._replay(session, application.session_state.history)
        self._later(self._after_open(session, notices))
        return LoadSessionResponse(modes=_modes(application))

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **_: Any) -> ListSessionsResponse:
        """The saved sessions of the project at ``cwd``, most recent first."""
        from core.sessions import SessionError, SessionStore

        if not cwd:
            return ListSessionsResponse(sessions=[])
        try:
            infos = await asyncio.to_thread(SessionStore().list, Path(cwd))
        except SessionError as exc:
            raise RequestError.internal_error({"message": str(exc)}) from None
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=info.id,
                    cwd=str(info.project_root),
                    title=(info.title or info.first_prompt or None),
                    updated_at=_dt.datetime.fromtimestamp(info.updated, tz=_dt.timezone.utc).isoformat(),
                )
                for info in infos
            ]
        )

    async def close(self) -> None:
        """Cancel running turns and close every session's transcript (the client went away)."""
        for session in list(self.sessions.values()):
            if session.task is not None and not session.task.done():
                session.cancelled = True
                session.task.cancel()
                await asyncio.gather(session.task, return_exceptions=True)
            try:
                await session.application.aclose()  # MCP servers stop, the transcript closes
            except Exception:  # noqa: BLE001 - the other sessions still get closed
                log.exception("closing session %s failed", session.id)
        self.sessions.clear()
        for task in list(self._background):
            task.cancel()

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        """Switch the session's approval mode (ask, allow, deny); it applies from the next tool call."""
        session = self._session(session_id)
        if mode_id not in {mode.id for mode in MODES}:
            raise RequestError.invalid_params({"message": f"unknown mode {mode_id!r}; the modes are ask, allow and deny"})
        session.application.session_state.set_approval_mode(mode_id)
        log.info("ACP session %s: approval mode %s", session_id, mode_id)
        return SetSessionModeResponse()

    # -- turns -------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        """Run one user turn; its events stream to the client as session updates."""
        session = self._session(session_id)
        if session.task is not None:
            raise RequestError.invalid_request({"message": "A prompt is already running in this session; cancel it or wait."})
        query = prompt_text(prompt, session.application.project_root)
        if not query.strip():
            raise RequestError.invalid_params({"message": "The prompt is empty."})
        session.cancelled = False
        task = session.task = asyncio.create_task(self._turn(session, query), name=f"acp-turn-{session_id}")
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not session.cancelled or (current is not None and current.cancelling()):
                raise
            for update in session.mapper.interrupted() if session.mapper else []:
                await self._send(session, update)
            log.info("ACP prompt cancelled by the client (session %s)", session_id)
            return PromptResponse(stop_reason="cancelled")
        finally:
            session.task = None
            session.mapper = None

    async def cancel(self, session_id: str, **_: Any) -> None:
        """``session/cancel``: stop the running turn (a pending permission request ends as cancelled)."""
        session = self.sessions.get(session_id)
        if session is None or session.task is None or session.task.done():
            return
        session.cancelled = True
        session.task.cancel()

    async def _turn(self, session: AcpSession, query: str) -> PromptResponse:
        application = session.application
        if query.lstrip().startswith("/task"):
            return await self._task_command(session, query.strip())
        settings = application.settings
        if not settings.provider_configured:
            from core.cli import provider_missing_message

            raise RequestError(-32603, provider_missing_message(settings), {"reason": "no_provider"})
        if not session.mcp_settled:  # the first prompt sees the MCP tools (each server is bounded by its startup timeout)
            await application.mcp.wait_started()
            session.mcp_settled = True
        state = application.session_state
        mapper = session.mapper = TurnMapper(application.project_root, lambda name: self._needs_approval(application, name))
        final: ev.TurnCompleted | ev.TurnFailed | None = None
        async with contextlib.aclosing(state.stream_query(query)) as events:
            async for event in events:
                for update in mapper.updates(event):
                    await self._send(session, update)
                if isinstance(event, (ev.TurnCompleted, ev.TurnFailed)):
                    final = event
        return await self._stop(session, final, mapper)

    async def _stop(self, session: AcpSession, final: ev.TurnCompleted | ev.TurnFailed | None, mapper: TurnMapper) -> PromptResponse:
        """The stop reason of a finished turn; failures that are not a limit are JSON-RPC errors."""
        if isinstance(final, ev.TurnCompleted):
            stop = (final.result.get("metadata") or {}).get("stop_reason") or mapper.last_stop_reason
            reason = stop if stop in ("max_tokens", "refusal") else "end_turn"
            return PromptResponse(stop_reason=reason)
        if final is None:
            raise RequestError(-32603, "The turn ended without a result.", {"reason": "no_result"})
        metadata = final.result.get("metadata") or {}
        limit = {"max_tokens": "max_tokens", "refusal": "refusal"}.get(final.reason)
        if final.reason == "resource_exhaustion":
            limit = {"tool_calls": "max_turn_requests", "turns": "max_turn_requests", "context_window": "max_tokens"}.get(str(metadata.get("resource")))
        if limit is None and mapper.last_stop_reason in ("max_tokens", "refusal"):
            limit = mapper.last_stop_reason
        if limit is None:
            raise RequestError(-32603, final.message, {"reason": final.reason})
        await self._send(session, update_agent_message_text(f"\n\n{final.message}"))
        return PromptResponse(stop_reason=limit)

    async def _task_command(self, session: AcpSession, text: str) -> PromptResponse:
        from core.tasks import TaskCommandError

        try:
            result = await session.application.session_state.run_task(text)
        except TaskCommandError as exc:
            content = str(exc)
        else:
            content = str(result.get("content") or result.get("status") or "")
        await self._send(session, update_agent_message_text(content or "(no output)"))
        return PromptResponse(stop_reason="end_turn")

    # -- approvals -----------------------------------------------------------------
    def _approver(self, session_id: str, project_root: Path) -> Any:
        async def approve(request: ApprovalRequest) -> Decision:
            tool_call = permission_tool_call(request.tool_call, request.detail, request.reason, project_root)
            try:
                options = PERMISSION_OPTIONS if request.offers_session else [o for o in PERMISSION_OPTIONS if o.kind != "allow_always"]
                response = await self.conn.request_permission(session_id=session_id, tool_call=tool_call, options=options)
            except (ConnectionError, RequestError) as exc:
                log.warning("permission request failed (%s); denying %s", exc, request.tool_call.name)
                return Decision.DENY
            outcome = response.outcome
            if isinstance(outcome, AllowedOutcome):
                try:
                    return Decision(outcome.option_id)
                except ValueError:
                    log.warning("unknown permission option %r; denying", outcome.option_id)
            return Decision.DENY

        return approve

    @staticmethod
    def _needs_approval(application: Any, name: str) -> bool:
        spec = application.handler.registered_tools.get(name) or {}
        state = application.session_state
        return bool(spec.get("requires_approval")) and state.approval_mode == "ask" and name not in state.approvals

    # -- helpers ---------------------------------------------------------------------
    async def _application(self, cwd: str) -> Any:
        from core.config import ConfigError, load_settings

        root = Path(cwd or "")
        if not cwd or not root.is_absolute():
            raise RequestError.invalid_params({"message": f"cwd must be an absolute path, got {cwd!r}"})
        if not root.is_dir():
            raise RequestError.invalid_params({"message": f"the directory {cwd} does not exist"})
        try:
            settings = load_settings({**self.overrides, "project_root": root})
        except ConfigError as exc:
            raise RequestError.invalid_params({"message": f"configuration error: {exc}"}) from None
        from core.logging_setup import add_secrets

        add_secrets(settings.secrets())  # the project's .env may hold keys the start-up settings did not
        factory = self.application_factory
        if factory is None:
            from core.app import Application

            factory = lambda s: Application(s, run_interactive=_no_terminal)  # noqa: E731
        return await asyncio.to_thread(factory, settings)

    @staticmethod
    def _start(application: Any, resume: str | None) -> list[str]:
        from core.sessions import SessionError, SessionLocked

        try:
            return application.session_state.start(resume=resume)
        except SessionLocked as exc:
            raise RequestError.invalid_request({"message": str(exc)}) from None
        except SessionError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None

    @staticmethod
    def _start_mcp(application: Any, mcp_servers: Any) -> list[str]:
        """Add the client's MCP servers to the project's and start them all in the background.

        The session answers at once; MCP tools join as their servers are ready.
        """
        from core.acp.mcp import client_servers

        configs, problems = client_servers(mcp_servers)
        for config in configs:
            application.mcp.add(config)
        application.start_mcp()
        return problems

    def _register(self, application: Any) -> AcpSession:
        session = AcpSession(id=application.session_state.id, application=application)
        application.session_state.set_approver(self._approver(session.id, application.project_root))
        self.sessions[session.id] = session
        log.info("ACP session %s in %s", session.id, application.project_root)
        return session

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"unknown session {session_id!r}: call session/new or session/load first"})
        return session

    async def _replay(self, session: AcpSession, history: list[dict[str, Any]]) -> None:
        state = session.application.session_state
        loaded = state.take_loaded()  # the transcript read back (its trace: approvals, statuses), once
        trace = loaded.trace if loaded is not None else ()
        for update in history_updates(history, session.application.project_root, state.incidents, trace):
            await self._send(session, update)

    async def _after_open(self, session: AcpSession, notices: list[str]) -> None:
        await self._send_commands(session)
        for notice in notices:
            await self._send(session, update_agent_message_text(f"{notice}\n"))

    async def _send_commands(self, session: AcpSession) -> None:
        commands = [
            AvailableCommand(name=name, description=description, input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)))
            for name, description, hint in COMMANDS
        ]
        await self._send(session, update_available_commands(commands))

    async def _send(self, session: AcpSession, update: Any) -> None:
        try:
            await self.conn.session_update(session_id=session.id, update=update)
        except ConnectionError:
            log.info("session update dropped: the client is gone")

    def _later(self, coroutine: Any) -> None:
        """Run after the current response is sent (updates about a session the client knows)."""

        async def run() -> None:
            await asyncio.sleep(0)
            await coroutine

        task = asyncio.create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _modes(application: Any) -> SessionModeState:
    return SessionModeState(current_mode_id=application.settings.approval_mode, available_modes=MODES)


def prompt_text(blocks: list[Any], project_root: Path) -> str:
    """The user's query from ACP content blocks.

    Text is kept as typed; a linked file becomes its project-relative path (the model
    reads it with readFile); embedded text resources are included as ``<file>`` blocks.
    Images and audio are not advertised, so they are refused.
    """
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(_link_text(block.uri, project_root))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            name = _link_text(resource.uri, project_root)
            if isinstance(resource, TextResourceContents):
                parts.append(f'\n<file path="{name}">\n{resource.text}\n</file>\n')
            else:
                parts.append(f"{name} (binary content not included)")
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise RequestError.invalid_params({"message": f"{kind} content is not supported; send text or files."})
    return " ".join(part for part in parts if part) if len(parts) > 1 else "".join(parts)


def _link_text(uri: str, project_root: Path) -> str:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return uri
    path = Path(unquote(parsed.path))
    try:
        return str(path.resolve().relative_to(project_root.resolve()))
    except (ValueError, OSError):
        return str(path)


__all__ = ["AssistantAgent", "PERMISSION_OPTIONS", "prompt_text"]
