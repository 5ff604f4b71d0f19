"""Shell syntax, refused: splitting a command line into pipeline stages without a shell.

There is no shell behind the command tool, so chaining, substitution,
redirection and subshells can never work; :func:`split_pipeline` refuses them
with a reason the model can act on, and splits what remains into argv words.
"""

from __future__ import annotations

import enum
import shlex

MAX_COMMAND_BYTES = 10 * 1024
MAX_STAGES = 8

_OPERATORS = {
    ";": "';' (command chaining)",
    "&": "'&' (background job or '&&' chaining)",
    "<": "'<' (input redirection or heredoc)",
    ">": "'>' (output redirection)",
    "(": "'(' (subshell)",
    ")": "')' (subshell)",
}
_NO_SHELL = (
    "Commands run without a shell: one program, optionally piped with '|' into filters "
    "(head, tail, sort, uniq, wc, grep). Send separate commands as separate tool calls."
)


class RefusalKind(enum.StrEnum):
    """Why a command was refused."""

    SYNTAX = "syntax"
    FORBIDDEN = "forbidden"
    NEEDS_APPROVAL = "needs_approval"


class CommandRefused(Exception):
    """A command that will not run as given; ``reason`` is written for the model."""

    def __init__(self, kind: RefusalKind, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def _syntax(reason: str) -> CommandRefused:
    return CommandRefused(RefusalKind.SYNTAX, reason)


def _precheck(command: str) -> None:
    size = len(command.encode("utf-8", "surrogatepass"))
    if size > MAX_COMMAND_BYTES:
        raise _syntax(f"The command is {size} bytes long; the limit is {MAX_COMMAND_BYTES}. Send a short command.")
    if not command.strip():
        raise _syntax("The command is empty. Send a file-finding command such as: find . -name '*.py'")
    if "\n" in command or "\r" in command:
        raise _syntax(f"The command contains a line break. {_NO_SHELL}")
    if "$" in command:
        raise _syntax(
            "The command contains '$' (variable expansion or command substitution, e.g. $(...), ${IFS}, $'...'). "
            f"Nothing expands it. {_NO_SHELL}"
        )
    if "`" in command:
        raise _syntax(f"The command contains a backtick (command substitution). {_NO_SHELL}")
    for char in command:
        if (ord(char) < 32 and char != "\t") or ord(char) == 127:
            raise _syntax(f"The command contains the control character {char!r}. Send plain text.")


def split_pipeline(command: str) -> list[list[str]]:
    """Split a command line into pipeline stages of argv words, refusing shell syntax.

    A quote-aware scan finds operators outside quotes: an unquoted ``|`` separates
    stages; any other operator (``;``, ``&``, ``&&``, ``||``, ``<``, ``>``, ``(``,
    ``)``), a comment, or an unbalanced quote is refused. Each stage is then split
    into words by :func:`shlex.split` (POSIX rules). Quoted metacharacters (for
    example ``grep -l 'a|b'``) are ordinary characters.

    Raises:
        CommandRefused: Always of kind ``SYNTAX``.
    """
    _precheck(command)
    segments: list[str] = []
    start, i, n = 0, 0, len(command)
    quote = ""
    word_start = True
    while i < n:
        char = command[i]
        if quote == "'":
            quote = "" if char == "'" else quote
            i += 1
            continue
        if quote == '"':
            if char == "\\":
                i += 2
                continue
            quote = "" if char == '"' else quote
            i += 1
            continue
        if char == "\\":
            i += 2
            word_start = False
            continue
        if char in "'\"":
            quote = char
        elif char in " \t":
            word_start = True
            i += 1
            continue
        elif char == "#" and word_start:
            raise _syntax(f"An unquoted '#' starts a shell comment; quote it if it is part of a pattern. {_NO_SHELL}")
        elif char == "|":
            if command[i + 1 : i + 2] in ("|", "&"):
                raise _syntax(f"The command uses '{command[i:i + 2]}' (command chaining). {_NO_SHELL}")
            segments.append(command[start:i])
            start = i + 1
            word_start = True
            i += 1
            continue
        elif char in _OPERATORS:
            raise _syntax(f"The command uses {_OPERATORS[char]}. {_NO_SHELL}")
        word_start = False
        i += 1
    if quote or i > n:
        raise _syntax("The command has an unbalanced quote or a trailing backslash.")
    segments.append(command[start:])
    if len(segments) > MAX_STAGES:
        raise _syntax(f"The pipeline has {len(segments)} stages; at most {MAX_STAGES} are allowed.")
    stages: list[list[str]] = []
    for segment in segments:
        try:
            words = shlex.split(segment, posix=True)
        except ValueError as exc:
            raise _syntax(f"The command cannot be tokenised: {exc}.") from None
        if not words:
            raise _syntax(f"The pipeline has an empty stage (a '|' with nothing on one side). {_NO_SHELL}")
        stages.append(words)
    return stages
