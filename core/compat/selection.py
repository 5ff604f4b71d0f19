"""``determine_relevant_files`` (SPEC.md section 5): asking the model which files matter.

The app ranks files lexically (:meth:`core.memory.system.MemorySystem.get_relevant_context_for`);
this is the SPEC's model-chosen alternative, added by :class:`core.compat.MemorySystem`. The model is asked for a JSON array of ``{"path",
"relevance"}``. Only paths that exist in the offered metadata are accepted. If
the JSON cannot be parsed, known paths mentioned in the text are taken; if
there are none, the caller falls back to a small default selection.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Iterable, Mapping, Sequence

from core.memory.relevance import Lexicon, mentions

log = logging.getLogger(__name__)

MAX_LISTED = 300
"""Most files described to the model in one request."""
DEFAULT_SELECTION = 5
"""Most files of the fallback selection when the model's answer is unusable."""

SELECTION_SYSTEM_PROMPT = """\
You choose which files of a software project are relevant to a task.
Answer with only a JSON array, most relevant first, like:
[{"path": "src/auth.py", "relevance": 0.9}]
Use only paths from the list you are given, exactly as written. relevance is a number from 0 to 1.
Return [] when no file is relevant."""


def describe(path: str, meta: Any) -> str:
    """One line describing a file for the model: path, language, size, symbols."""
    def get(name: str) -> Any:
        return meta.get(name) if isinstance(meta, Mapping) else getattr(meta, name, None)

    facts = []
    if get("language"):
        facts.append(str(get("language")))
    if get("size") is not None:
        facts.append(f"{get('size')} bytes")
    symbols = list(get("symbols") or ())[:8]
    if symbols:
        facts.append("defines " + ", ".join(map(str, symbols)))
    return f"- {path}" + (f" ({'; '.join(facts)})" if facts else "")


def normalise_metadata(file_metadata: Any) -> dict[str, Any]:
    """Accept a mapping path -> metadata, or a list of paths, metadata objects or dicts."""
    if isinstance(file_metadata, Mapping):
        return {str(k): v for k, v in file_metadata.items()}
    out: dict[str, Any] = {}
    for item in file_metadata or ():
        if isinstance(item, str):
            out[item] = None
        elif isinstance(item, Mapping) and "path" in item:
            out[str(item["path"])] = item
        elif getattr(item, "path", None):
            out[str(item.path)] = item
    return out


def selection_prompt(query: str, listed: Mapping[str, Any]) -> str:
    """The user message asking for a selection among the listed files."""
    lines = "\n".join(describe(path, meta) for path, meta in listed.items())
    return f"Task:\n{query}\n\nProject files:\n{lines}\n\nWhich of these files are relevant to the task? JSON array only."


def _json_array(text: str) -> list[Any] | None:
    """The first JSON array in a text (code fences allowed), or None."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    candidates = [fenced.group(1)] if fenced else []
    candidates.append(text)
    for candidate in candidates:
        start = candidate.find("[")
        while start != -1:
            end = candidate.rfind("]")
            while end > start:
                try:
                    value = json.loads(candidate[start : end + 1])
                except ValueError:
                    end = candidate.rfind("]", start, end)
                    continue
                if isinstance(value, list):
                    return value
                break
            start = candidate.find("[", start + 1)
    return None


def _key(path: str) -> str:
    return path.strip().strip("`'\"").removeprefix("./")


def parse_selection(text: str, known: Sequence[str]) -> list[tuple[str, float]] | None:
    """Paths and relevances from the model's JSON; None when there is no JSON array.

    Unknown paths are dropped; relevance is clamped to 0..1 (0.5 when missing).
    """
    array = _json_array(text)
    if array is None:
        return None
    lookup = {_key(p): p for p in known}
    out: dict[str, float] = {}
    for item in array:
        if isinstance(item, str):
            path, relevance = item, 0.5
        elif isinstance(item, Mapping):
            path = item.get("path") or item.get("file") or ""
            relevance = item.get("relevance", item.get("score", 0.5))
        else:
            continue
        original = lookup.get(_key(str(path)))
        if original is None:
            continue
        try:
            value = float(relevance)
        except (TypeError, ValueError):
            value = 0.5
        out.setdefault(original, min(1.0, max(0.0, value)))
    return sorted(out.items(), key=lambda kv: kv[1], reverse=True)


def mentioned_paths(text: str, known: Iterable[str]) -> list[tuple[str, float]]:
    """Known paths named in free text: whole paths, or file names that are unique among them."""
    by_key: dict[str, str] = {}
    by_name: dict[str, list[str]] = {}
    for path in known:
        by_key[_key(path)] = path
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    ordered: dict[str, None] = {}
    for mention in mentions(text):
        named = by_name.get(mention, [])
        path = by_key.get(mention) or (named[0] if len(named) == 1 else None)
        if path is not None:
            ordered.setdefault(path, None)
    return [(path, round(max(0.3, 0.7 - 0.05 * rank), 3)) for rank, path in enumerate(ordered)]


class MemorySpecApi:
    """Added to the engine's MemorySystem by :class:`core.compat.MemorySystem`; relies on its ``provider`` (a ProviderAdapter, or None)."""

    provider: Any

    async def determine_relevant_files(self, query: str, file_metadata: Any) -> list[tuple[str, float]]:
        """Ask the model which of the given files matter for ``query``.

        Args:
            query: The task text.
            file_metadata: Mapping path -> metadata, or a list of paths,
                :class:`FileMetadata` objects or dicts with a ``path``.

        Returns:
            ``(path, relevance)`` best first, paths exactly as given in
            ``file_metadata``. From the model's JSON if it parses (unknown paths
            dropped); else known paths the reply mentions; else a default
            selection of at most :data:`DEFAULT_SELECTION` files.
        """
        metadata = normalise_metadata(file_metadata)
        known = list(metadata)
        if not known:
            return []
        if self.provider is None:
            return self._default_selection(query, known)
        listed = {p: metadata[p] for p in self._preselect(query, known)}
        try:
            response = await self.provider.send_message(
                [{"role": "user", "content": selection_prompt(query, listed)}], SELECTION_SYSTEM_PROMPT, tools=[]
            )
            text = str(self.provider.extract_tool_calls(response).get("content") or "")
        except Exception as exc:  # noqa: BLE001 - fall back rather than fail the turn
            log.warning("file selection by the model failed: %s", exc)
            return self._default_selection(query, known)
        parsed = parse_selection(text, known)
        if parsed:
            return parsed
        if parsed is not None and "[]" in text.replace(" ", ""):
            return []  # the model said nothing is relevant
        mentioned = mentioned_paths(text, known)
        if mentioned:
            return mentioned
        log.info("model's file selection was unusable; using the default selection")
        return self._default_selection(query, known)

    def _preselect(self, query: str, known: list[str]) -> list[str]:
        """The files described to the model: all, or the lexically best when there are many."""
        if len(known) <= MAX_LISTED:
            return known
        ranked = [p for p, _ in Lexicon(known).rank([(query, 1.0)], limit=MAX_LISTED)]
        rest = [p for p in sorted(known, key=len) if p not in set(ranked)]
        return (ranked + rest)[:MAX_LISTED]

    def _default_selection(self, query: str, known: list[str]) -> list[tuple[str, float]]:
        ranked = Lexicon(known).rank([(query, 1.0)], limit=DEFAULT_SELECTION)
        if ranked:
            return ranked
        return [(p, 0.1) for p in sorted(known, key=len)[:DEFAULT_SELECTION]]
