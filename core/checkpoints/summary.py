"""What one writer call changed: the ``files`` of a checkpoint record, and the line shown under the call."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from core.checkpoints.objects import Change

MAX_ITEMS = 200
"""Paths kept in a record's summary (the counts cover all of them)."""
MAX_SHOWN = 8
"""Paths named in the line under a call."""


def summarise(changes: Iterable[Change], counts: Mapping[str, tuple[int, int]], ignored: Iterable[str] = ()) -> dict[str, Any]:
    """The ``files`` field of a checkpoint record."""
    items = []
    totals = {"created": 0, "changed": 0, "deleted": 0}
    for change in changes:
        totals[change.kind] += 1
        if len(items) < MAX_ITEMS:
            added, removed = counts.get(change.path, (0, 0))
            items.append([change.path, change.kind, added, removed])
    summary: dict[str, Any] = {"items": items, **totals}
    ignored = sorted(ignored)
    if ignored:
        summary["ignored_dirs"] = ignored
    return summary


def describe(files: Mapping[str, Any]) -> str:
    """One paragraph for the trace and the model: ``created a.py; changed b.py (+3 −1); deleted c.txt``."""
    words = {"created": [], "changed": [], "deleted": []}  # type: dict[str, list[str]]
    for path, kind, added, removed in files.get("items") or []:
        shown = f"{path} (+{added} −{removed})" if kind == "changed" else path
        words.setdefault(kind, []).append(shown)
    parts = []
    for kind in ("created", "changed", "deleted"):
        total = int(files.get(kind) or 0)
        if not total:
            continue
        names = words[kind][:MAX_SHOWN]
        more = f" and {total - len(names)} more" if total > len(names) else ""
        parts.append(f"{kind} {', '.join(names)}{more}")
    text = "; ".join(parts)
    if files.get("ignored_dirs"):
        dirs = ", ".join(d + "/" for d in files["ignored_dirs"])
        text += ("; " if text else "") + f"changed ignored {dirs} (not in the checkpoint: a rewind cannot restore them)"
    return text


def one_line(path: str, added: int, removed: int, kind: str = "changed") -> str:
    """The chat's summary of one file: ``calc.py +3 −1`` (or ``created``/``deleted``)."""
    if kind == "changed":
        return f"{path} +{added} −{removed}"
    return f"{path} {kind} (+{added} −{removed})" if kind == "created" else f"{path} deleted"


def files_lines(files: Any) -> list[str]:
    """The trace's lines under a call: ``created a.py``, ``changed b.py (+3 −1)``, ``deleted c.txt`` (one per kind)."""
    if not isinstance(files, dict):
        return []
    text = describe(files)
    return [part for part in text.split("; ") if part]
