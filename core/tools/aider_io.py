"""The ``InputOutput`` of an in-process aider run: output captured, questions answered by policy, writes guarded."""

from __future__ import annotations

import functools
import io as _stdio
import os
import threading
from pathlib import Path
from typing import Any

from core.tools.aider_files import read_snapshot
from core.tools.aider_guard import WritePolicy
from core.tools.paths_guard import relative_display

FILE_QUESTIONS = ("Create new file?", "Allow edits to file that has not been added to the chat?")
"""aider's questions before it writes a file the chat does not hold."""


class AiderStopped(Exception):
    """Raised inside aider's thread to end its run: the task was cancelled, or retries ran out."""


@functools.cache
def capturing_io_class() -> type:
    """An aider ``InputOutput`` that writes to a buffer and answers questions by policy."""
    from aider.io import InputOutput
    from rich.console import Console

    class CapturingIO(InputOutput):  # type: ignore[misc, valid-type]
        def __init__(self, policy: WritePolicy, cancelled: threading.Event, max_retries: int) -> None:
            self.buffer = _stdio.StringIO()
            self.max_retries = max_retries
            self.retries = 0
            self._console = Console(file=self.buffer, force_terminal=False, no_color=True, width=120)
            self.errors: list[str] = []
            self.originals: dict[Path, str | None] = {}
            self.policy = policy
            self.project_root = policy.project_root
            self.read_only: set[Path] = set()
            """Files the user marked read-only: aider's requests to edit them are refused."""
            self.refused: dict[str, str] = {}
            """Files aider wanted to write and was refused, with the reason (project-relative where inside)."""
            self.cancelled = cancelled
            super().__init__(pretty=False, yes=True, fancy_input=False, root=str(policy.project_root))

        def refusal(self, path: Path) -> str | None:
            """Why aider may not write ``path`` (recorded for the result), or None."""
            reason = "the user marked it read-only" if path.resolve() in self.read_only else self.policy.refusal(path)
            if reason:
                self.refused.setdefault(relative_display(Path(os.path.normpath(path)), self.project_root), reason)
            return reason

        @property
        def console(self) -> Console:
            return self._console

        @console.setter
        def console(self, value: Console) -> None:
            pass  # InputOutput.__init__ assigns a terminal console; keep the buffer

        def _check_cancelled(self) -> None:
            if self.cancelled.is_set():
                raise AiderStopped("the task was cancelled")

        def print(self, message: str = "") -> None:
            self.console.print(message)

        def rule(self) -> None:
            pass

        def ring_bell(self) -> None:
            pass

        def tool_output(self, *messages: Any, **kwargs: Any) -> None:
            self._check_cancelled()  # also ends aider's retry back-off early
            if messages and str(messages[0]).startswith("Retrying in"):
                self.retries += 1  # aider alone would back off for about a minute
                if self.retries > self.max_retries:
                    raise AiderStopped(f"gave up after {self.max_retries} retries")
            super().tool_output(*messages, **kwargs)

        def tool_warning(self, message: str = "", strip: bool = True) -> None:
            self._check_cancelled()
            super().tool_warning(message, strip)

        def tool_error(self, message: str = "", strip: bool = True) -> None:
            self.errors.append(str(message).strip())
            super().tool_error(message, strip)

        def confirm_ask(self, question: str, default: str = "y", subject: str | None = None, **kwargs: Any) -> bool:
            # Yes only to editing or creating files inside the project; no to shell commands,
            # URLs, lint fixes and anything else aider might ask.
            allowed = False
            if question in FILE_QUESTIONS and subject and not self.cancelled.is_set():
                allowed = self.refusal(Path(self.root) / subject) is None
            self.console.print(f"{question} {subject or ''} -> {'yes' if allowed else 'no'}")
            if allowed and question == FILE_QUESTIONS[0]:
                self.originals.setdefault((Path(self.root) / subject).resolve(), None)
            return allowed

        def write_text(self, filename: Any, content: str, *args: Any, **kwargs: Any) -> None:
            self._check_cancelled()
            if reason := self.refusal(Path(filename)):
                raise OSError(f"{filename}: {reason}")
            path = Path(filename).resolve()
            self.originals.setdefault(path, read_snapshot(path))
            super().write_text(filename, content, *args, **kwargs)

    return CapturingIO
