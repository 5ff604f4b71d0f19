"""Command-line syntax without a shell: pipeline splitting and getopt-style option parsing.

There is no shell behind the command tool, so chaining, substitution,
redirection and subshells can never work; :func:`split_pipeline` refuses them
with a reason the model can act on, and splits what remains into argv words.
:func:`parse_options` reads one program's arguments the way getopt does, refusing
forbidden options even when abbreviated.
"""

from __future__ import annotations

import enum
import shlex
from dataclasses import dataclass, field
from typing import Mapping

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


@dataclass(frozen=True)
class OptionSpec:
    """How a program's options are spelled: which take a value, which are known, which are refused.

    A spec with ``short_flags`` set is *strict*: an option it does not know is refused
    (the allowlisted programs run without approval, so an option nobody checked must
    not run). ``abbrev`` says whether the program accepts unique prefixes of long
    options (GNU getopt_long and git's parse-options do; ripgrep and fd do not).
    """

    short_args: str = ""
    long_args: frozenset[str] = frozenset()
    forbidden: Mapping[str, str] = field(default_factory=dict)
    short_flags: str | None = None
    long_flags: frozenset[str] = frozenset()
    optional_args: frozenset[str] = frozenset()
    """Long options whose value may only be attached with ``=`` (``--color[=WHEN]``)."""
    abbrev: bool = True

    @property
    def strict(self) -> bool:
        """True when unknown options are refused."""
        return self.short_flags is not None

    def long_names(self) -> frozenset[str]:
        """Every long option this spec knows, forbidden ones included."""
        forbidden = frozenset(name for name in self.forbidden if name.startswith("--"))
        return self.long_args | self.long_flags | self.optional_args | forbidden


@dataclass
class ParsedArgs:
    """Options (name, value or None) and positionals of one program's arguments."""

    options: list[tuple[str, str | None]]
    positionals: list[str]
    end: int
    """Index in the arguments where options end (the ``--``), or their length."""
    positions: list[int] = field(default_factory=list)
    """Index in the arguments of each positional."""

    def has(self, *names: str) -> bool:
        """True when any of the options ``names`` was given."""
        return any(opt in names for opt, _ in self.options)

    def values(self, *names: str) -> list[str]:
        """The values given to the options ``names``, in order."""
        return [value for opt, value in self.options if opt in names and value is not None]


def refuse_option(program: str, option: str, why: str) -> CommandRefused:
    """The refusal of a forbidden option, e.g. "find -exec is not allowed: it runs other programs."."""
    return CommandRefused(RefusalKind.FORBIDDEN, f"{program} {option} is not allowed: it {why}. Leave the option out.")


def _unknown(program: str, option: str) -> CommandRefused:
    return CommandRefused(RefusalKind.FORBIDDEN, f"{program} {option[:60]} is not an option this tool knows to be safe "
                          "for a read-only command; leave it out or use a more common option.")


def canonical_long(program: str, name: str, spec: OptionSpec) -> str:
    """The full name of a long option as the program itself would read it (unique prefixes expanded).

    Raises:
        CommandRefused: For a forbidden option under any spelling, an ambiguous
            prefix, or (strict specs) an unknown option.
    """
    known = spec.long_names()
    if name in known:
        matches = [name]
    elif spec.abbrev:
        matches = [full for full in known if full.startswith(name)] if len(name) > 2 else []
    else:
        matches = []
    for match in matches:
        if match in spec.forbidden:
            raise refuse_option(program, match, spec.forbidden[match])
    if len(matches) > 1:
        raise CommandRefused(RefusalKind.FORBIDDEN, f"{program} {name[:60]} is ambiguous: it could be "
                             f"{', '.join(sorted(matches)[:4])}. Spell the option out in full.")
    if matches:
        return matches[0]
    if spec.strict:
        raise _unknown(program, name)
    for refused, why in spec.forbidden.items():  # an unknown program's options: refuse prefixes of forbidden ones
        if refused.startswith("--") and refused.startswith(name) and len(name) > 2:
            raise refuse_option(program, refused, why)
    return name


def parse_options(program: str, args: list[str], spec: OptionSpec) -> ParsedArgs:
    """Parse one program's arguments as GNU getopt_long would (options may follow operands).

    Long options come back under their full name (``--exclude-fr=F`` is
    ``("--exclude-from", "F")``), short clusters split (``-rlf F``), attached
    values separated (``-fFILE``).

    Args:
        program: Name used in refusal messages.
        args: The arguments after the program name.
        spec: Which options take a value, which are known and which are forbidden.

    Returns:
        The options with their values and the positionals.

    Raises:
        CommandRefused: ``FORBIDDEN`` for a forbidden option, also inside a short
            cluster (``-lO``) or abbreviated (``--out`` for ``--output``); for
            strict specs also an unknown or ambiguous option.
    """
    parsed = ParsedArgs([], [], len(args))
    positions = parsed.positions
    short_known = None if spec.short_flags is None else spec.short_flags + spec.short_args
    i, n = 0, len(args)
    while i < n:
        token = args[i]
        i += 1
        if token == "--":
            parsed.end = i - 1
            parsed.positionals.extend(args[i:])
            positions.extend(range(i, n))
            break
        if token == "-" or not token.startswith("-"):
            parsed.positionals.append(token)
            positions.append(i - 1)
            continue
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            name = canonical_long(program, name, spec)
            if not eq and name in spec.long_args:
                if i >= n:
                    raise CommandRefused(RefusalKind.FORBIDDEN, f"{program} {name} needs a value.")
                value, i = args[i], i + 1
                parsed.options.append((name, value))
            else:
                if eq and spec.strict and name not in spec.long_args and name not in spec.optional_args:
                    raise CommandRefused(RefusalKind.FORBIDDEN, f"{program} {name} takes no value.")
                parsed.options.append((name, value if eq else None))
            continue
        for j in range(1, len(token)):
            option = "-" + token[j]
            if option in spec.forbidden:
                raise refuse_option(program, option, spec.forbidden[option])
            if short_known is not None and token[j] not in short_known:
                raise _unknown(program, option)
            if token[j] in spec.short_args:
                value = token[j + 1 :]
                if not value:
                    if i >= n:
                        raise CommandRefused(RefusalKind.FORBIDDEN, f"{program} {option} needs a value.")
                    value, i = args[i], i + 1
                parsed.options.append((option, value))
                break
            parsed.options.append((option, None))
    return parsed
