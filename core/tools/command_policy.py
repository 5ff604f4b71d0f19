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
- Programs not on the allowlist (:data:`core.tools.program_rules.ALLOWED_PROGRAMS`)
  are ``FORBIDDEN`` too: this tool finds and reads files, nothing else, so no approval
  or ``--yes`` runs ``touch``, ``capsh``, ``vim.basic`` or a versioned interpreter.
- What is allowlisted but not plain file finding (git's read-only subcommands,
  a filter after ``|`` given files of its own) is *planned* with :class:`Approval`
  entries: the caller asks the user (or applies the approval mode) before running it.

The allowlist: ``find``, ``ls``, ``git ls-files``, ``git grep``, ``grep``, ``rg``,
``fd``/``fdfind``, the viewers ``cat``, ``head``, ``tail``, ``wc``, ``nl``, ``file``,
``stat``; after a ``|`` also the filters ``head``, ``tail``, ``sort``, ``uniq``,
``wc`` and ``grep``; with approval, git's read-only subcommands
(:data:`core.tools.program_rules.GIT_READ_ONLY`). Each program's options are an
allowlist too (:mod:`core.tools.program_options`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.tools.command_syntax import (
    CommandRefused,
    ParsedArgs,
    RefusalKind,
    parse_options,
    refuse_option,
    split_pipeline,
)
from core.tools.env_dirs import find_pruning, grep_excludes, present_env_dirs
from core.tools.git_policy import plan_git
from core.tools.paths_guard import PathRefused, resolve_in_root
from core.tools.program_options import FD, FILTERS, GREP, GREP_LISTING, LS, RG, RG_LISTING, VIEWERS
from core.tools.program_rules import (  # noqa: F401 - LAUNCHERS, SHELLS re-exported
    LAUNCHERS,
    SHELLS,
    allowlist_refusal,
    git_refusal,
    program_refusal,
)
from core.secrets import SEARCH_EXCLUDE_GLOBS, SECRET_DIRS, contains_private_key, is_secret_path

SOURCES = ("find", "ls", "git ls-files", "git grep", "grep -r", "rg", "fd", "cat", "head", "tail", "wc", "nl",
           "file", "stat")

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
    filter_secrets: bool = False
    """The first stage searches file contents: drop output lines from secret files before anyone sees them."""
    skipped_dirs: tuple[str, ...] = ()
    """Environment directories a ``grep -r`` leaves out (``find`` reports its own: :mod:`core.tools.env_dirs`)."""


def _forbidden(reason: str) -> CommandRefused:
    return CommandRefused(RefusalKind.FORBIDDEN, reason)


class _Stage:
    """Checks for one pipeline stage; collects what needs approval."""

    def __init__(self, root: Path, first: bool, top: Path | None = None) -> None:
        self.root = root
        self.top = top or root.resolve()
        """The resolved root, computed once per command."""
        self.first = first
        self.approvals: list[Approval] = []
        self.searches_content = False
        self.skipped_dirs: list[str] = []

    def path(self, raw: str, *, reads: bool = False) -> None:
        """Refuse a path outside the root; with ``reads``, also a secret file (by name or content)."""
        if raw == "-":
            return
        try:
            resolved = resolve_in_root(raw, self.root, root_resolved=self.top)
        except PathRefused as exc:
            raise _forbidden(exc.reason) from None
        if reads:
            inside = resolved.relative_to(self.top)
            if ".git" in inside.parts or ".git" in Path(raw).parts:
                raise _forbidden(f"{raw!r} is refused: it is git's internal data, which can hold credentials. "
                                 "Search the work tree (grep -r skips .git) or use git grep.")
            why = is_secret_path(raw) or is_secret_path(inside)
            if not why and contains_private_key(resolved):
                why = f"{Path(raw).name} contains a private key"
            if why:
                raise _forbidden(f"{raw!r} is refused: {why}. Commands never search or read secret files.")

    def ask(self, key: str, reason: str) -> None:
        self.approvals.append(Approval(key, reason))

    def every_word(self, args: list[str]) -> None:
        _check_every_word(args, self)

    def content_search(self) -> None:
        """This stage prints lines of files: its output is filtered of secret files (first stage only)."""
        if self.first:
            self.searches_content = True


# ---------------------------------------------------------------- find, ls
_FIND_FORBIDDEN = {
    "-exec": _RUNS, "-execdir": _RUNS, "-ok": _RUNS, "-okdir": _RUNS, "-delete": "deletes files",
    "-fprint": _WRITES, "-fprint0": _WRITES, "-fprintf": _WRITES, "-fls": _WRITES,
    "-files0-from": "reads its starting points from a file", "-L": _SYMLINK, "-follow": _SYMLINK,
}
_FIND_FILE_REFS = frozenset({"-newer", "-anewer", "-cnewer", "-samefile"})
# find's primaries (GNU findutils 4.9 find(1)), by how many arguments they take.
_FIND_UNARY = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -maxdepth -mindepth -mtime -mmin "
    "-atime -amin -ctime -cmin -used -size -perm -user -group -uid -gid -links -inum -lname -ilname -regextype "
    "-printf -fstype -context".split())
_FIND_NULLARY = frozenset(
    "-print -print0 -prune -not -a -and -o -or -true -false -empty -nouser -nogroup -depth -d -mount -xdev "
    "-noleaf -readable -writable -executable -quit -ls -daystart -ignore_readdir_race -noignore_readdir_race "
    "-warn -nowarn -help --help -version --version ( ) ! ,".split())


def _find(args: list[str], stage: _Stage) -> list[str]:
    for token in args:
        if token in _FIND_FORBIDDEN:
            raise refuse_option("find", token, _FIND_FORBIDDEN[token])
    i = 0
    while i < len(args) and (args[i] in ("-H", "-P", "-D", "--") or re.fullmatch(r"-O\d*", args[i])):
        i += 2 if args[i] == "-D" else 1
    options_end = i
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("(", ")", "!", ","):
        stage.path(args[i])
        i += 1
    starts_end = i
    while i < len(args):
        token = args[i]
        if token in _FIND_FILE_REFS or re.fullmatch(r"-newer[aBcm][aBcmt]", token):
            if i + 1 >= len(args):
                raise _forbidden(f"find {token} needs a file name.")
            if not token.endswith("t"):
                stage.path(args[i + 1])
            i += 2
        elif token in _FIND_UNARY:
            i += 2
        elif token in _FIND_NULLARY:
            i += 1
        else:
            raise _forbidden(f"find {token[:60]} is not a find primary this tool knows to be safe for a read-only "
                             "command; use -name, -path, -type, -maxdepth, -newer, -size, -print...")
    pruned = find_pruning(args[options_end:starts_end], args[starts_end:]) if stage.first else None
    return ["find", *args[:options_end], *pruned] if pruned is not None else ["find", *args]


def _ls(args: list[str], stage: _Stage) -> list[str]:
    for operand in parse_options("ls", args, LS).positionals:
        stage.path(operand)
    return ["ls", *args]


def ls_listing_dir(argv: list[str]) -> str | None:
    """For ``ls DIR`` (one operand, no -d/-R), the DIR its output names are relative to."""
    if not argv or Path(argv[0]).name != "ls":
        return None
    parsed = parse_options("ls", argv[1:], LS)
    flags = {opt for opt, _ in parsed.options}
    if len(parsed.positionals) != 1 or flags & {"-d", "-R", "--directory", "--recursive"}:
        return None
    return parsed.positionals[0]


# ---------------------------------------------------------------- grep, rg, fd
def _operands(parsed: ParsedArgs, pattern_options: tuple[str, ...]) -> list[str]:
    """Positionals minus the leading pattern (unless the pattern came from an option)."""
    if parsed.has(*pattern_options):
        return parsed.positionals
    return parsed.positionals[1:]


def _insert(args: list[str], at: int, extra: list[str]) -> list[str]:
    return [*args[:at], *extra, *args[at:]]


def _without_dereference(args: list[str], end: int) -> list[str]:
    """``grep -R`` as ``grep -r``: the same search, without following symbolic links out of the project."""
    out = []
    for k, arg in enumerate(args):
        if k < end and arg.startswith("-") and not arg.startswith("--") and "R" in arg:
            letters = arg[1:]
            cut = next((j for j, c in enumerate(letters) if c in GREP.short_args), len(letters))
            arg = "-" + letters[:cut].replace("R", "r") + letters[cut:]
        elif k < end and arg.startswith("--") and "--dereference-recursive".startswith(arg) and len(arg) > 3:
            arg = "--recursive"
        out.append(arg)
    return out


def _names_files(*, program: str, parsed: ParsedArgs) -> None:
    """Content searches must name the file of every line printed (their output is filtered by it)."""
    for option in ("-h", "--no-filename", "--json", "--heading"):
        if parsed.has(option):
            raise refuse_option(program, option, "prints lines without their file names, so lines from secret "
                                "files could not be withheld")


def _grep(args: list[str], stage: _Stage) -> list[str]:
    parsed = parse_options("grep", args, GREP)
    args = _without_dereference(args, parsed.end)
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
    if not parsed.has(*GREP_LISTING):
        _names_files(program="grep", parsed=parsed)
    extra = ["--with-filename"]
    stage.content_search()
    excludes = [f"--exclude={g}" for g in SEARCH_EXCLUDE_GLOBS]
    excludes += [f"--exclude-dir={d}" for d in (".git", *sorted(SECRET_DIRS))]
    env_excludes = grep_excludes(args)
    if env_excludes and parsed.has("-r", "-R", "--recursive", "--dereference-recursive"):
        excludes += env_excludes
        stage.skipped_dirs += present_env_dirs(stage.top, files)
    return ["grep", *_insert(args, parsed.end, [*excludes, *extra])]


def _rg(program: str, args: list[str], stage: _Stage) -> list[str]:
    parsed = parse_options(program, args, RG)
    for value in parsed.values("-f", "--file", "--ignore-file"):
        stage.path(value, reads=True)
    listing_only = parsed.has("--files", "--type-list")
    paths = parsed.positionals if listing_only else _operands(parsed, ("-e", "-f", "--regexp", "--file"))
    for operand in paths:
        stage.path(operand, reads=True)
    extra = [] if listing_only else [f"--glob=!{g}" for g in (*SEARCH_EXCLUDE_GLOBS, ".git", *sorted(SECRET_DIRS))]
    if not listing_only:
        stage.content_search()
        extra += ["--with-filename", "--no-heading"]
    if not parsed.has(*RG_LISTING):
        _names_files(program=program, parsed=parsed)
    return [program, "--no-config", *_insert(args, parsed.end, extra)]


def _fd(program: str, args: list[str], stage: _Stage) -> list[str]:
    parsed = parse_options(program, args, FD)
    for value in parsed.values("--base-directory", "--search-path"):
        stage.path(value)
    for value in parsed.values("--ignore-file"):
        stage.path(value, reads=True)
    for operand in parsed.positionals[1:]:
        stage.path(operand)
    return [program, *args]


# ---------------------------------------------------------------- viewers, filters, others
def _viewer(program: str, args: list[str], stage: _Stage) -> list[str]:
    """cat, head, tail, wc, nl, file, stat, sort, uniq: read-only on files inside the project."""
    parsed = parse_options(program, args, VIEWERS[program])
    if program == "uniq" and len(parsed.positionals) > 1:
        raise refuse_option("uniq", "OUTPUT", "writes its result into the second file named")
    for operand in parsed.positionals:
        stage.path(operand, reads=True)
    if not stage.first and parsed.positionals:
        stage.ask(f"{program}:files", f"{program} after '|' should filter the previous command's output; "
                  "with file arguments it reads file contents.")
    elif not stage.first and program not in FILTERS:
        stage.ask(program, f"{program} after '|' is not one of the filters (head, tail, sort, uniq, wc, grep).")
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


def _not_allowed(program: str, args: list[str], stage: _Stage) -> CommandRefused:
    """The refusal of a program off the allowlist (naming a secret file first, when an argument holds one)."""
    _check_every_word(args, stage)
    return _forbidden(allowlist_refusal(program) or f"{program} is not allowed here.")


def _plan_stage(words: list[str], stage: _Stage) -> list[str]:
    program, args = words[0], words[1:]
    if not program or "/" in program:
        raise _forbidden(f"Program {program!r} is given as a path; name the program only (it is looked up on PATH).")
    refusal = program_refusal(program)
    if refusal:
        raise _forbidden(refusal)
    if allowlist_refusal(program):
        raise _not_allowed(program, args, stage)
    if program == "find":
        return _find(args, stage)
    if program == "ls":
        return _ls(args, stage)
    if program == "grep":
        return _grep(args, stage)
    if program == "git":
        return plan_git(args, stage)
    if program in ("rg", "fd", "fdfind"):
        return _rg(program, args, stage) if program == "rg" else _fd(program, args, stage)
    if program in VIEWERS:
        return _viewer(program, args, stage)
    raise _not_allowed(program, args, stage)


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
    filter_secrets = False
    skipped: list[str] = []
    top = project_root.resolve()
    for index, words in enumerate(split_pipeline(command)):
        stage = _Stage(project_root, first=index == 0, top=top)
        stages.append(tuple(_plan_stage(words, stage)))
        approvals.extend(stage.approvals)
        filter_secrets = filter_secrets or stage.searches_content
        skipped += stage.skipped_dirs
    return CommandPlan(stages=tuple(stages), approvals=tuple(approvals), filter_secrets=filter_secrets,
                       skipped_dirs=tuple(skipped))
