"""AssistantAgent: our engine behind the Agent Client Protocol.

Each ACP session is one :class:`core.app.Application` for the client's working
directory (the same handler, tools and session recording as the TUI and ``-p``),
recorded under our own session id, so ``session/load`` and ``assistant-tui
--continue`` both find it. Approvals go to the client with
``session/request_permission``; ``session/cancel`` cancels the running turn and
withdraws a permission request still open (``$/cancel_request``). Where the client
offers its buffers and terminal, tools use them (:mod:`core.acp.client_io`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as _dt
import json
import logging
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, plan_entry, update_agent_message_text, update_plan
from acp.helpers import update_available_commands, update_current_mode
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AuthenticateResponse,
    AvailableCommand,
    AvailableCommandInput,
    CloseSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionForkCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    UnstructuredCommandInput,
)

from core import events as ev
from core.acp import session_config as config
from core.acp.client_io import ClientIO
from core.acp.plan_stream import PlanStream
from core.acp.prompt import prompt_images, prompt_text
from core.acp.replay import fenced, save_mode, saved_mode
from core.acp.updates import TurnMapper, history_updates, permission_tool_call
from core.images import takes_images
from core.types import ApprovalRequest, Decision, TaskResult, error_result

log = logging.getLogger(__name__)

VERSION = "0.1.0"

PERMISSION_OPTIONS = [
    PermissionOption(option_id=Decision.ALLOW_ONCE.value, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=Decision.ALLOW_SESSION.value, name="Allow always (this session)", kind="allow_always"),
    PermissionOption(option_id=Decision.DENY.value, name="Reject", kind="reject_once"),
]

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


def failure(code: int, text: str, reason: str) -> RequestError:
    """A JSON-RPC error whose human text is in ``message`` and in ``data.details`` (Toad shows the latter)."""
    return RequestError(code, text, {"reason": reason, "details": text})


@dataclasses.dataclass
class AcpSession:
    """One ACP session: its Application and the turn in progress."""

    id: str
    application: Any
    io: ClientIO | None = None
    task: asyncio.Task[PromptResponse] | None = None
    mapper: TurnMapper | None = None
    cancelled: bool = False
    mcp_settled: bool = False
    titled: bool = False


class AssistantAgent:
    """The ACP ``Agent``: initialize, authenticate, session/new, load, resume, fork, close, list, prompt, cancel, modes and options.

    Args:
        overrides: settings from the command line (applied to every session's settings).
        application_factory: builds an Application from settings (tests and embedding).
        transport: the stdio transport (to withdraw a permission request on cancel).
    """

    def __init__(self, overrides: dict[str, Any] | None = None, application_factory: Any = None, transport: Any = None) -> None:
        self.overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
        self.application_factory = application_factory
        self.transport = transport
        self.sessions: dict[str, AcpSession] = {}
        self.conn: Any = None
        self.client_capabilities: Any = None
        self._background: set[asyncio.Task[Any]] = set()

    def on_connect(self, conn: Any) -> None:
        """Keep the client connection (session updates, permission requests)."""
        self.conn = conn

    @property
    def newer(self) -> bool:
        """The client takes the newer update kinds (usage, session info, config options)."""
        return config.takes_newer_updates(self.client_capabilities)

    # -- lifecycle ---------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **_: Any) -> InitializeResponse:
        """Agree on the protocol version (ours, the only one we speak) and say what we support."""
        log.info("ACP initialize: client %s, protocol %s", getattr(client_info, "name", "?"), protocol_version)
        self.client_capabilities = client_capabilities
        image = await asyncio.to_thread(self._takes_images)
        sessions = SessionCapabilities(list=SessionListCapabilities(), resume=SessionResumeCapabilities(), close=SessionCloseCapabilities(),
                                       fork=SessionForkCapabilities())
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=image, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=sessions,
            ),
            auth_methods=config.AUTH_METHODS,
            agent_info=Implementation(name="assistant-tui", title="assistant-tui", version=VERSION),
        )

    def _takes_images(self) -> bool:
        """The configured model takes images (:func:`core.images.takes_images`); False when the settings do not load."""
        from core.config import ConfigError, load_settings

        try:
            settings = load_settings(self.overrides)
        except ConfigError:
            return False
        return takes_images(settings.provider, settings.model_name)

    async def authenticate(self, method_id: str, **_: Any) -> AuthenticateResponse:
        """An ``env_var`` method: the client started us with the key; check it arrived and use that provider."""
        from core.config import ConfigError, load_settings

        if problem := config.auth_problem(method_id):
            raise failure(-32602, problem, "auth_missing")
        try:
            configured = (await asyncio.to_thread(load_settings, self.overrides)).provider_configured
        except ConfigError:
            configured = False
        if not configured:
            self.overrides["provider"] = config.auth_provider(method_id)
        return AuthenticateResponse()

    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> NewSessionResponse:
        """A new session of the project at ``cwd``, recorded like the TUI's, with the client's MCP servers."""
        session, notices = await self._open(cwd, None, mcp_servers)
        self._later(self._after_open(session, notices))
        return NewSessionResponse(session_id=session.id, modes=self._modes(session), config_options=await self._options(session))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **_: Any) -> LoadSessionResponse:
        """Reopen a saved session and replay its conversation as session updates; its mode comes back too."""
        live = self.sessions.get(session_id)
        if live is not None:
            if live.task is not None:
                raise failure(-32600, "That session has a prompt running; cancel it first.", "busy")
            await self._replay(live, live.application.session_state.history)
            self._later(self._send_commands(live))
            return LoadSessionResponse(modes=self._modes(live), config_options=await self._options(live))
        session, notices = await self._open(cwd, session_id, mcp_servers)
        await self._replay(session, session.application.session_state.history)
        self._later(self._after_open(session, notices))
        return LoadSessionResponse(modes=self._modes(session), config_options=await self._options(session))

    async def resume_session(self, session_id: str, cwd: str, mcp_servers: Any = None, **_: Any) -> ResumeSessionResponse:
        """Reopen a saved session without replaying it (the client still shows it)."""
        session = self.sessions.get(session_id)
        if session is None:
            session, notices = await self._open(cwd, session_id, mcp_servers)
            session.application.session_state.take_loaded()  # nothing is replayed
            self._later(self._after_open(session, notices))
        return ResumeSessionResponse(modes=self._modes(session), config_options=await self._options(session))

    async def fork_session(self, session_id: str, cwd: str, mcp_servers: Any = None, **_: Any) -> ForkSessionResponse:
        """A new session holding a copy of ``session_id``'s conversation, to continue separately."""
        from core.sessions import SessionError, SessionStore

        live = self.sessions.get(session_id)
        if live is not None and live.task is not None:
            raise failure(-32600, "That session has a prompt running; fork it when the prompt has finished.", "busy")
        store = SessionStore()  # the transcript is written as it goes: reading it, the copy has every message
        try:
            source = await asyncio.to_thread(store.open, session_id, Path(cwd))
            copy = await asyncio.to_thread(store.fork, source, Path(cwd))
        except SessionError as exc:
            raise failure(-32602, str(exc), "session_not_found") from None
        session, notices = await self._open(cwd, copy.id, mcp_servers)
        mode = saved_mode(source.path)
        if mode:
            session.application.session_state.set_approval_mode(mode)
            save_mode(copy.path, mode)
        session.application.session_state.take_loaded()
        self._later(self._after_open(session, notices))
        return ForkSessionResponse(session_id=session.id, modes=self._modes(session), config_options=await self._options(session))

    async def close_session(self, session_id: str, **_: Any) -> CloseSessionResponse:
        """End a session: its turn is cancelled, its MCP servers stop, its transcript closes."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await self._stop_session(session)
        return CloseSessionResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **_: Any) -> ListSessionsResponse:
        """The saved sessions of the project at ``cwd`` (every project's without one), most recent first."""
        from core.sessions import SessionError, SessionStore

        store = SessionStore()
        try:
            infos = await asyncio.to_thread(store.list, Path(cwd)) if cwd else await asyncio.to_thread(_every_session, store)
        except SessionError as exc:
            raise failure(-32603, str(exc), "session_store") from None
        infos.sort(key=lambda info: (info.updated, info.id), reverse=True)
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
            await self._stop_session(session)
        self.sessions.clear()
        for task in list(self._background):
            task.cancel()

    async def _stop_session(self, session: AcpSession) -> None:
        if session.task is not None and not session.task.done():
            session.cancelled = True
            session.task.cancel()
            await asyncio.gather(session.task, return_exceptions=True)
        try:
            await session.application.aclose()  # MCP servers stop, the transcript closes
        except Exception:  # noqa: BLE001 - the other sessions still get closed
            log.exception("closing session %s failed", session.id)

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        """Switch the session's approval mode (ask, allow, deny); it applies from the next tool call."""
        session = self._session(session_id)
        self._set_mode(session, mode_id)
        if self.newer:
            self._later(self._send(session, config.config_update(await config.config_options(session.application))))
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool, **_: Any) -> SetSessionConfigOptionResponse:
        """Set the session's ``mode`` or ``model`` option; the answer carries every option's value."""
        from core.compaction.commands import ModelSwitchError

        session = self._session(session_id)
        if config_id == "mode":
            self._set_mode(session, str(value))
            self._later(self._send(session, update_current_mode(str(value))))
        elif config_id == "model":
            if session.task is not None:
                raise failure(-32600, "A prompt is running; switch models when it has finished.", "busy")
            try:
                await session.application.session_state.switch_model(str(value))
            except ModelSwitchError as exc:
                raise failure(-32602, str(exc), "unknown_model") from None
        else:
            raise failure(-32602, f"unknown config option {config_id!r}; the options are mode and model", "unknown_option")
        return SetSessionConfigOptionResponse(config_options=await config.config_options(session.application))

    def _set_mode(self, session: AcpSession, mode_id: str) -> None:
        if mode_id not in {mode.id for mode in config.MODES}:
            raise failure(-32602, f"unknown mode {mode_id!r}; the modes are ask, allow and deny", "unknown_mode")
        state = session.application.session_state
        state.set_approval_mode(mode_id)
        save_mode(state.stored.path if state.stored is not None else None, mode_id)
        log.info("ACP session %s: approval mode %s", session.id, mode_id)

    # -- turns -------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        """Run one user turn; its events stream to the client as session updates."""
        session = self._session(session_id)
        if session.task is not None:
            raise failure(-32600, "A prompt is already running in this session; cancel it or wait.", "busy")
        settings = session.application.settings
        handler = session.application.session_state.handler  # its model may have been switched since start
        provider, model = (handler.config.provider, handler.model_name) if handler is not None else (settings.provider, settings.model_name)
        images = prompt_images(prompt, f"{provider}:{model}", takes_images(provider, model))
        query = prompt_text(prompt, session.application.project_root)
        if not query.strip():
            raise failure(-32602, "The prompt is empty.", "empty_prompt")
        session.cancelled = False
        if self.newer and not session.titled and not session.application.session_state.history:
            session.titled = True
            await self._send(session, config.title_update(config.title_of(query)))
        task = session.task = asyncio.create_task(self._turn(session, query, images), name=f"acp-turn-{session_id}")
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

    async def _turn(self, session: AcpSession, query: str, images: list[dict[str, str]]) -> PromptResponse:
        application = session.application
        if query.lstrip().startswith("/task"):
            return await self._task_command(session, query.strip())
        settings = application.settings
        if not settings.provider_configured:
            from core.config import provider_missing_message

            raise RequestError(-32000, provider_missing_message(settings), {"reason": "no_provider", "details": provider_missing_message(settings)})
        if not session.mcp_settled:  # the first prompt sees the MCP tools (each server is bounded by its startup timeout)
            await application.mcp.wait_started()
            session.mcp_settled = True
        state = application.session_state
        mapper = session.mapper = TurnMapper(application.project_root, lambda name: self._gated(application, name))
        plan = PlanStream()
        final: ev.TurnCompleted | ev.TurnFailed | None = None
        async with contextlib.aclosing(state.stream_query(query, images)) as events:
            async for event in events:
                for update in self._updates(session, mapper, plan, event):
                    await self._send(session, update)
                if isinstance(event, (ev.TurnCompleted, ev.TurnFailed)):
                    final = event
        return await self._stop(session, final, mapper)

    def _updates(self, session: AcpSession, mapper: TurnMapper, plan: PlanStream, event: Any) -> list[Any]:
        """One event's updates: the mapper's, with a plan taken out of the text and the newer kinds where taken."""
        if isinstance(event, ev.MetricsUpdated):
            usage = config.usage_update(event.metrics) if self.newer else None
            return [usage] if usage else []
        updates = mapper.updates(event)
        if isinstance(event, (ev.TextDelta, ev.AssistantMessage)):
            texts = [u.content.text for u in updates if u.session_update == "agent_message_chunk"]
            updates = [u for u in updates if u.session_update != "agent_message_chunk"]
            shown, entries = plan.feed("".join(texts))
            if isinstance(event, ev.AssistantMessage):
                shown += plan.flush()
            updates = ([update_agent_message_text(shown)] if shown else []) + updates
            if entries:
                updates.append(update_plan(plan_entry(step, status=status) for step, status in entries))
        elif plan.steps:  # the plan went out as it streamed
            updates = [u for u in updates if u.session_update != "plan"]
        if isinstance(event, ev.ToolCallFinished) and session.io is not None and (terminal := session.io.terminal_content(event.call.id)):
            updates = [u.model_copy(update={"content": terminal + list(u.content or [])}) if getattr(u, "tool_call_id", "") == event.call.id else u
                       for u in updates]
        return updates

    async def _stop(self, session: AcpSession, final: ev.TurnCompleted | ev.TurnFailed | None, mapper: TurnMapper) -> PromptResponse:
        """The stop reason of a finished turn; failures that are not a limit are JSON-RPC errors."""
        if isinstance(final, ev.TurnCompleted):
            stop = (final.result.get("metadata") or {}).get("stop_reason") or mapper.last_stop_reason
            reason = stop if stop in ("max_tokens", "refusal") else "end_turn"
            return PromptResponse(stop_reason=reason)
        if final is None:
            raise failure(-32603, "The turn ended without a result.", "no_result")
        metadata = final.result.get("metadata") or {}
        limit = {"max_tokens": "max_tokens", "refusal": "refusal"}.get(final.reason)
        if final.reason == "resource_exhaustion":
            limit = {"tool_calls": "max_turn_requests", "turns": "max_turn_requests", "context_window": "max_tokens"}.get(str(metadata.get("resource")))
        if limit is None and mapper.last_stop_reason in ("max_tokens", "refusal"):
            limit = mapper.last_stop_reason
        if limit is None:
            raise failure(-32603, final.message, final.reason)
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
        await self._send(session, update_agent_message_text(fenced(content or "(no output)")))
        return PromptResponse(stop_reason="end_turn")

    # -- approvals -----------------------------------------------------------------
    def _approver(self, session_id: str, project_root: Path) -> Any:
        async def approve(request: ApprovalRequest) -> Decision:
            tool_call = permission_tool_call(request.tool_call, request.detail, request.reason, project_root)
            options = PERMISSION_OPTIONS if request.offers_session else [o for o in PERMISSION_OPTIONS if o.kind != "allow_always"]
            try:
                response = await self.conn.request_permission(session_id=session_id, tool_call=tool_call, options=options)
            except (ConnectionError, RequestError) as exc:
                log.warning("permission request failed (%s); denying %s", exc, request.tool_call.name)
                return Decision.DENY
            except asyncio.CancelledError:
                await asyncio.shield(self._withdraw(session_id))
                raise
            outcome = response.outcome
            if isinstance(outcome, AllowedOutcome):
                try:
                    return Decision(outcome.option_id)
                except ValueError:
                    log.warning("unknown permission option %r; denying", outcome.option_id)
            return Decision.DENY

        return approve

    async def _withdraw(self, session_id: str) -> None:
        """Tell the client its permission box for ``session_id`` is answered: cancelled (``$/cancel_request``)."""
        take = getattr(self.transport, "take_pending", None)
        for request_id in take("session/request_permission", session_id) if take else []:
            with contextlib.suppress(ConnectionError, OSError):
                await self.transport.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request_id}})

    @staticmethod
    def _gated(application: Any, name: str) -> bool:
        """Whether ``name``'s calls are decided before they run (they start ``pending``)."""
        spec = application.handler.registered_tools.get(name) or {}
        return bool(spec.get("requires_approval") or callable(spec.get("approval_policy")) or application.session_state.approval_mode == "deny")

    # -- helpers ---------------------------------------------------------------------
    async def _open(self, cwd: str, resume: str | None, mcp_servers: Any) -> tuple[AcpSession, list[str]]:
        application = await self._application(cwd)
        notices = await asyncio.to_thread(self._start, application, resume)
        notices += self._start_mcp(application, mcp_servers)
        state = application.session_state
        mode = saved_mode(state.stored.path) if resume and state.stored is not None else None
        if mode in {m.id for m in config.MODES}:
            state.set_approval_mode(mode)
        return self._register(application), notices

    async def _application(self, cwd: str) -> Any:
        from core.config import ConfigError, load_settings

        root = Path(cwd or "")
        if not cwd or not root.is_absolute():
            raise failure(-32602, f"cwd must be an absolute path, got {cwd!r}", "bad_cwd")
        if not root.is_dir():
            raise failure(-32602, f"the directory {cwd} does not exist", "bad_cwd")
        try:
            settings = load_settings({**self.overrides, "project_root": root})
        except ConfigError as exc:
            raise failure(-32602, f"configuration error: {exc}", "config") from None
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
            raise failure(-32600, str(exc), "session_locked") from None
        except SessionError as exc:
            raise failure(-32602, str(exc), "session_not_found") from None

    @staticmethod
    def _start_mcp(application: Any, mcp_servers: Any) -> list[str]:
        """Add the client's MCP servers to the project's and start them all in the background.

        The session answers at once; MCP tools join as their servers are ready.
        """
        from core.acp.mcp import client_servers

        configs, problems = client_servers(mcp_servers)
        for server in configs:
            application.mcp.add(server)
        application.start_mcp()
        return problems

    def _register(self, application: Any) -> AcpSession:
        session = AcpSession(id=application.session_state.id, application=application)
        application.session_state.set_approver(self._approver(session.id, application.project_root))
        session.io = ClientIO(self.conn, session.id, application, self.client_capabilities, self.overrides)
        session.io.install()
        session.titled = bool(application.session_state.history)
        self.sessions[session.id] = session
        log.info("ACP session %s in %s", session.id, application.project_root)
        return session

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise failure(-32602, f"unknown session {session_id!r}: call session/new or session/load first", "unknown_session")
        return session

    def _modes(self, session: AcpSession) -> Any:
        return config.mode_state(session.application.session_state.approval_mode)

    async def _options(self, session: AcpSession) -> list[Any] | None:
        return await config.config_options(session.application) if self.newer else None

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


def _every_session(store: Any) -> list[Any]:
    """Every project's saved sessions (``session/list`` without a ``cwd``)."""
    infos: list[Any] = []
    try:
        directories = [entry for entry in store.root.iterdir() if entry.is_dir()]
    except FileNotFoundError:
        return []
    for directory in directories:
        try:
            project = json.loads((directory / "project.json").read_text(encoding="utf-8")).get("project_root")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(project, str) and project and store.project_dir(Path(project)) == directory:
            infos += store.list(Path(project))
    return infos


__all__ = ["AssistantAgent", "PERMISSION_OPTIONS", "failure", "prompt_text"]
