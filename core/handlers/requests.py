"""What the handler sends: one fixed system prompt, and per-turn material in the user message.

Mixed into :class:`core.handlers.passthrough.PassthroughHandler`. The provider
caches the request prefix (tools, system prompt, conversation), so the system
prompt is built once and never carries anything that changes per turn; the
picked files, suggestions, time and mode instructions go into the turn's user
message (:mod:`core.turn_context`).
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any, Callable, Sequence

from core.compaction.compactor import Compactor
from core.handlers import rereads
from core.memory.policy import estimate_file_tokens
from core.plan import PLAN_INSTRUCTIONS
from core.tools.paths_guard import PathRefused, resolve_in_root
from core.turn_context import ConversationFiles, content_digest, turn_parts
from core.types import TaskResult, ToolCall, is_error, ok_result
from core.usage import ContextMeter

PROJECT_INSTRUCTIONS_FILE = "AGENTS.md"
PROJECT_INSTRUCTIONS_LIMIT = 20_000
"""Characters of the project's instructions file put into the system prompt."""


def current_time() -> str:
    """The local time to the minute, with its zone, e.g. ``2025-03-14 09:15 CET``."""
    return datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")


class RequestMixin:
    """System prompt and per-turn parts of a handler (needs BaseHandler's state and the handler's ``Spending``)."""

    _base_system_prompt: str
    _data_context: Any
    _history: Any
    _spending: Any
    pinned_files: list[str]
    _file_access: Any
    _project_root: Any
    _model_provider: Any

    def _init_requests(self, instructions: str, wall_clock: Callable[[], str] = current_time) -> None:
        self._handler_instructions = instructions
        self._wall_clock = wall_clock
        """The time each user message is stamped with (tests and benchmarks fix it)."""
        self._system_prompt: tuple[str, Any, str] | None = None
        """(base prompt, data context, the prompt built from them)."""
        self._conversation_files = ConversationFiles(caching=bool(getattr(self._model_provider, "prompt_cache", True)), find_read=self._find_read)
        self._compactor = Compactor(self)
        """The model's window, compaction, and the whole conversation behind the compacted view (issue 27)."""

    @property
    def compactor(self) -> Compactor:
        """The model's window, compaction, and the whole conversation behind the compacted view (issue 27)."""
        return self._compactor

    def restore_conversation(self, messages: list[Any], usage: list[dict[str, Any]] | None = None, compactions: Sequence[tuple[int, dict[str, Any]]] = ()) -> None:
        """Continue a saved conversation: its history (as compacted), which files it holds, and its usage totals."""
        self._history.restore(self._compactor.restore(messages, compactions))
        self._conversation_files.rebuild(self._history)
        self._spending.restore_usage(usage or [])

    def replace_view(self, messages: Sequence[Any]) -> None:
        """The model's view of the conversation becomes ``messages`` (compaction): the files it holds are found again,
        and the last reported prompt no longer counts for the context figure."""
        self._history.replace_for_compaction(messages)
        self._conversation_files.rebuild(self._history)
        self._spending.forget_reported_prompt()

    def rewind_to(self, turn: int) -> int | None:
        """Cut the conversation before user turn ``turn`` (``/rewind``); where it was cut, or None when the view lacks that turn."""
        index = self._history.rewind_to(turn)
        if index is not None:
            self._conversation_files.rebuild(self._history)
        return index

    def reset_conversation(self) -> None:
        super().reset_conversation()  # type: ignore[misc]
        self._compactor.reset()

    def system_prompt(self) -> str:
        """The system prompt every request of this handler sends: the same bytes every time.

        Base prompt, the handler's instructions, then the project's instructions
        (``AGENTS.md``, read once). Per-turn material goes into the user message.
        """
        cached = self._system_prompt
        # The cache holds the data context itself (compared by identity): an id() could be reused.
        if cached is None or cached[0] != self._base_system_prompt or cached[1] is not self._data_context:
            build = self._build_system_prompt  # type: ignore[attr-defined]
            prompt = build(self._handler_instructions + self._project_instructions())
            self._system_prompt = cached = (self._base_system_prompt, self._data_context, prompt)
        return cached[2]

    def _project_instructions(self) -> str:
        content = self._file_access.read(self._project_root / PROJECT_INSTRUCTIONS_FILE)
        if not content or not content.strip():
            return ""
        return f"\n\nProject instructions ({PROJECT_INSTRUCTIONS_FILE}):\n{content.strip()[:PROJECT_INSTRUCTIONS_LIMIT]}"

    def _turn_parts(self, mode: str, relevant: list[str]) -> list[dict[str, Any]]:
        """This turn's files (new or changed since their last copy), suggestions, time and mode instructions."""
        display = self._display_path  # type: ignore[attr-defined]
        picked = [(display(p), *self._picked_text(p)) for p in self.pinned_files]
        suggestions = [display(p) for p in relevant if p not in self.pinned_files][:10]
        return turn_parts(
            self._conversation_files,
            picked,
            self._history,
            suggestions=suggestions,
            mode_instructions=PLAN_INSTRUCTIONS if mode == "plan" else "",
            now=self._wall_clock,
        )

    def _resolved(self, raw: str) -> Path | None:
        """Where a path argument points inside the project, or None."""
        try:
            return resolve_in_root(raw, self._project_root)
        except (PathRefused, ValueError, OSError):
            return None

    def _names(self, path: Path) -> Callable[[str], bool]:
        """True for a tool's ``path`` argument that resolves to ``path``."""
        return lambda raw: self._resolved(raw) == path

    def _find_read(self, display: str, text: str, history: Sequence[dict[str, Any]]) -> str | None:
        """The readFile call whose result in ``history`` shows all of picked file ``display`` as ``text``."""
        path = self._resolved(display)
        return rereads.read_in_full(history, text, self._names(path)) if path is not None else None

    def answer_reread(self, call: ToolCall, result: TaskResult) -> TaskResult:
        """A readFile ``result``, or a pointer to where the conversation already holds those lines.

        See :mod:`core.handlers.rereads`. Results cut short, errors and short reads are
        sent as they are.
        """
        meta = dict(result.get("metadata") or {})
        content = str(result.get("content") or "")
        if (call.name != rereads.READ_TOOL or is_error(result) or len(content) < rereads.MIN_POINTED_CHARS
                or meta.get("truncated") or meta.get("truncated_chars") or not meta.get("path")):
            return result
        path = Path(meta["path"])
        shown = self._display_path(str(path))  # type: ignore[attr-defined]
        if since := rereads.earlier_read(self._history, content, self._names(path)):
            return ok_result(rereads.read_pointer(shown, meta["start_line"], meta["end_line"], since), **meta, unchanged_since=since)
        copy = self._conversation_files.copies.get(shown)
        if copy is not None and meta.get("total_lines"):  # a whole read
            text, _ = self._picked_text(str(path))
            if text is not None and content_digest(text) == copy.digest:
                return ok_result(rereads.picked_pointer(shown), **meta, unchanged_since="context")
        return result

    def _picked_text(self, path: str) -> tuple[str | None, str]:
        """A picked file's text, or None and why the file policy does not send it."""
        text, refusal = self._file_access.load(path)
        return text, refusal.reason if refusal is not None else ""

    def context_meter(self, heuristic: int | None = None) -> ContextMeter:
        """How full the next request is: the one context figure (the pane, the status line, the window check).

        The last response's real prompt tokens plus an estimate of the messages added
        since (before any response, an estimate of the whole request), plus the picked
        files the next user message will carry (sized by a stat, never read).

        Args:
            heuristic: The whole-request estimate when the caller has it (the tool loop).
        """
        if heuristic is None:
            heuristic = self.estimate_tokens(self.system_prompt(), self.get_tool_specs()) if self._spending.last_usage is None else 0  # type: ignore[attr-defined]
        tokens, estimated = self._spending.context_figure(heuristic)
        unsent = self.unsent_file_tokens()
        return ContextMeter(tokens=tokens + unsent, estimated=estimated + unsent, window=self._compactor.window.tokens)

    def unsent_file_tokens(self) -> int:
        """Estimated tokens of the picked files not in the conversation yet (the next user message adds them)."""
        sent = self._conversation_files.copies
        policy = self._file_access.policy
        total = 0
        for path in self.pinned_files:
            if self._display_path(path) in sent:  # type: ignore[attr-defined]
                continue
            try:
                size = os.stat(path).st_size
            except OSError:
                continue
            if size <= policy.max_bytes:  # a file over the limit is not sent (the turn says why)
                total += estimate_file_tokens(size)
        return total

    def get_resource_metrics(self) -> dict[str, Any]:
        metrics = super().get_resource_metrics()  # type: ignore[misc]
        metrics.update(self.context_meter().as_metrics())
        metrics["context_window_source"] = self._compactor.window.source
        metrics["usage"] = self._spending.usage_metrics()
        return metrics
