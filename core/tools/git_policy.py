"""What ``git ...`` from the model may run: subcommands, options, transports.

- Global options: only a few harmless ones (``--no-pager``, pathspec modes); ``-c``,
  ``--git-dir``, ``--work-tree``, ``-C``, ``--exec-path``, ``--config-env`` are refused
  (they change which repository or config git uses, or where it finds programs).
- Subcommands: only git's builtins (:data:`core.gitutil.BUILTINS`); any other name
  would be an alias (``!cmd``) or a ``git-*`` program on PATH. ``help`` and ``--help``
  (a man viewer), network subcommands and transports (``ext::``, ``ssh://``,
  ``archive --remote``, ``hook run``) are refused whatever the approval.
- ``git ls-files`` and ``git grep`` are allowlisted with an explicit list of options
  (:mod:`core.tools.program_options`); git's read-only subcommands
  (:data:`core.tools.program_rules.GIT_READ_ONLY`; ``branch`` only to list) need
  approval; every other subcommand (``commit``, ``checkout``, ``stash``...) is refused:
  this tool changes nothing.
- Diff-producing subcommands get ``--no-ext-diff --no-textconv``; every git runs
  with :func:`core.gitutil.git_env` (no repository-named program).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Protocol

from core.gitutil import BUILTINS, GIT_HARDENING
from core.tools.command_syntax import CommandRefused, ParsedArgs, RefusalKind, parse_options, refuse_option
from core.tools.program_options import GIT_GREP, GIT_GREP_LISTING, GIT_LS_FILES, RUNS, WRITES
from core.tools.program_rules import GIT_READ_ONLY, RUN_ELSEWHERE, git_refusal
from core.secrets import SEARCH_EXCLUDE_GLOBS, SECRET_DIRS

SAFE_GLOBALS = frozenset({"--no-pager", "-P", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
                          "--literal-pathspecs", "--no-optional-locks", "--no-replace-objects"})
ANY_FORBIDDEN = {
    "--output": WRITES, "--output-directory": WRITES, "--exec": RUNS, "--upload-pack": RUNS, "--receive-pack": RUNS,
    "--open-files-in-pager": RUNS, "--textconv": RUNS, "--ext-diff": RUNS, "--config-env": "changes git's configuration",
    "--exec-path": RUNS, "--remote": "talks to another machine", "--recurse-submodules":
    "runs git in submodules, whose configuration is not checked", "--tool": RUNS, "--extcmd": RUNS,
    "--gui": RUNS, "--run": RUNS, "--edit-todo": RUNS, "--interactive": "opens an editor or asks questions",
}
_SHORT_FORBIDDEN = {"-o": WRITES, "-x": RUNS, "-O": RUNS}
_SHORT_FORBIDDEN_IN = {"-o": frozenset({"format-patch"}), "-x": frozenset({"rebase", "difftool"}),
                       "-O": frozenset({"grep", "diff", "log", "show"})}
DIFF_FAMILY = frozenset({"diff", "log", "show", "whatchanged", "diff-tree", "diff-index", "diff-files",
                         "format-patch", "range-diff", "blame", "annotate"})
NEVER_SUBCOMMANDS = {
    "hook": "it runs the repository's hooks",
    "maintenance": "it registers background jobs with the system scheduler",
    "archive": "",  # only refused with --remote/--exec (see ANY_FORBIDDEN); kept here for the docs
    "am": "it runs mail-patch hooks and an editor",
    "notes": "",
}
_TRANSPORT = re.compile(r"(?:^|=)(?:[A-Za-z][A-Za-z0-9+.-]*::|[A-Za-z][A-Za-z0-9+.-]*://)")

SECRET_EXCLUDES = (
    *(f":(exclude,glob)**/{g}" for g in SEARCH_EXCLUDE_GLOBS),
    *(f":(exclude,glob)**/{d}/**" for d in sorted(SECRET_DIRS)),
)
SOURCES_HINT = "Use git ls-files or git grep -l to find files."


class Stage(Protocol):
    """What the command policy's stage offers git planning."""

    root: Path

    def path(self, raw: str, *, reads: bool = False) -> None: ...
    def ask(self, key: str, reason: str) -> None: ...
    def every_word(self, args: list[str]) -> None: ...
    def content_search(self) -> None: ...


def _forbidden(reason: str) -> CommandRefused:
    return CommandRefused(RefusalKind.FORBIDDEN, reason)


def pathspec_path(spec: str) -> str:
    """The path part of a git pathspec with magic (``:(exclude)x``, ``:!x``, ``:/x``)."""
    if spec.startswith(":("):
        close = spec.find(")")
        return spec[close + 1 :] if close != -1 else spec
    if spec.startswith(":"):
        rest = spec[1:].lstrip("/!^")
        return rest[1:] if rest.startswith(":") else rest
    return spec


def _operands(parsed: ParsedArgs, pattern_options: tuple[str, ...]) -> list[str]:
    if parsed.has(*pattern_options):
        return parsed.positionals
    return parsed.positionals[1:]


def _grep_without_secrets(rest: list[str], parsed: ParsedArgs, operands: list[str], root: Path) -> list[str]:
    """Add pathspecs excluding secret files, so git grep cannot probe a tracked .env."""
    if parsed.end < len(rest):
        return [*rest, *SECRET_EXCLUDES]
    # Without "--", git takes revisions first, then paths (each must be unambiguous).
    exists = [os.path.lexists(root / pathspec_path(op)) for op in operands]
    first_path = exists.index(True) if True in exists else len(operands)
    if not all(exists[first_path:]):
        raise _forbidden("git grep: put '--' before the paths to search (git cannot tell paths from revisions "
                         "here), e.g. git grep -n PATTERN -- src")
    drop = set(parsed.positions[len(parsed.positions) - len(operands):])
    kept = [arg for k, arg in enumerate(rest) if k not in drop]
    return [*kept, *operands[:first_path], "--", *operands[first_path:], *SECRET_EXCLUDES]


PATHSPEC_FAMILY = frozenset({"log", "show", "diff", "whatchanged", "diff-tree", "diff-index", "diff-files",
                             "format-patch", "shortlog"})


def without_secret_paths(rest: list[str], root: Path) -> list[str]:
    """``rest`` with pathspecs that leave secret files out (``git log -p`` must not show a tracked .env).

    Without ``--``, the trailing arguments that name existing paths are taken as the paths.
    """
    if "--no-index" in rest:
        return rest
    if "--" in rest:
        cut = rest.index("--")
        return [*rest[:cut], "--", *(rest[cut + 1 :] or ["."]), *SECRET_EXCLUDES]
    cut = len(rest)
    while cut > 0 and not rest[cut - 1].startswith("-") and os.path.lexists(root / pathspec_path(rest[cut - 1])):
        cut -= 1
    return [*rest[:cut], "--", *(rest[cut:] or ["."]), *SECRET_EXCLUDES]


def _check_help_and_transports(args: list[str], *, transports: bool) -> None:
    for token in args:
        name = token.partition("=")[0]
        if name.startswith("--") and len(name) > 3 and ("--help".startswith(name) or name.startswith("--help")):
            raise _forbidden("git --help is not run here: it opens a manual viewer or browser that the repository's "
                             "configuration can choose. The allowed git commands are git ls-files and git grep.")
        if transports and _TRANSPORT.search(token) and not token.startswith(("--format", "--pretty")):
            raise _forbidden(f"git argument {token[:60]!r} names a transport or URL; git never talks to other "
                             f"machines here, whatever the approval mode. {SOURCES_HINT}")


def _check_any_forbidden(sub: str, rest: list[str]) -> None:
    for token in rest:
        if token == "--":
            break
        name = token.partition("=")[0]
        if name.startswith("--"):
            for refused, why in ANY_FORBIDDEN.items():
                if len(name) > 3 and refused.startswith(name) or name == refused:
                    raise refuse_option(f"git {sub}", refused, why)
        elif name.startswith("-") and len(name) > 1:
            for short, why in _SHORT_FORBIDDEN.items():
                if short[1] in name[1:] and sub in _SHORT_FORBIDDEN_IN[short]:
                    raise refuse_option(f"git {sub}", short, why)


def plan_git(args: list[str], stage: Stage) -> list[str]:
    """Check ``git ARGS`` and return the argv to run (hardening options added).

    Raises:
        CommandRefused: For anything git must never do here.
    """
    i = 0
    while i < len(args) and args[i].startswith("-"):
        token = args[i]
        if token in SAFE_GLOBALS:
            i += 1
        elif token == "--version":
            return ["git", *GIT_HARDENING, "version"]
        else:
            raise _forbidden(f"git {token} is not allowed: options before the subcommand can change git's "
                             "configuration or repository, or run programs. Run git from the project root "
                             "and leave it out.")
    if i == len(args):
        raise _forbidden("git needs a subcommand; the allowed ones are: git ls-files, git grep -l.")
    sub, rest = args[i], args[i + 1 :]
    _check_help_and_transports([sub, *rest], transports=sub not in ("grep", "ls-files"))
    refusal = git_refusal(sub)
    if refusal:
        raise _forbidden(refusal)
    if sub in NEVER_SUBCOMMANDS and NEVER_SUBCOMMANDS[sub]:
        raise _forbidden(f"git {sub} is never run here, whatever the approval mode: {NEVER_SUBCOMMANDS[sub]}. "
                         f"{SOURCES_HINT}")
    if sub not in BUILTINS:
        raise _forbidden(f"git {sub[:40]} is not one of git's own subcommands; it would run an alias or a git-* "
                         f"program, which is never done here. {SOURCES_HINT}")
    if sub not in GIT_READ_ONLY and sub not in ("ls-files", "grep"):
        raise _forbidden(f"git {sub} is not run by this read-only tool, whatever the approval mode: it can change "
                         f"the repository or the files. The git subcommands it runs: ls-files, grep, and with "
                         f"approval {', '.join(sorted(GIT_READ_ONLY))}. {RUN_ELSEWHERE}")
    if sub == "branch":
        _only_listing_branches(rest)
    if sub == "ls-files":
        parsed = parse_options("git ls-files", rest, GIT_LS_FILES)
        for value in parsed.values("-X", "--exclude-from", "--exclude-per-directory"):
            stage.path(value, reads=True)
        for spec in parsed.positionals:
            stage.path(pathspec_path(spec))
    elif sub == "grep":
        rest = _plan_grep(rest, stage)
    else:
        _check_any_forbidden(sub, rest)
        stage.every_word(rest)
        if sub in PATHSPEC_FAMILY:
            rest = without_secret_paths(rest, stage.root)
        if sub in DIFF_FAMILY:
            # blame.ignoreRevsFile is a list the config cannot reset; an empty option value does.
            blame = sub in ("blame", "annotate")
            rest = ["--no-textconv", "--ignore-revs-file=", *rest] if blame else ["--no-ext-diff", "--no-textconv", *rest]
        stage.ask(f"git {sub}", f"git {sub} is not one of the read-only file-finding commands (git ls-files, "
                  "git grep).")
    return ["git", *GIT_HARDENING, *args[:i], sub, *rest]


_BRANCH_LISTING = frozenset({"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current", "-l",
                             "--list", "--no-color", "--no-column", "--contains", "--no-contains", "--merged",
                             "--no-merged", "--points-at", "-i", "--ignore-case"})


def _only_listing_branches(rest: list[str]) -> None:
    """``git branch`` may list branches, never create, rename or delete them."""
    listing = any(arg in ("-l", "--list") for arg in rest)
    takes_value = ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format")
    for k, arg in enumerate(rest):
        name = arg.partition("=")[0]
        if name.startswith("-") and name not in _BRANCH_LISTING and name not in takes_value:
            raise refuse_option("git branch", name, "changes branches (only listing them is allowed here)")
        if not name.startswith("-") and not listing and (k == 0 or rest[k - 1] not in takes_value):
            raise _forbidden("git branch NAME creates a branch, which this read-only tool never does; "
                             "git branch --list PATTERN lists them.")


def _plan_grep(rest: list[str], stage: Stage) -> list[str]:
    parsed = parse_options("git grep", rest, GIT_GREP)
    for value in parsed.values("-f"):
        stage.path(value, reads=True)
    operands = _operands(parsed, ("-e", "-f"))
    for spec in operands:
        stage.path(pathspec_path(spec), reads=True)
    stage.every_word(operands)
    rest = _grep_without_secrets(rest, parsed, operands, stage.root)
    if not parsed.has(*GIT_GREP_LISTING):
        for option in ("-h", "--heading", "-O"):
            if parsed.has(option):
                raise refuse_option("git grep", option, "prints lines without their file names, so lines from "
                                    "secret files could not be withheld")
    stage.content_search()
    if parsed.has("--no-index", "--no-exclude-standard", "--untracked"):
        stage.ask("git grep:ignored", "this git grep also searches files git does not track or ignores.")
    return ["--no-textconv", *rest]
