"""BaseHandler: what every handler shares (SPEC.md section 3).

Tool registry, conversation history, the hierarchical system prompt, the data
context, relevant-file lookup and resource metrics. The multi-step tool loop
lives in :mod:`core.handlers.passthrough`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

from core.approvals import Approvals
from core.callables import call_sync_or_async
from core.config import Settings
from core.file_context import FileContext
from core.history import History
from core.tokens import estimate_request_tokens
from core.memory.policy import FilePolicy, Refusal
from core.memory.types import DataContext
from core.providers.base import ProviderAdapter, ToolSpec
from core.types import Approver, Message, TaskResult, error_result, ok_result

log = logging.getLogger(__name__)

DEFAULT_BASE_SYSTEM_PROMPT = """\
You are assistant-tui, a coding assistant working in the user's project from their terminal.
You can call tools to find and read files and to have aider edit code. Work step by step:
call a tool when you need information or an action, read its result, then continue.
When you are done, answer the user directly and concisely."""

ToolExecutor = Callable[[dict[str, Any]], Any]


class ToolNotFound(LookupError):
    """The model asked for a tool that is not registered."""


class FileAccess:
    """Reads picked project files for the model, under the project's one file policy.

    Args:
        project_root: The project directory.
        policy: The project's :class:`FilePolicy` (the memory system's, so the
            index is shared); a private one when None.
    """

    def __init__(self, project_root: Path, policy: FilePolicy | None = None) -> None:
        self.project_root = project_root
        self.policy = policy or FilePolicy(project_root)

    def load(self, path: str | Path) -> tuple[str | None, Refusal | None]:
        """``(text, None)``, or ``(None, refusal)`` saying why the file is not sent (blocking)."""
        return self.policy.read_text(path, chosen=True)

    def read(self, path: str | Path) -> str | None:
        """The file's text, or None when the policy refuses it (missing, binary, too large, a secret, a directory)."""
        return self.load(path)[0]


class BaseHandler:
    """Shared state and services of handlers."""

    def __init__(
        self,
        task_system: Any,
        memory_system: Any,
        model_provider: ProviderAdapter | None = None,
        config: Settings | None = None,
    ) -> None:
        self._config = config or Settings()
        self._task_system = task_system
        self._memory_system = memory_system
        if model_provider is None:
            from core.providers import create_provider

            model_provider = create_provider(self._config)
        self._model_provider: ProviderAdapter = model_provider
        self._project_root = Path(self._config.project_root).resolve()
        policy = getattr(memory_system, "policy", None)
        self._file_access = FileAccess(self._project_root, policy if isinstance(policy, FilePolicy) and policy.root == self._project_root else None)
        self._debug_mode = False
        self._registered_tools: dict[str, ToolSpec] = {}
        self._tool_executors: dict[str, ToolExecutor] = {}
        self._history = History()
        self._data_context: DataContext | None = None
        self._file_context = FileContext(self._project_root, self._file_access.policy)
        self._approvals = Approvals(self._config.approval_mode)
        self._base_system_prompt = self._config.base_system_prompt or DEFAULT_BASE_SYSTEM_PROMPT
        # metrics
        self._turn_count = 0
        self._total_tool_calls = 0
        self._tool_calls_this_turn = 0
        self._last_estimated_tokens = 0
        self._turn_started_at: float | None = None
        self._session_started_at = time.monotonic()

    def __setattr__(self, name: str, value: Any) -> None:
        """Only the handler's own (private) state is assigned, by its methods: a public name is refused."""
        if not name.startswith("_"):
            raise AttributeError(
                f"{type(self).__name__}.{name} cannot be assigned: the handler's state changes through its methods "
                "(a constructor argument such as pacing=, or use_model, use_checkpoints, register_tool ...)"
            )
        object.__setattr__(self, name, value)

    # -- what others read (read-only: the handler's methods change them) ----------------
    @property
    def config(self) -> Settings:
        """The settings (read-only; ``use_model`` replaces them with a copy naming another model)."""
        return self._config

    @property
    def task_system(self) -> Any:
        return self._task_system

    @property
    def memory_system(self) -> Any:
        return self._memory_system

    @property
    def model_provider(self) -> ProviderAdapter:
        """The provider the next request goes to (``use_model`` changes it)."""
        return self._model_provider

    @property
    def project_root(self) -> Path:
        return self._project_root

    @property
    def registered_tools(self) -> Mapping[str, ToolSpec]:
        """Tool name -> spec (read-only; ``register_tool`` and ``unregister_tool`` change it)."""
        return MappingProxyType(self._registered_tools)

    @property
    def tool_executors(self) -> Mapping[str, ToolExecutor]:
        """Tool name -> executor (read-only; ``register_tool`` and ``unregister_tool`` change it)."""
        return MappingProxyType(self._tool_executors)

    @property
    def file_context(self) -> FileContext:
        """The conversation's picked, read-only and suggested files (commanded through ``core.session.Session``)."""
        return self._file_context

    @property
    def base_system_prompt(self) -> str:
        return self._base_system_prompt

    @property
    def turn_count(self) -> int:
        """Model responses so far (SPEC 4's turns)."""
        return self._turn_count

    @property
    def total_tool_calls(self) -> int:
        return self._total_tool_calls

    @property
    def tool_calls_this_turn(self) -> int:
        return self._tool_calls_this_turn

    @property
    def history(self) -> History:
        """The conversation the model sees (read it; the handler's methods change it)."""
        return self._history

    @property
    def conversation_history(self) -> list[Message]:
        """SPEC 3's name: the messages with role, content and timestamp (a copy; the handler's methods change them)."""
        return self._history.messages()

    @property
    def approvals(self) -> Approvals:
        """The approval mode, who answers and the "always" answers (change them through its methods)."""
        return self._approvals

    @property
    def approve(self) -> Approver | None:
        """Who answers approvals (set it with ``approvals.set_approver``)."""
        return self._approvals.approver

    @property
    def pinned_files(self) -> list[str]:
        """The picked files, absolute paths in order (a copy: change them through ``core.session.Session``)."""
        return self._file_context.picked

    @property
    def read_only_files(self) -> list[str]:
        """Picked files the user marked read-only: aider may read them, not edit them."""
        return self._file_context.read_only

    # -- debug -------------------------------------------------------------
    def log_debug(self, message: str) -> None:
        if self._debug_mode:
            log.info("[debug] %s", message)
        else:
            log.debug(message)

    def get_provider_identifier(self) -> str:
        getter = getattr(self._model_provider, "get_provider_identifier", None)
        if getter:
            return getter()
        return f"{getattr(self._model_provider, 'name', 'unknown')}:{getattr(self._model_provider, 'model', '')}"

    # -- tools -------------------------------------------------------------
    def register_tool(self, tool_spec: ToolSpec, executor: ToolExecutor) -> bool:
        """Register a tool; False (and nothing changed) when the spec has no name."""
        name = tool_spec.get("name") if isinstance(tool_spec, dict) else None
        if not name or not callable(executor):
            log.warning("refusing to register a tool without a name or executor: %r", tool_spec)
            return False
        self._registered_tools[name] = tool_spec
        self._tool_executors[name] = executor
        self.log_debug(f"registered tool {name}")
        return True

    def unregister_tool(self, name: str) -> None:
        """Forget the tool ``name`` (an MCP server's tool that is gone); nothing when it is not registered."""
        self._registered_tools.pop(name, None)
        self._tool_executors.pop(name, None)

    def get_tool_specs(self) -> list[ToolSpec]:
        return list(self._registered_tools.values())

    async def _execute_tool(self, name: str, params: dict[str, Any], *, call_id: str = "") -> TaskResult:
        """Run a registered tool; exceptions become error TaskResults, never propagate.

        A tool whose spec sets ``takes_call_id`` is also given ``tool_call_id=call_id``
        (the call it answers, e.g. for its own approval request): passed, never shared.

        Raises:
            ToolNotFound: no tool of that name is registered.
        """
        executor = self._tool_executors.get(name)
        if executor is None:
            raise ToolNotFound(name)
        spec = self._registered_tools.get(name, {})
        timeout = spec.get("timeout") or self._config.tool_timeout
        extra = {"tool_call_id": call_id} if spec.get("takes_call_id") else {}
        try:
            # asyncio.timeout, not wait_for: wait_for (3.11) can swallow a cancellation racing the result.
            async with asyncio.timeout(timeout):
                value = await call_sync_or_async(executor, params, **extra)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            log.warning("tool %s timed out after %ss", name, timeout)
            return error_result(f"Error executing tool {name}: timed out after {timeout:g} seconds", error="timeout")
        except Exception as exc:  # noqa: BLE001 - reported to the model, never raised
            log.exception("tool %s failed", name)
            return error_result(f"Error executing tool {name}: {exc}", error=str(exc), error_type=type(exc).__name__)
        return _as_task_result(value)

    # -- conversation --------------------------------------------------------
    def add_message(self, role: str, content: str, **extra: Any) -> Message:
        """Add a message to the conversation (``Session.add_note`` adds its notes this way); returns it."""
        return self._history.append(role, content, **extra)

    def reset_conversation(self) -> None:
        """Forget the conversation and the data context."""
        self._history.clear()
        self.clear_data_context()
        self._turn_count = 0
        self._tool_calls_this_turn = 0

    # -- system prompt -------------------------------------------------------
    def _build_system_prompt(self, template_specific_instructions: str | None = None) -> str:
        """Base prompt, then template or mode instructions, then the data context."""
        parts = [self._base_system_prompt.strip()]
        if template_specific_instructions:
            parts.append(template_specific_instructions.strip())
        if self._data_context and self._data_context.items:
            files = "\n".join(
                f'<file path="{item.source_path}">\n{item.content}\n</file>' for item in self._data_context.items
            )
            parts.append("Files in context:\n" + files)
            if self._data_context.summary:
                parts.append(self._data_context.summary)
        return "\n\n".join(p for p in parts if p)

    # -- data context --------------------------------------------------------
    def clear_data_context(self) -> None:
        self._data_context = None

    def _get_relevant_files(self, query: str) -> list[str]:
        """Paths the memory system finds relevant to the query (empty on any failure)."""
        if not self._memory_system or not query:
            return []
        try:
            result = self._memory_system.get_relevant_context_for({"taskText": query, "inheritedContext": ""})
        except Exception:  # noqa: BLE001 - relevance is a hint, never fatal
            log.exception("relevance lookup failed")
            return []
        matches = getattr(result, "matches", None) or (result.get("matches") if isinstance(result, dict) else []) or []
        return [m[0] if isinstance(m, (tuple, list)) else str(m) for m in matches]

    # -- metrics -------------------------------------------------------------
    def estimate_tokens(self, system_prompt: str, tools: Sequence[ToolSpec] | None = None) -> int:
        return estimate_request_tokens(system_prompt, self._history, tools if tools is not None else self.get_tool_specs())

    def get_resource_metrics(self) -> dict[str, Any]:
        """Resource use so far (SPEC 4).

        ``turns`` keeps SPEC 4's meaning, model responses (also ``model_responses``);
        ``user_turns`` is the number of the current user turn (:mod:`core.turns`), the "turn" the UI and docs speak of.
        """
        elapsed = time.monotonic() - self._turn_started_at if self._turn_started_at else 0.0
        window = self._config.context_window
        return {
            "turns": self._turn_count,
            "model_responses": self._turn_count,
            "user_turns": self._history.current_turn,
            "max_turns": self._config.max_turns,
            "tool_calls_this_turn": self._tool_calls_this_turn,
            "max_tool_calls": self._config.max_tool_calls,
            "total_tool_calls": self._total_tool_calls,
            "estimated_tokens": self._last_estimated_tokens,
            "context_window": window,
            "context_used": round(self._last_estimated_tokens / window, 4) if window else 0.0,
            "elapsed": round(elapsed, 3),
            "provider": self.get_provider_identifier(),
        }


def _as_task_result(value: Any) -> TaskResult:
    """Wrap whatever an executor returned into a TaskResult."""
    if isinstance(value, dict) and "status" in value:
        result = dict(value)
        result.setdefault("content", "")
        result.setdefault("metadata", {})
        if not isinstance(result["content"], str):
            result["content"] = json.dumps(result["content"], default=str)
        return result  # type: ignore[return-value]
    if isinstance(value, str):
        return ok_result(value)
    if value is None:
        return ok_result("")
    return ok_result(json.dumps(value, default=str))
