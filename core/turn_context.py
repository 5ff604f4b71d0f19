"""What a user turn adds to the conversation besides the query: picked files and per-turn notes.

The request prefix must stay byte-identical from one request to the next for
the provider's prompt cache to work, so nothing that changes per turn lives in
the system prompt. Instead each user message may carry ``context_parts``: the
picked files not yet in the conversation (or changed since their last copy),
the relevant-file suggestions, the time and mode instructions such as
``/plan``'s. They are rendered once, into the message's ``context`` text, and
stay there: later requests resend them unchanged.

A file already in the conversation is not sent again unless it changed; its
older copy is replaced by a short note when that is cheaper than keeping it
(see :meth:`ConversationFiles.superseded`). A file dropped from the context
pane is handled the same way; when its copy stays, the turn says it was dropped.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from core.tokens import estimate_text_tokens

log = logging.getLogger(__name__)

Part = dict[str, Any]
"""``{"kind": "file" | "note" | "text", "text": str}``; file parts also carry ``path`` and ``digest``."""


def picked_as_read(shown: str, call_id: str) -> str:
    """A picked file's part when an earlier readFile result already shows all of it (:mod:`core.handlers.rereads`)."""
    return (
        f"[{shown} was picked into the context; its current text is the whole result of readFile call {call_id} "
        "earlier in this conversation.]"
    )


def content_digest(content: str) -> str:
    """What identifies a picked file's text (its copy in the conversation is current while this is equal)."""
    return hashlib.sha256(content.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def file_part(display: str, content: str | None, reason: str = "cannot be read") -> Part:
    """A picked file as the model sees it, or a note saying why it is not sent (``reason`` follows "it")."""
    if content is None:
        return {"kind": "note", "path": display, "text": f"[{display} was picked into the context but is not sent: it {reason}]"}
    return {"kind": "file", "path": display, "digest": content_digest(content), "text": f'<file path="{display}">\n{content}\n</file>'}


def text_part(text: str) -> Part:
    return {"kind": "text", "text": text}


CONTEXT_OPEN = "<context>"
CONTEXT_CLOSE = "</context>"


def render(parts: Iterable[Part]) -> str:
    """The text a message's parts add to it, inside ``<context>`` tags (so it is never mistaken for the query)."""
    body = "\n\n".join(part["text"] for part in parts if part.get("text"))
    return f"{CONTEXT_OPEN}\n{body}\n{CONTEXT_CLOSE}" if body else ""


def attach(message: dict[str, Any], parts: Sequence[Part]) -> None:
    """Give ``message`` its parts and their rendered ``context`` text."""
    if parts:
        message["context_parts"] = [dict(p) for p in parts]
        message["context"] = render(parts)


@dataclass
class _Copy:
    message: dict[str, Any]
    index: int
    digest: str
    tokens: int


class ConversationFiles:
    """Where each picked file's latest copy sits in the conversation.

    Args:
        caching: True when the provider caches the request prefix (then replacing an
            old copy costs a rewrite of everything after it, so it is done only when
            the old copy is the bigger cost).
        find_read: ``(display path, text, history)`` to the id of a readFile call whose
            result in the history already shows all of the file as it is now; the
            picked file is then sent as a pointer to it (:mod:`core.handlers.rereads`).
    """

    def __init__(self, caching: bool = True, find_read: Callable[[str, str, Sequence[dict[str, Any]]], str | None] | None = None) -> None:
        self.caching = caching
        self.find_read = find_read
        self.copies: dict[str, _Copy] = {}

    def rebuild(self, history: Sequence[dict[str, Any]]) -> None:
        """Find the copies in ``history`` (after a resume or a reset)."""
        self.copies.clear()
        for message in history:
            for index, part in enumerate(message.get("context_parts") or []):
                if part.get("kind") == "file" and part.get("path"):
                    self.copies[part["path"]] = _Copy(message, index, str(part.get("digest", "")), estimate_text_tokens(part.get("text", "")))

    def parts_for(
        self,
        picked: Sequence[tuple[str, str | None] | tuple[str, str | None, str]],
        history: Sequence[dict[str, Any]],
    ) -> list[Part]:
        """File parts for this turn: picked files new to the conversation or changed since.

        Copies of changed or dropped files are replaced by notes where :meth:`superseded` says so.

        Args:
            picked: ``(display path, content or None[, why it is not sent])`` of each picked file, in order.
            history: the conversation so far (its messages may be edited in place).
        """
        parts: list[Part] = []
        wanted = {entry[0] for entry in picked}
        for display in [p for p in self.copies if p not in wanted]:
            if not self._retire(display, history, f"[{display} was here; it was dropped from the context]"):
                parts.append({"kind": "note", "path": display, "text": f"[{display} was dropped from the context: disregard its earlier copy]"})
        for display, content, *why in picked:
            part = file_part(display, content, *why)
            copy = self.copies.get(display)
            if copy is not None and part.get("digest") == copy.digest:
                continue
            if copy is not None:
                self._retire(display, history, f"[an older copy of {display} was here; the current one is further down]")
            if content is not None and self.find_read is not None and (call_id := self.find_read(display, content, history)):
                part["text"] = picked_as_read(display, call_id)
            parts.append(part)
        return parts

    def record(self, message: dict[str, Any]) -> None:
        """Note the copies ``message`` (just attached) carries."""
        for index, part in enumerate(message.get("context_parts") or []):
            if part.get("kind") == "file":
                self.copies[part["path"]] = _Copy(message, index, part["digest"], estimate_text_tokens(part["text"]))

    def superseded(self, copy: _Copy, history: Sequence[dict[str, Any]]) -> bool:
        """True when replacing ``copy`` by a note is cheaper than keeping it.

        Keeping it costs its tokens on every later request (at the cache-read price
        when cached); replacing it invalidates the cache from that message on, so
        everything after it is written again once. Without caching, replacing is
        always cheaper. With caching we replace when the copy is larger than what
        follows it: about ten cached re-reads of it cost as much as one rewrite.
        """
        if not self.caching:
            return True
        position = next((i for i, m in enumerate(history) if m is copy.message), None)
        if position is None:
            return False
        after = sum(estimate_text_tokens(str(m.get("content") or "")) + estimate_text_tokens(m.get("context") or "") for m in history[position + 1 :])
        return copy.tokens >= after

    def _retire(self, display: str, history: Sequence[dict[str, Any]], note: str) -> bool:
        """Forget the copy of ``display``; replace it by ``note`` when that is cheaper (True if replaced)."""
        copy = self.copies.pop(display)
        if not self.superseded(copy, history):
            return False
        parts = copy.message.get("context_parts") or []
        if copy.index < len(parts) and parts[copy.index].get("path") == display:
            parts[copy.index] = {"kind": "note", "path": display, "text": note}
            copy.message["context"] = render(parts)
            log.info("replaced the copy of %s in the conversation by a note", display)
            return True
        return False


def turn_parts(
    files: ConversationFiles,
    picked: Sequence[tuple[str, str | None] | tuple[str, str | None, str]],
    history: Sequence[dict[str, Any]],
    *,
    suggestions: Sequence[str] = (),
    mode_instructions: str = "",
    now: Callable[[], str] | None = None,
) -> list[Part]:
    """Everything this user turn adds before its query: files, suggestions, the time, mode instructions."""
    parts = files.parts_for(picked, history)
    if suggestions:
        parts.append(text_part("Possibly relevant files (not loaded; read them if needed):\n" + "\n".join(f"- {p}" for p in suggestions)))
    if now is not None:
        parts.append(text_part(f"Current time: {now()}"))
    if mode_instructions:
        parts.append(text_part(mode_instructions.strip()))
    return parts
