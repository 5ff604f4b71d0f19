"""``assistant-tui rewind``: list the project's latest session's turns, or rewind to before one (issue 26).

    assistant-tui rewind --list
    assistant-tui rewind N [--files | --conversation] [--yes] [--force] [--session ID] [-C DIR]

Without ``--files`` or ``--conversation`` both are rewound. The diff the rewind applies is printed
first, then it asks (``--yes`` skips the question; without a terminal it is required). Files
changed outside the app since the checkpoint are named and left alone unless ``--force``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from core.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from core.history import History


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="assistant-tui rewind",
        description="Rewind the files, the conversation, or both to before a turn of this project's latest session.",
    )
    parser.add_argument("turn", nargs="?", help="the turn to rewind to before (a number from --list; r1, r2... undo a rewind)")
    parser.add_argument("--list", action="store_true", help="list the turns and what each changed")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--files", action="store_true", help="rewind the files only")
    which.add_argument("--conversation", action="store_true", help="rewind the conversation only")
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask before rewinding")
    parser.add_argument("--force", action="store_true", help="also overwrite files changed outside the app since")
    parser.add_argument("--session", metavar="ID", help="another session of this project (default: the latest)")
    parser.add_argument("-C", "--project", metavar="DIR", help="project directory (default: the current directory)")
    return parser


class _Handler:
    """The conversation of a transcript not open in an app: what a rewind cuts (as the app's handler does)."""

    def __init__(self, messages: Sequence[dict[str, Any]] = ()) -> None:
        self._history = History(messages)  # type: ignore[arg-type]

    @property
    def conversation_history(self) -> list[dict[str, Any]]:
        return self._history.messages()  # type: ignore[return-value]

    def rewind_to(self, turn: int) -> int | None:
        return self._history.rewind_to(turn)


@dataclass
class _Transcript:
    """What :class:`core.checkpoints.Checkpoints` needs of a session, for a transcript not open in an app."""

    stored: Any
    handler: _Handler
    recorder: Any = None

    @property
    def id(self) -> str:
        return self.stored.id


def rewind_main(argv: Sequence[str]) -> int:
    """Run ``assistant-tui rewind``; returns the exit status."""
    args = build_parser().parse_args(list(argv))
    if not args.list and not args.turn:
        _say("say which turn to rewind to before (assistant-tui rewind --list shows them)", error=True)
        return EXIT_USAGE
    try:
        return _run(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the user never sees a traceback
        from core.checkpoints.shadow import CheckpointError
        from core.sessions import SessionError

        if not isinstance(exc, (CheckpointError, SessionError, OSError)):
            import logging

            logging.getLogger(__name__).exception("rewind failed")
        _say(str(exc), error=True)
        return EXIT_FAILED


def _run(args: argparse.Namespace) -> int:
    from core.checkpoints.manager import Checkpoints
    from core.checkpoints.rewind import apply, find_row, list_rows, plan
    from core.sessions import SessionLocked, SessionStore, SessionWriter, load_session

    root = Path(args.project or ".").resolve()
    store = SessionStore()
    stored = store.open(args.session, root) if args.session else store.latest(root)
    if stored is None:
        _say(f"{root} has no saved session to rewind.", error=True)
        return EXIT_FAILED
    loaded = load_session(stored)
    session = _Transcript(stored, _Handler(list(loaded.messages)))
    checkpoints = Checkpoints(root, session)
    if args.list:
        rows = list_rows(checkpoints)
        _say(f"Session {stored.id}:" if rows else f"Session {stored.id} has no turns yet.")
        for row in rows:
            _say(format_row(row))
        return EXIT_OK
    row, _rows = find_row(checkpoints, args.turn)
    files, conversation = not args.conversation, not args.files
    if conversation and not row.is_turn:
        files, conversation = True, False
    the_plan = plan(checkpoints, row) if files else None
    if the_plan is not None:
        if the_plan.diff:
            _say(the_plan.diff)
        for item in the_plan.outside:
            _say(f"{item.path}: changed outside the app since the checkpoint; "
                 + ("it WILL be overwritten (--force)." if args.force else "it is left alone (--force overwrites it)."))
    what = " and ".join(w for w, on in (("the files", files), ("the conversation", conversation)) if on)
    if not args.yes:
        if not sys.stdin.isatty():
            _say(f"Rewinding {what} needs --yes here (no terminal to ask).", error=True)
            return EXIT_USAGE
        if input(f"Rewind {what} to before {_where(row)}? [y/N] ").strip().lower() not in ("y", "yes"):
            _say("Nothing was changed.")
            return EXIT_OK
    try:
        writer = SessionWriter(stored)
    except SessionLocked as exc:
        raise SessionLocked(f"{exc} Use /rewind in that assistant-tui instead.") from exc
    try:
        session.recorder = _Recorder(writer)
        outcome = apply(checkpoints, the_plan or _empty_plan(row), files=files, conversation=conversation, force=args.force)
    finally:
        writer.close()
    _say(outcome.message(row))
    return EXIT_OK


@dataclass
class _Recorder:
    writer: Any


def _empty_plan(row: Any) -> Any:
    from core.checkpoints.rewind import RewindPlan

    return RewindPlan(row=row)


def _where(row: Any) -> str:
    return f"turn {row.turn}" if row.is_turn else row.label


def format_row(row: Any, width: int = 0) -> str:
    """One line of ``--list``: the key, the turn's message and what changed from there."""
    from core.checkpoints.summary import one_line

    order = {"created": 0, "changed": 1, "deleted": 2}
    files = sorted(row.files, key=lambda f: (order.get(f[1], 3), f[0]))
    changed = ", ".join(one_line(path, added, removed, kind) for path, kind, added, removed in files[:6])
    if len(files) > 6:
        changed += f" and {len(files) - 6} more"
    label = " ".join(row.label.split())
    label = label if len(label) <= 40 else label[:39] + "…"
    text = f"{row.key:>4}  {label:<40}  {changed or 'no file changes'}"
    return text[:width] if width else text


def _say(text: str, *, error: bool = False) -> None:
    from core.text import for_terminal

    stream = sys.stderr if error else sys.stdout
    stream.write(("assistant-tui rewind: " if error else "") + for_terminal(text) + "\n")
