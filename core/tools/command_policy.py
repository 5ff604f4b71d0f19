"""What a command line from the model may run: the program allowlist and its checks.

Nothing here runs anything. :func:`plan_command` turns a command line into the
argv of each pipeline stage, or raises :class:`CommandRefused` with a reason
written for the model. Three kinds of refusal:

- ``SYNTAX``: shell syntax (chaining, substitution, redirection, subshells,
  line breaks, ``$``, backticks). There is no shell, so these never work; they are
  refused without asking anyone.
- ``FORBIDDEN``: things no approval can unlock: shells and program launchers
  (``bash -c``, ``env``, ``xargs``...), network clients, interpreters and other
  programs that run code (``curl``, ``python3``, ``awk``...; see
  :mod:`core.tools.program_rules`), options that run programs or write files
  (``find -exec``, ``rg --pre``, ``sort -o``, ``git -c``...), symlink following,
  and paths outside the project root or naming secret files, also when they sit
  inside an argument (``-d@.env``, ``name=<.env``, ``if=.env``, ``HEAD:.env``).
- Anything else that is not a read-only file-finding command is *planned* with
  :class:`Approval` entries: the caller asks the user (or applies the approval
  mode) before running it.

The allowlist: ``find``, ``ls``, ``git ls-files``, ``git grep -l``, ``grep -l``,
``rg --files``/``rg -l``, ``fd``/``fdfind``; after a ``|`` also the filters
``head``, ``tail``, ``sort``, ``uniq``, ``wc`` and ``grep``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from core.tools.command_syntax import (
    CommandRefused,
    OptionSpec,
    ParsedArgs,
    RefusalKind,
    parse_options,
    refuse_option,
    split_pipeline,
)
from core.tools.paths_guard import PathRefused, resolve_in_root
from core.tools.program_rules import LAUNCHERS, SHELLS, git_refusal, program_refusal  # noqa: F401 - re-exported
from core.tools.secrets import SEARCH_EXCLUDE_GLOBS, SECRET_DIRS, is_secret_path

SOURCES = ("find", "ls", "git ls-files", "git grep -l", "grep -l", "rg --files", "rg -l", "fd")
FILTERS = frozenset({"head", "tail", "sort", "uniq", "wc"})

_SYMLINK = "follows symbolic links, which may lead outside the project"
_RUNS = "runs other programs"
_WRITES = "writes files"


@dataclass(frozen=True)
class Approval:
    """Something in a command that needs the user's approval before it runs."""

    key: str
    """What "allow for this session" remembers (usually the program name)."""
    reason: str


@dataclass(frozen=True)
class CommandPlan:
    """The argv of each pipeline stage, and what needs approval before running them."""

    stages: tuple[tuple[str, ...], ...]
    approvals: tuple[Approval, ...] = ()


def _forbidden(reason: str) -> CommandRefused:
    return CommandRefused(RefusalKind.FORBIDDEN, reason)


class _Stage:
    """Checks for one pipeline stage; collects what needs approval."""

    def __init__(self, root: Path, first: bool) -> None:
        self.root = root
        self.first = first
        self.approvals: list[Approval] = []

    def path(self, raw: str, *, reads: bool = False) -> None:
        """Refuse a path outside the root; with ``reads``, also a secret file."""
        if raw == "-":
            return
        try:
            resolved = resolve_in_root(raw, self.root)
        except PathRefused as exc:
            raise _forbidden(exc.reason) from None
        if reads:
            why = is_secret_path(raw) or is_secret_path(resolved.relative_to(self.root.resolve()))
            if why:
                raise _forbidden(f"{raw!r} is refused: {why}. Commands never search or read secret files.")

    def ask(self, key: str, reason: str) -> None:
        self.approvals.append(Approval(key, reason))


# ---------------------------------------------------------------- find, ls
_FIND_FORBIDDEN = {
    "-exec": _RUNS, "-execdir": _RUNS, "-ok": _RUNS, "-okdir": _RUNS, "-delete": "deletes files",
    "-fprint": _WRITES, "-fprint0": _WRITES, "-fprintf": _WRITES, "-fls": _WRITES,
    "-files0-from": "reads its starting points from a file", "-L": _SYMLINK, "-follow": _SYMLINK,
}
_FIND_FILE_REFS = frozenset({"-newer", "-anewer", "-cnewer", "-samefile"})


def _find(args: list[str], stage: _Stage) -> list[str]:
    for token in args:
        if token in _FIND_FORBIDDEN:
            raise refuse_option("find", token, _FIND_FORBIDDEN[token])
    i = 0
    while i < len(args) and (args[i] in ("-H", "-P", "-D", "--") or re.fullmatch(r"-O\d*", args[i])):
        i += 2 if args[i] == "-D" else 1
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("(", ")", "!", ","):
        stage.path(args[i])
        i += 1
    for k in range(i, len(args) - 1):
        if args[k] in _FIND_FILE_REFS or re.fullmatch(r"-newer[aBcm][aBcm]", args[k]):
            stage.path(args[k + 1])
    return ["find", *args]


_LS = OptionSpec(
    short_args="ITw",
    long_args=frozenset({"--block-size", "--format", "--hide", "--ignore", "--indicator-style", "--quoting-style",
                         "--sort", "--tabsize", "--time", "--time-style", "--width"}),
    forbidden={"-L": _SYMLINK, "--dereference": _SYMLINK},
)


def _ls(args: list[str], stage: _Stage) -> list[str]:
    for operand in parse_options("ls", args, _LS).positionals:
        stage.path(operand)
    return ["ls", *args]


def ls_listing_dir(argv: list[str]) -> str | None:
    """For ``ls DIR`` (one operand, no -d/-R), the DIR its output names are relative to."""
    if not argv or Path(argv[0]).name != "ls":
        return None
    parsed = parse_options("ls", argv[1:], _LS)
    flags = {opt for opt, _ in parsed.options}
    if len(parsed.positionals) != 1 or flags & {"-d", "-R", "--directory", "--recursive"}:
        return None
    return parsed.positionals[0]


# ---------------------------------------------------------------- grep, rg, fd
_GREP = OptionSpec(
    short_args="efmABCdD",
    long_args=frozenset({"--regexp", "--file", "--max-count", "--after-context", "--before-context", "--context",
                         "--directories", "--devices", "--include", "--exclude", "--exclude-from", "--exclude-dir",
                         "--label", "--binary-files", "--group-separator"}),
    forbidden={"-R": _SYMLINK, "--dereference-recursive": _SYMLINK},
)
_GREP_LISTING = ("-l", "-L", "--files-with-matches", "--files-without-match")


def _lists_files(parsed: ParsedArgs, flags: tuple[str, ...]) -> bool:
    return any(
        opt in flags or (len(opt) > 7 and any(f.startswith(opt) for f in flags if f.startswith("--")))
        for opt, _ in parsed.options
    )


def _operands(parsed: ParsedArgs, pattern_options: tuple[str, ...]) -> list[str]:
    """Positionals minus the leading pattern (unless the pattern came from an option)."""
    if parsed.has(*pattern_options):
        return parsed.positionals
    return parsed.positionals[1:]


def _insert(args: list[str], at: int, extra: list[str]) -> list[str]:
    return [*args[:at], *extra, *args[at:]]


def _grep(args: list[str], stage: _Stage) -> list[str]:
    parsed = parse_options("grep", args, _GREP)
    for value in parsed.values("-f", "--file", "--exclude-from"):
        stage.path(value, reads=True)
    files = _operands(parsed, ("-e", "-f", "--regexp", "--file"))
    for operand in files:
        stage.path(operand, reads=True)
    if not stage.first:
        if files:
            stage.ask("grep:files", "grep after '|' should filter the previous command's output; "
                      "with file arguments it reads file contents.")
        return ["grep", *args]
    if not _lists_files(parsed, _GREP_LISTING):
        stage.ask("grep:content", "grep without -l/-L prints matching lines, i.e. file contents; "
                  "add -l to list the matching files instead.")
    excludes = [f"--exclude={g}" for g in SEARCH_EXCLUDE_GLOBS]
    excludes += [f"--exclude-dir={d}" for d in (".git", *sorted(SECRET_DIRS))]
    return ["grep", *_insert(args, parsed.end, excludes)]


_RG = OptionSpec(
    short_args="efgtTmABCjMrdE",
    long_args=frozenset({"--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--type-add",
                         "--type-clear", "--max-count", "--after-context", "--before-context", "--context", "--threads",
                         "--max-columns", "--encoding", "--replace", "--max-depth", "--ignore-file",
                         "--path-separator", "--sort", "--sortr", "--color", "--colors", "--context-separator",
                         "--field-match-separator", "--max-filesize", "--dfa-size-limit", "--regex-size-limit",
                         "--engine", "--hyperlink-format"}),
    forbidden={"--pre": _RUNS, "--pre-glob": _RUNS, "-z": "runs decompression programs", "--search-zip":
               "runs decompression programs", "--hostname-bin": _RUNS, "-L": _SYMLINK, "--follow": _SYMLINK},
)
_RG_LISTING = ("--files", "-l", "--files-with-matches", "--files-without-match")


def _rg(program: str, args: list[str], stage: _Stage) -> list[str]:
    parsed = parse_options(program, args, _RG)
    for value in parsed.values("-f", "--file", "--ignore-file"):
        stage.path(value, reads=True)
    listing_only = parsed.has("--files")
    paths = parsed.positionals if listing_only else _operands(parsed, ("-e", "-f", "--regexp", "--file"))
    for operand in paths:
        stage.path(operand, reads=True)
    if not _lists_files(parsed, _RG_LISTING):
        stage.ask(f"{program}:content", f"{program} without --files or -l prints matching lines, i.e. file "
                  "contents; add -l to list the matching files instead.")
    extra = [] if listing_only else [f"--glob=!{g}" for g in (*SEARCH_EXCLUDE_GLOBS, *sorted(SECRET_DIRS))]
    return [program, "--no-config", *_insert(args, parsed.end, extra)]


_FD = OptionSpec(
    short_args="etEdcjSo",
    long_args=frozenset({"--extension", "--type", "--exclude", "--max-depth", "--min-depth", "--exact-depth", "--size",
                         "--changed-within", "--changed-before", "--owner", "--color", "--threads", "--max-results",
                         "--base-directory", "--search-path", "--ignore-file", "--path-separator", "--format",
                         "--batch-size", "--max-buffer-time", "--and"}),
    forbidden={"-x": _RUNS, "--exec": _RUNS, "-X": _RUNS, "--exec-batch": _RUNS, "-L": _SYMLINK, "--follow": _SYMLINK},
)


def _fd(program: str, args: list[str], stage: _Stage) -> list[str]:
    parsed = parse_options(program, args, _FD)
    for value in parsed.values("--base-directory", "--search-path", "--ignore-file"):
        stage.path(value)
    for operand in parsed.positionals[1:]:
        stage.path(operand)
    return [program, *args]


# ---------------------------------------------------------------- git
_GIT_SAFE_GLOBALS = frozenset({"--no-pager", "-P", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
                               "--no-optional-locks", "--no-replace-objects"})
# Keep a hostile repository config from running programs (fsmonitor) and keep names unquoted.
from core.gitutil import GIT_HARDENING  # noqa: E402 - kept beside the git rules it serves
_GIT_LS_FILES = OptionSpec(
    short_args="xX",
    long_args=frozenset({"--exclude", "--exclude-from", "--exclude-per-directory", "--with-tree", "--format"}),
)
_GIT_GREP = OptionSpec(
    short_args="efABCm",
    long_args=frozenset({"--max-depth", "--threads", "--context", "--after-context", "--before-context",
                         "--max-count"}),
    forbidden={"-O": _RUNS, "--open-files-in-pager": _RUNS, "--textconv": "runs conversion programs from git config",
               "--ext-grep": _RUNS},
)
_GIT_GREP_LISTING = ("-l", "-L", "--name-only", "--files-with-matches", "--files-without-match")
_GIT_ANY_FORBIDDEN = {
    "--output": _WRITES, "--output-directory": _WRITES, "-o": _WRITES, "--exec": _RUNS, "--upload-pack": _RUNS,
    "--receive-pack": _RUNS, "--open-files-in-pager": _RUNS, "--textconv": _RUNS, "--ext-diff": _RUNS,
    "--config-env": "changes git's configuration", "--exec-path": _RUNS,
}


_GIT_SECRET_EXCLUDES = (
    *(f":(exclude,glob)**/{g}" for g in SEARCH_EXCLUDE_GLOBS),
    *(f":(exclude,glob)**/{d}/**" for d in sorted(SECRET_DIRS)),
)


def _pathspec_path(spec: str) -> str:
    """The path part of a git pathspec with magic (``:(exclude)x``, ``:!x``, ``:/x``)."""
    if spec.startswith(":("):
        close = spec.find(")")
        return spec[close + 1 :] if close != -1 else spec
    if spec.startswith(":"):
        rest = spec[1:].lstrip("/!^")
        return rest[1:] if rest.startswith(":") else rest
    return spec


def _git_grep_without_secrets(rest: list[str], parsed: ParsedArgs, operands: list[str], root: Path) -> list[str]:
    """Add pathspecs excluding secret files, so git grep -l cannot probe a tracked .env."""
    if parsed.end < len(rest):
        return [*rest, *_GIT_SECRET_EXCLUDES]
    # Without "--", git takes revisions first, then paths (each must be unambiguous).
    exists = [os.path.lexists(root / _pathspec_path(op)) for op in operands]
    first_path = exists.index(True) if True in exists else len(operands)
    if not all(exists[first_path:]):
        return rest  # git will refuse the ambiguity itself; explicit secret paths were refused already
    drop = set(parsed.positions[len(parsed.positions) - len(operands):])
    kept = [arg for k, arg in enumerate(rest) if k not in drop]
    return [*kept, *operands[:first_path], "--", *operands[first_path:], *_GIT_SECRET_EXCLUDES]


def _git(args: list[str], stage: _Stage) -> list[str]:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        token = args[i]
        if token == "-C" and i + 1 < len(args):
            stage.path(args[i + 1])
            i += 2
        elif token in _GIT_SAFE_GLOBALS:
            i += 1
        else:
            raise _forbidden(f"git {token} is not allowed: options before the subcommand can change git's "
                             "configuration or repository, or run programs. Leave it out.")
    if i == len(args):
        raise _forbidden("git needs a subcommand; the allowed ones are: git ls-files, git grep -l.")
    sub, rest = args[i], args[i + 1 :]
    if sub == "ls-files":
        parsed = parse_options("git ls-files", rest, _GIT_LS_FILES)
        for value in parsed.values("-X", "--exclude-from"):
            stage.path(value, reads=True)
        for spec in parsed.positionals:
            stage.path(_pathspec_path(spec))
    elif sub == "grep":
        parsed = parse_options("git grep", rest, _GIT_GREP)
        for value in parsed.values("-f"):
            stage.path(value, reads=True)
        operands = _operands(parsed, ("-e", "-f"))
        for spec in operands:
            stage.path(_pathspec_path(spec), reads=True)
        rest = _git_grep_without_secrets(rest, parsed, operands, stage.root)
        if not _lists_files(parsed, _GIT_GREP_LISTING):
            stage.ask("git grep:content", "git grep without -l prints matching lines, i.e. file contents; "
                      "add -l to list the matching files instead.")
        if parsed.has("--no-index", "--no-exclude-standard"):
            stage.ask("git grep:ignored", "this git grep also searches files git ignores, such as .env.")
    else:
        refusal = git_refusal(sub)
        if refusal:
            raise _forbidden(refusal)
        for token in rest:
            name = token.partition("=")[0]
            for refused, why in _GIT_ANY_FORBIDDEN.items():
                if (len(name) > 2 and refused.startswith(name) and name.startswith("--")) or (
                    not refused.startswith("--") and name.startswith(refused)
                ):
                    raise refuse_option(f"git {sub}", refused, why)
        _check_every_word(rest, stage)
        stage.ask(f"git {sub}", f"git {sub} is not one of the read-only file-finding commands ({', '.join(SOURCES)}).")
    return ["git", *GIT_HARDENING, *args[: i + 1], *rest]


# ---------------------------------------------------------------- filters, others
_FILTER_OPTIONS = {
    "head": OptionSpec(short_args="nc", long_args=frozenset({"--lines", "--bytes"})),
    "tail": OptionSpec(
        short_args="ncs",
        long_args=frozenset({"--lines", "--bytes", "--sleep-interval", "--pid", "--max-unchanged-stats"}),
    ),
    "sort": OptionSpec(
        short_args="ktS",
        long_args=frozenset({"--key", "--field-separator", "--buffer-size", "--parallel", "--batch-size", "--sort"}),
        forbidden={"-o": _WRITES, "--output": _WRITES, "--compress-program": _RUNS, "-T": _WRITES,
                   "--temporary-directory": _WRITES, "--files0-from": "reads a list of files",
                   "--random-source": "reads a file"},
    ),
    "uniq": OptionSpec(short_args="fsw", long_args=frozenset({"--skip-fields", "--skip-chars", "--check-chars"})),
    "wc": OptionSpec(forbidden={"--files0-from": "reads a list of files"}),
}


def _filter(program: str, args: list[str], stage: _Stage) -> list[str]:
    parsed = parse_options(program, args, _FILTER_OPTIONS[program])
    if program == "uniq" and len(parsed.positionals) > 1:
        raise refuse_option("uniq", "OUTPUT", "writes its result into the second file named")
    for operand in parsed.positionals:
        stage.path(operand, reads=True)
    if stage.first:
        stage.ask(program, f"{program} is a filter: it may follow a file-finding command after '|', "
                  "but on its own it reads file contents.")
    elif parsed.positionals:
        stage.ask(f"{program}:files", f"{program} after '|' should filter the previous command's output; "
                  "with file arguments it reads file contents.")
    return [program, *args]


_MARKER = re.compile(r"[=@<:]")
_MAX_CANDIDATES = 512
_MAX_CANDIDATE_CHARS = 32 * 1024  # bounds the lookups (one lstat per path component) on the event loop
_NAME_MAX = 255


def _attached_values(word: str) -> list[str]:
    """Where a value attached to a short option could start: ``-d@.env``, ``-xf.env``, ``-vvvvf.env``.

    The value starts after one or more option letters, so at the latest at the first
    character that is not a letter or digit. A file name component is at most 255
    bytes, so starts further back cannot name a different existing file.
    """
    stop = 2
    while stop < len(word) and word[stop - 1].isalnum():
        stop += 1
    stop = min(stop, len(word))
    return [word[k:] for k in range(max(2, stop - _NAME_MAX), stop + 1) if k < len(word)]


def path_candidates(word: str) -> set[str]:
    """Every string in one argument that a program might open as a file.

    The argument itself (unless it is an option); the value of ``--opt=value``; a
    value attached to a short option (``-d@.env``); what follows each ``=``, ``@``,
    ``<`` or ``:`` (``name=@file``, ``@file``, ``name=<file``, ``if=file``,
    ``HEAD:file``; not ``://`` in URLs), each also cut at ``;`` (``@file;type=x``).

    Raises:
        CommandRefused: When the argument holds more than 512 such places, or 32 KiB of them.
    """
    if word.startswith("--"):
        name, _, value = word.partition("=")
        starts, offset = [value], len(name) + 1
    elif word.startswith("-"):
        starts, offset = _attached_values(word), 2
    else:
        starts, offset = [word], 0
    markers = [m.start() for m in _MARKER.finditer(word, offset) if not word.startswith("//", m.start() + 1)]
    size = sum(map(len, starts)) + sum(len(word) - i - 1 for i in markers)
    if len(starts) + len(markers) > _MAX_CANDIDATES or size > _MAX_CANDIDATE_CHARS:
        raise _forbidden(f"The argument {word[:60]!r}... holds too many places where a file name could start "
                         "to check them all. Send a simpler command.")
    found: set[str] = set()
    for value in [*starts, *(word[i + 1 :] for i in markers)]:
        found.update((value, value.partition(";")[0]))
    found.discard("")
    found.discard("-")
    return found


def _check_every_word(args: list[str], stage: _Stage) -> None:
    """For programs whose arguments are not modelled: every file name an argument may hold is checked."""
    for arg in args:
        for candidate in sorted(path_candidates(arg), key=len):
            try:
                stage.path(candidate, reads=True)
            except CommandRefused as exc:
                if candidate == arg:
                    raise
                shown = arg if len(arg) <= 80 else f"{arg[:60]}...{arg[-12:]}"
                raise _forbidden(f"In the argument {shown!r}: {exc.reason}") from None


def _other(program: str, args: list[str], stage: _Stage) -> list[str]:
    _check_every_word(args, stage)
    stage.ask(program, f"{program!r} is not one of the read-only file-finding programs ({', '.join(SOURCES)}).")
    return [program, *args]


def _plan_stage(words: list[str], stage: _Stage) -> list[str]:
    program, args = words[0], words[1:]
    if not program or "/" in program:
        raise _forbidden(f"Program {program!r} is given as a path; name the program only (it is looked up on PATH).")
    refusal = program_refusal(program)
    if refusal:
        raise _forbidden(refusal)
    if program == "find":
        return _find(args, stage)
    if program == "ls":
        return _ls(args, stage)
    if program == "grep":
        return _grep(args, stage)
    if program == "git":
        return _git(args, stage)
    if program in ("rg", "fd", "fdfind"):
        return _rg(program, args, stage) if program == "rg" else _fd(program, args, stage)
    if program in FILTERS:
        return _filter(program, args, stage)
    return _other(program, args, stage)


def plan_command(command: str, project_root: Path) -> CommandPlan:
    """Check a command line and plan what would run.

    Args:
        command: The command line as the model sent it.
        project_root: The directory commands run in; no path may leave it.

    Returns:
        The argv per stage (with hardening options added for git, grep and rg) and
        the approvals needed; an empty ``approvals`` means read-only and allowed.

    Raises:
        CommandRefused: Kind ``SYNTAX`` or ``FORBIDDEN``; never asked about.
    """
    stages: list[tuple[str, ...]] = []
    approvals: list[Approval] = []
    for index, words in enumerate(split_pipeline(command)):
        stage = _Stage(project_root, first=index == 0)
        stages.append(tuple(_plan_stage(words, stage)))
        approvals.extend(stage.approvals)
    return CommandPlan(stages=tuple(stages), approvals=tuple(approvals))
