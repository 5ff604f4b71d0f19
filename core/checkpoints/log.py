"""The checkpoints of one session, as its transcript records them, and where each user turn begins among them.

Two transcript record kinds (``core/sessions/records.py``):

- ``checkpoint``: one writer call that changed files: ``seq``, ``turn`` (the user turn it
  happened in; a ``/run`` between turns has the latest turn's number), ``tool``, ``label``,
  ``before`` and ``after`` (shadow tree ids: only their difference matters) and ``files``
  (what it created, changed and deleted, for the list and the trace). A rewind's own file
  changes are a checkpoint too (``tool: "rewind"``), so a rewind can be undone.
- ``rewind``: ``turn`` (rewound to before that turn), ``files`` and ``conversation`` (what
  was rewound), ``kept`` (files left alone because they changed outside the app). A
  conversation rewind makes the loader drop the rewound turns' messages (``--continue``
  resumes the rewound conversation: :func:`core.sessions.records.drop_rewound`).

Undoing "everything from position p" restores, for each path any later checkpoint changed,
the content before the first of them, and expects on disk the content after the last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence


@dataclass(frozen=True)
class Row:
    """One line of the rewind list: a user turn of the conversation, or an earlier rewind (to undo).

    Attributes:
        key: What the user types: the turn number (``"3"``), or ``"r1"`` for the first rewind.
        turn: The user turn (0 for a rewind row).
        label: The turn's message, or what the rewind did.
        position: Index in the log from which a files rewind undoes everything.
        files: Paths changed from here to the next row, each ``(path, kind, added, removed)``.
    """

    key: str
    turn: int
    label: str
    position: int
    files: tuple[tuple[str, str, int, int], ...] = ()

    @property
    def is_turn(self) -> bool:
        return self.turn > 0


@dataclass
class CheckpointLog:
    """The ``checkpoint`` and ``rewind`` records of one transcript, in order."""

    records: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> "CheckpointLog":
        return cls([dict(r) for r in records if r.get("kind") in ("checkpoint", "rewind") and _valid(r)])

    def next_seq(self) -> int:
        return 1 + max((int(r.get("seq") or 0) for r in self.records if r["kind"] == "checkpoint"), default=0)

    def position(self, turn: int) -> int:
        """Where turn ``turn`` begins: the first checkpoint of turn >= ``turn`` after the latest
        conversation rewind to a turn <= ``turn`` (the end of the log when there is none)."""
        start = 0
        for index, record in enumerate(self.records):
            if record["kind"] == "rewind" and record.get("conversation") and int(record.get("turn") or 0) <= turn:
                start = index + 1
        for index in range(start, len(self.records)):
            record = self.records[index]
            if record["kind"] == "checkpoint" and int(record.get("turn") or 0) >= turn:
                return index
        return len(self.records)

    def checkpoints_from(self, position: int) -> list[dict[str, Any]]:
        return [r for r in self.records[position:] if r["kind"] == "checkpoint"]

    def rows(self, turns: Sequence[tuple[int, str]]) -> list[Row]:
        """The rewind list: each turn of the conversation (``(number, text)``) and each earlier rewind, in order."""
        marks: list[tuple[int, int, Row]] = []
        for number, text in turns:
            marks.append((self.position(number), 0, Row(key=str(number), turn=number, label=text, position=self.position(number))))
        undo = 0
        for index, record in enumerate(self.records):
            if record["kind"] == "checkpoint" and record.get("tool") == "rewind":
                undo += 1
                marks.append((index, 1, Row(key=f"r{undo}", turn=0, label=str(record.get("label") or "rewind"), position=index)))
        marks.sort(key=lambda item: (item[0], item[1]))
        rows: list[Row] = []
        for i, (position, _order, row) in enumerate(marks):
            end = marks[i + 1][0] if i + 1 < len(marks) else len(self.records)
            files = _files_between(self.records[position:max(position, end)])
            rows.append(Row(key=row.key, turn=row.turn, label=row.label, position=row.position, files=files))
        return rows


def _files_between(records: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, str, int, int], ...]:
    merged: dict[str, list[Any]] = {}
    for record in records:
        if record["kind"] != "checkpoint":
            continue
        for path, kind, added, removed in iter_files(record.get("files") or {}):
            if path in merged:
                merged[path][2] += added
                merged[path][3] += removed
                merged[path][1] = _combine(merged[path][1], kind)
            else:
                merged[path] = [path, kind, added, removed]
    return tuple((p, k, a, r) for p, k, a, r in merged.values())


def _combine(first: str, then: str) -> str:
    if first == "created":
        return "created"
    if then == "deleted":
        return "deleted"
    return "changed"


def iter_files(files: Mapping[str, Any]) -> Iterable[tuple[str, str, int, int]]:
    """``(path, kind, added, removed)`` of a record's ``files`` summary."""
    for item in files.get("items") or []:
        if isinstance(item, list) and len(item) == 4:
            yield str(item[0]), str(item[1]), int(item[2] or 0), int(item[3] or 0)


def _valid(record: Mapping[str, Any]) -> bool:
    if record.get("kind") == "checkpoint":
        return isinstance(record.get("before"), str) and isinstance(record.get("after"), str)
    return isinstance(record.get("turn"), int)
