"""Asking the model which files matter, and reading its answer defensively.

SPEC.md section 5: the model is asked for a JSON array of ``{"path",
"relevance"}``. Only paths that exist in the offered metadata are accepted. If
the JSON cannot be parsed, known paths mentioned in the text are taken; if
there are none, the caller falls back to a small default selection.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping, Sequence

from core.memory.relevance import mentions

MAX_LISTED = 300
"""Most files described to the model in one request."""

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
