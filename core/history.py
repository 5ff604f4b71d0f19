"""The conversation the model sees: its messages, private, changed only by methods that say what changes.

:class:`History` is one of the session's parts (issue 24): the tool loop appends the
user's message, the model's answers and the tool results; compaction replaces the view;
a resume restores it; a rewind cuts it before a turn; ``/reset`` clears it. Everyone
else reads it: it is a read-only sequence of messages (an item is the stored message;
a slice or :meth:`messages` is a new list).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence, overload

from core.turns import current_turn
from core.types import Message, now


class History(Sequence[Message]):
    """The messages of one conversation, in order (role, content, timestamp and extras).

    Args:
        messages: What it starts with (copied).
    """

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = list(messages)

    # -- reading ------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._messages)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        return self._messages[index]

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def __reversed__(self) -> Iterator[Message]:
        return reversed(self._messages)

    def __repr__(self) -> str:
        return f"History({len(self._messages)} messages)"

    def messages(self) -> list[Message]:
        """The messages as a new list (changing it changes nothing here)."""
        return list(self._messages)

    @property
    def current_turn(self) -> int:
        """The number of the latest user turn (:func:`core.turns.current_turn`)."""
        return current_turn(self._messages)

    # -- what changes ---------------------------------------------------------------
    def append(self, role: str, content: str, **extra: Any) -> Message:
        """Add a message stamped with the time; returns it."""
        message: Message = {"role": role, "content": content, "timestamp": now(), **extra}  # type: ignore[typeddict-item]
        self._messages.append(message)
        return message

    def append_user(self, content: str, **extra: Any) -> Message:
        """The user's message (a turn carries ``turn=N``; a note, such as ``/run`` output, none)."""
        return self.append("user", content, **extra)

    def append_assistant(self, content: str, **extra: Any) -> Message:
        """The model's message: its text, and ``tool_calls``, ``stop_reason``, ``interrupted``... when it has them."""
        return self.append("assistant", content, **extra)

    def append_tool_result(self, call_id: str, name: str, content: str, *, is_error: bool = False) -> Message:
        """The answer to the tool call ``call_id``."""
        return self.append("tool", content, tool_call_id=call_id, name=name, is_error=is_error)

    def retract(self, message: Message) -> bool:
        """Take ``message`` back out when it is the newest (a turn that failed before any answer); True when it was."""
        if self._messages and self._messages[-1] is message:
            self._messages.pop()
            return True
        return False

    def replace_for_compaction(self, view: Sequence[Message]) -> None:
        """The model's view becomes ``view`` (what compaction kept, its summary and pruned results)."""
        self._messages = list(view)

    def restore(self, messages: Sequence[Message]) -> None:
        """Continue a saved conversation: the history becomes ``messages`` (as compacted)."""
        self._messages = list(messages)

    def rewind_to(self, turn: int) -> int | None:
        """Cut the history before the user message of ``turn``; returns where it was cut, or None when that turn is not here."""
        index = next((i for i, m in enumerate(self._messages) if m.get("role") == "user" and m.get("turn") == turn), None)
        if index is not None:
            del self._messages[index:]
        return index

    def clear(self) -> None:
        """Forget every message (``/reset``, ``/new``)."""
        self._messages = []
