"""The ``aiderAutomatic`` and ``aiderInteractive`` tools offered to the model (SPEC.md section 7).

Their executors close over the handler: before calling the bridge they choose the
files from the explicit ``file_context``, the user's picked files, and the memory
system's ranking for the instruction (weighted most) and the recent conversation
(SPEC.md section 7, Phase 3).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Sequence

from core.callables import call_sync_or_async
from core.memory.relevance import FILE_MENTION
from core.tools.aider_bridge import AiderBridge, AiderError, resolve_in_project
from core.tools.aider_guard import protected_reason
from core.tools.paths_guard import relative_display
from core.secrets import is_secret_path
from core.types import TaskResult, error_result

log = logging.getLogger(__name__)

MAX_FILES = 8
"""Most files handed to aider in one call."""
RECENT_MESSAGES = 6
"""Conversation messages (from the end) that inform the file choice."""
INSTRUCTION_WEIGHT = 1.0
CONVERSATION_WEIGHT = 0.5
MIN_RELATIVE_SCORE = 0.3
"""Inferred files scoring below this fraction of the best inferred file are left out."""

_FILE_CONTEXT_SCHEMA = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Paths (relative to the project root, or absolute inside it) of files aider should edit.",
}

AIDER_AUTOMATIC_SPEC: dict[str, Any] = {
    "name": "aiderAutomatic",
    "description": (
        "Have aider make a straightforward code change without asking the user: it edits the files "
        "on disk and returns the diff. Use it for broad changes (many places or files, or text you cannot "
        "quote); for an exact change you can state, use editFile. Describe the change precisely in `prompt`. Files come from "
        "`file_context` plus files relevant to the prompt and the recent conversation."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The change to make, stated precisely."},
            "file_context": _FILE_CONTEXT_SCHEMA,
        },
        "required": ["prompt"],
    },
    "requires_approval": True,
}

AIDER_INTERACTIVE_SPEC: dict[str, Any] = {
    "name": "aiderInteractive",
    "description": (
        "Open an interactive aider session in the user's terminal for complex edits that need the "
        "user's guidance; `query` is sent as the first message. Returns which files changed when "
        "the user leaves aider."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to work on; aider receives it first."},
            "file_context": _FILE_CONTEXT_SCHEMA,
        },
        "required": ["query"],
    },
    "requires_approval": True,
}

def mentioned_files(text: str, project_root: Path) -> list[Path]:
    """Existing project files named in ``text`` (relative or absolute paths), in order of mention."""
    found: dict[Path, None] = {}
    for token in FILE_MENTION.findall(text):
        try:
            found.setdefault(resolve_in_project(token, project_root), None)
        except (AiderError, OSError, ValueError):
            continue
    return list(found)


def conversation_text(messages: Iterable[dict[str, Any]]) -> str:
    """The text of messages, tool-call arguments and tool results included."""
    parts: list[str] = []
    for message in messages:
        if message.get("content"):
            parts.append(str(message["content"]))
        for call in message.get("tool_calls") or []:
            parts.append(json.dumps(call.get("parameters") or call.get("input") or {}))
    return "\n".join(parts)


def _normalise(matches: Any) -> list[tuple[str, float]]:
    """(path, relevance) pairs from matches given as pairs or bare paths."""
    ranked = []
    for match in matches or []:
        if isinstance(match, (tuple, list)) and match:
            score = match[1] if len(match) > 1 and isinstance(match[1], (int, float)) else 1.0
            ranked.append((str(match[0]), float(score)))
        elif isinstance(match, (str, Path)):
            ranked.append((str(match), 1.0))
    return ranked


def _scaled(ranked: list[tuple[str, float]], weight: float) -> list[tuple[str, float]]:
    best = max((score for _, score in ranked), default=0.0) or 1.0
    return [(path, weight * score / best) for path, score in ranked]


async def inferred_matches(
    memory_system: Any, instruction: str, history: Sequence[dict[str, Any]], recent_text: str
) -> list[tuple[str, float]]:
    """Files the memory system relates to the instruction (weighted most) and the recent conversation.

    Uses ``weighted_query(instruction, messages, limit)`` when the memory system has it, else two
    ``get_relevant_context_for`` lookups merged with :data:`INSTRUCTION_WEIGHT` and
    :data:`CONVERSATION_WEIGHT`. Any failure gives [] (relevance is a hint, never fatal).
    """
    if memory_system is None:
        return []
    try:
        if hasattr(memory_system, "weighted_query"):
            ranked = _normalise(await call_sync_or_async(memory_system.weighted_query, instruction, list(history), limit=2 * MAX_FILES))
            return _scaled(ranked, INSTRUCTION_WEIGHT)
        lookup = memory_system.get_relevant_context_for
        merged: list[tuple[str, float]] = []
        for text, weight in ((instruction, INSTRUCTION_WEIGHT), (recent_text, CONVERSATION_WEIGHT)):
            if text.strip():
                result = await call_sync_or_async(lookup, {"taskText": text, "inheritedContext": ""})
                matches = getattr(result, "matches", None)
                if matches is None and isinstance(result, dict):
                    matches = result.get("matches")
                merged += _scaled(_normalise(matches), weight)
        return merged
    except Exception:  # noqa: BLE001
        log.exception("memory lookup for aider's files failed")
        return []


async def choose_files(
    handler: Any,
    instruction: str,
    explicit: Sequence[str] = (),
    *,
    limit: int = MAX_FILES,
) -> list[str]:
    """The files aider gets: explicit, then picked, then inferred from instruction and conversation.

    Args:
        handler: anything with ``project_root`` and optionally ``memory_system``,
            ``conversation_history`` and ``pinned_files``.
        instruction: the prompt or query for aider (weighted most).
        explicit: the ``file_context`` the caller gave.
        limit: most files returned.

    Returns:
        Absolute paths, de-duplicated, at most ``limit``.

    Raises:
        AiderError: an explicit path is outside the project or missing (named in the message).
    """
    root = project_root_of(handler)
    chosen: dict[Path, None] = {}
    pinned: dict[Path, None] = {}
    for raw in getattr(handler, "pinned_files", None) or []:
        try:
            pinned.setdefault(resolve_in_project(raw, root), None)
        except AiderError:
            log.info("skipping picked file %s: no longer in the project", raw)
    for raw in explicit:
        path = resolve_in_project(raw, root)
        if path not in pinned and (reason := protected_reason(raw, root)):  # picked: aider may read it
            raise AiderError(f"{raw} may not be edited by aider: {reason}")
        if path not in pinned and (reason := is_secret_path(path)):
            raise AiderError(f"{raw}: {reason}; aider edits it only if the user adds it to the context")
        chosen.setdefault(path, None)
    chosen.update({path: None for path in pinned if path not in chosen})

    history = list(getattr(handler, "conversation_history", None) or [])[-RECENT_MESSAGES:]
    recent = conversation_text(history)
    scores: dict[Path, float] = {}

    def add(path: str | Path, score: float) -> None:
        try:
            resolved = resolve_in_project(path, root)
        except AiderError:
            return
        if is_secret_path(resolved) or protected_reason(resolved, root):
            return
        scores[resolved] = scores.get(resolved, 0.0) + score

    for path, score in await inferred_matches(getattr(handler, "memory_system", None), instruction, history, recent):
        add(path, score)
    # Files named outright count as the best possible match of their source.
    for path in mentioned_files(instruction, root):
        add(path, INSTRUCTION_WEIGHT * 2)
    for path in mentioned_files(recent, root):
        add(path, CONVERSATION_WEIGHT * 2)

    if scores:
        floor = max(scores.values()) * MIN_RELATIVE_SCORE
        for path, score in sorted(scores.items(), key=lambda item: (-item[1], str(item[0]))):
            if score >= floor:
                chosen.setdefault(path, None)
    return [str(path) for path in list(chosen)[:limit]]


def project_root_of(handler: Any) -> Path:
    """The resolved project root of a handler (``project_root``, else ``config.project_root``)."""
    return Path(getattr(handler, "project_root", None) or handler.config.project_root).resolve()


def _explicit(params: dict[str, Any]) -> list[str]:
    value = params.get("file_context") or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise AiderError("file_context must be a list of file paths")
    return value


def register_aider_tools(
    handler: Any,
    bridge: AiderBridge,
    after_edit: Callable[[str, list[str], TaskResult], Awaitable[TaskResult]] | None = None,
) -> bool:
    """Register ``aiderAutomatic`` and ``aiderInteractive`` on the handler.

    Args:
        handler: the handler (``register_tool``, ``memory_system``, ``conversation_history``,
            ``pinned_files``, ``project_root``).
        bridge: the AiderBridge that runs aider (an interactive session through its ``interactive_runner``).
        after_edit: called with (instruction, files, result) after each ``aiderAutomatic``
            edit; its result replaces aider's (``auto_test`` runs the tests there).

    Returns:
        True when both tools were registered.
    """

    def executor(
        spec: dict[str, Any], field: str, run: Callable[[str, list[str], list[str]], Awaitable[TaskResult]]
    ) -> tuple[dict[str, Any], Any]:
        name = spec["name"]
        chosen: dict[tuple[str, tuple[str, ...]], list[str]] = {}

        async def files_for(params: dict[str, Any]) -> tuple[str, list[str], list[str]]:
            """The instruction, and the files aider will edit and only read (the same for approval and run)."""
            instruction = str(params.get(field) or "").strip()
            key = (instruction, tuple(_explicit(params)))
            if key not in chosen:
                chosen.clear()
                chosen[key] = await choose_files(handler, instruction, _explicit(params))
            files = chosen[key]
            marked = {str(Path(p).resolve()) for p in getattr(handler, "read_only_files", None) or []}
            root = project_root_of(handler)
            marked |= {str(Path(f).resolve()) for f in files if protected_reason(f, root)}  # a picked .mcp.json: read only
            editable = [f for f in files if str(Path(f).resolve()) not in marked]
            return instruction, editable, [f for f in files if str(Path(f).resolve()) in marked]

        async def describe(params: dict[str, Any]) -> str:
            instruction, editable, read_only = await files_for(params)
            root = Path(handler.project_root)
            shown = lambda paths: "\n".join(f"  {relative_display(Path(p), root)}" for p in paths) or "  (none)"  # noqa: E731
            text = f"aider ({name}) will be told:\n  {instruction}\n\nFiles it may edit:\n{shown(editable)}"
            if read_only:
                text += f"\n\nFiles it may only read:\n{shown(read_only)}"
            return text

        async def execute(params: dict[str, Any]) -> TaskResult:
            if not str(params.get(field) or "").strip():
                return error_result(f"{name} needs a `{field}`")
            try:
                instruction, editable, read_only = await files_for(params)
            except AiderError as exc:
                return error_result(f"{name}: {exc}")
            finally:
                chosen.clear()
            files = editable + read_only
            result = await run(instruction, editable, read_only)
            result.setdefault("metadata", {})["file_context"] = files
            result["metadata"]["read_only_files"] = read_only
            return result

        async def writes(params: dict[str, Any]) -> list[str] | None:
            """The files an automatic edit may write (its checkpoint snapshots only them; issue 26)."""
            return (await files_for(params))[1] if name == "aiderAutomatic" and after_edit is None else None

        return {**spec, "describe": describe, "writes": writes}, execute

    async def automatic(prompt: str, files: list[str], read_only: list[str]) -> TaskResult:
        result = await bridge.execute_automatic_task(prompt, files, read_only_paths=read_only)
        if after_edit is not None:
            result = await after_edit(prompt, files, result)
        return result

    def interactive(query: str, files: list[str], read_only: list[str]) -> Awaitable[TaskResult]:
        return bridge.run_interactive(query, files, read_only_paths=read_only)

    ok_automatic = handler.register_tool(*executor(AIDER_AUTOMATIC_SPEC, "prompt", automatic))
    ok_interactive = handler.register_tool(*executor(AIDER_INTERACTIVE_SPEC, "query", interactive))
    return bool(ok_automatic and ok_interactive)
