"""Running git in a repository we do not trust: the repository names no program.

A repository controls git through ``.git/config`` (and files it includes),
``.gitattributes`` and ``.git/hooks``: filters, textconv and external diff
drivers, hooks, pagers, editors, ``gpg.program``, ``core.fsmonitor``,
``core.sshCommand``, credential helpers, ``!`` aliases, ``commit.template``... all
run a program or read a file the repository chooses. Every git the app runs (the
command tool's allowlist and approved commands, our own index and status, aider's
git) gets its environment from :func:`git_env`, which:

- removes every ``GIT_*`` variable inherited from the caller (``GIT_DIR``,
  ``GIT_EXTERNAL_DIFF``, ``GIT_SSH_COMMAND``, ``GIT_CONFIG_PARAMETERS``...);
- never reads the system config (``GIT_CONFIG_NOSYSTEM``) nor system attributes;
- pins, through ``GIT_CONFIG_COUNT`` entries (command-line scope: they beat every
  config file), each fixed key that names a program or a file (:data:`FORCED_CONFIG`);
- and, for keys with a name chosen by the config (``filter.<driver>.clean``,
  ``diff.<driver>.textconv``, ``pager.<cmd>``, ``alias.*``...), lists the
  repository's effective config once (``git config --list``, which runs nothing)
  and pins each such key it finds (:func:`config_overrides`).

Git only runs its own builtin subcommands here (:data:`BUILTINS`): an unknown name
would be an alias or a ``git-*`` program found on PATH.

Sources: git-config(1), gitattributes(5), githooks(5), git(1) "ENVIRONMENT
VARIABLES" (git 2.39 documentation).
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from pathlib import Path
from typing import Mapping, MutableMapping, Sequence

log = logging.getLogger(__name__)

DISABLED = "/dev/null/disabled-by-assistant-tui"
"""A program path no system can run (a path below ``/dev/null``)."""

GIT_HARDENING: tuple[str, ...] = ("--no-pager", "-c", "core.fsmonitor=false", "-c", "core.quotepath=false")

# Keys git documents as running a program, reading a file or a credential, with a fixed name.
FORCED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", ":"),  # ":" is never launched (git's editor.c)
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("core.sshCommand", DISABLED),
    ("core.gitProxy", DISABLED),
    ("core.alternateRefsCommand", DISABLED),
    ("core.attributesFile", ""),
    ("core.excludesFile", ""),
    ("diff.tool", ""),
    ("merge.tool", ""),
    ("gpg.program", DISABLED),
    ("gpg.openpgp.program", DISABLED),
    ("gpg.x509.program", DISABLED),
    ("gpg.ssh.program", DISABLED),
    ("gpg.ssh.defaultKeyCommand", DISABLED),
    ("log.showSignature", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("tag.forceSignAnnotated", "false"),
    ("push.gpgSign", "false"),
    ("merge.verifySignatures", "false"),
    ("credential.helper", ""),  # the empty value resets the list of helpers
    ("credential.interactive", "false"),
    ("man.viewer", DISABLED),
    ("help.browser", DISABLED),
    ("help.autoCorrect", "0"),
    ("web.browser", DISABLED),
    ("interactive.diffFilter", DISABLED),
    ("uploadpack.packObjectsHook", DISABLED),
    ("protocol.allow", "never"),
    ("commit.template", ""),
    ("mailmap.file", ""),
    ("mailmap.blob", ""),
    ("blame.ignoreRevsFile", ""),
    ("init.templateDir", ""),
    ("gc.auto", "0"),
    ("gc.autoDetach", "false"),
    ("maintenance.auto", "false"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("core.quotePath", "false"),
)
_PROTOCOLS = ("ext", "fd", "file", "git", "http", "https", "ssh", "ftp", "ftps", "rsync", "testgit")

# Fixed keys pinned only when the listed config sets them: an always-on pin would break every
# `git diff` that lacks --no-ext-diff (aider's GitPython, mcp-server-git): git runs the empty command.
_LISTED_ONLY: dict[str, str] = {"diff.external": DISABLED}

# Keys whose middle part is chosen by the config: (section, variable or None for any) -> forced value.
_NAMED_KEYS: dict[tuple[str, str | None], str] = {
    ("filter", "clean"): "", ("filter", "smudge"): "", ("filter", "process"): "", ("filter", "required"): "false",
    ("diff", "command"): DISABLED, ("diff", "textconv"): DISABLED, ("diff", "cachetextconv"): "false",
    ("merge", "driver"): DISABLED,
    ("difftool", "cmd"): DISABLED, ("difftool", "path"): DISABLED,
    ("mergetool", "cmd"): DISABLED, ("mergetool", "path"): DISABLED,
    ("man", "cmd"): DISABLED, ("man", "path"): DISABLED,
    ("browser", "cmd"): DISABLED, ("browser", "path"): DISABLED,
    ("remote", "uploadpack"): DISABLED, ("remote", "receivepack"): DISABLED, ("remote", "vcs"): DISABLED,
    ("remote", "proxy"): "",
    ("credential", "helper"): "",
    ("gpg", "program"): DISABLED,
    ("protocol", "allow"): "never",
    ("submodule", "update"): "none",
    ("trailer", "command"): DISABLED, ("trailer", "cmd"): DISABLED,
    ("sendemail", None): DISABLED,
    ("pager", None): "false",
    ("alias", None): "",
}
MAX_OVERRIDES = 4000
# File-reading keys that are lists the command-line scope cannot reset (git 2.39 blame.c).
_LISTED_FILES = frozenset({"blame.ignorerevsfile"})

# git's builtin subcommands (git --list-cmds=builtins, git 2.39) that may be planned at all; the
# command policy refuses the network and program-running ones by name before this list is consulted.
BUILTINS: frozenset[str] = frozenset(
    "add am annotate apply archive blame branch bundle cat-file check-attr check-ignore check-mailmap "
    "check-ref-format checkout checkout-index cherry cherry-pick clean clone column commit commit-graph "
    "commit-tree config count-objects describe diff diff-files diff-index diff-tree fetch for-each-ref "
    "format-patch fsck gc grep hash-object help hook init interpret-trailers log ls-files ls-remote ls-tree "
    "merge merge-base merge-file merge-tree mktag mktree mv name-rev notes pack-refs patch-id prune pull push "
    "range-diff read-tree rebase reflog remote repack replace rerere reset restore rev-list rev-parse revert rm "
    "shortlog show show-branch show-ref sparse-checkout stash status stripspace switch symbolic-ref tag "
    "update-index update-ref var verify-commit verify-pack verify-tag version whatchanged worktree write-tree".split()
)

_KEEP_GIT_ENV = frozenset({"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
                           "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_CEILING_DIRECTORIES"})
_FIXED_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "EDITOR": ":",
    "VISUAL": ":",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_ALLOW_PROTOCOL": "none",  # a protocol name that does not exist: nothing allowed
}


class GitRefused(Exception):
    """The repository is set up so that git would leave the project; ``reason`` says how."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def git_argv(*args: str) -> list[str]:
    """``git`` with the hardening options, then ``args`` (run it with :func:`git_env`)."""
    return ["git", *GIT_HARDENING, *args]


def named_overrides(keys: Sequence[str]) -> list[tuple[str, str]]:
    """The pins for config keys (as ``git config --list`` spells them) that name a program or file.

    Only keys with a config-chosen middle part are returned (``filter.lfs.clean``,
    ``pager.log``, ``alias.st``...); fixed keys are in :data:`FORCED_CONFIG`.
    """
    pins: dict[str, str] = {}
    for key in keys:
        section, _, rest = key.partition(".")
        section, variable = section.lower(), rest.rpartition(".")[2].lower()
        if key.lower() in _LISTED_ONLY:
            pins[key] = _LISTED_ONLY[key.lower()]
            continue
        if not rest:
            continue
        if (section, None) in _NAMED_KEYS:
            pins[key] = _NAMED_KEYS[(section, None)]
        elif "." in rest and (section, variable) in _NAMED_KEYS:
            pins[key] = _NAMED_KEYS[(section, variable)]
    return list(pins.items())


def _base_env(base: Mapping[str, str] | None) -> dict[str, str]:
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith("GIT_") or k in _KEEP_GIT_ENV}
    env.update(_FIXED_ENV)
    return env


def _with_config(env: dict[str, str], pins: Sequence[tuple[str, str]]) -> dict[str, str]:
    for index, (key, value) in enumerate(pins):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    env["GIT_CONFIG_COUNT"] = str(len(pins))
    return env


def _fixed_pins(identity: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    return [*FORCED_CONFIG, *((f"protocol.{p}.allow", "never") for p in _PROTOCOLS), *identity]


def listed_config(cwd: Path, env: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """The effective config (scope, key, value) git sees in ``cwd``, includes followed.

    ``git config --list`` only reads files: it runs no hook, filter or pager.
    """
    try:
        proc = subprocess.run(["git", "--no-pager", "config", "--list", "-z", "--show-scope"], cwd=cwd, env=dict(env),
                              capture_output=True, timeout=10, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("git config --list failed in %s: %s", cwd, exc)
        return []
    items = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    entries = []
    for scope, item in zip(items[::2], items[1::2]):
        key, _, value = item.partition("\n")
        entries.append((scope, key, value))
    return entries


def config_overrides(cwd: Path, env: Mapping[str, str], *, blame: bool = False) -> list[tuple[str, str]]:
    """Pins for every config-named program key in ``cwd``'s effective config.

    Raises:
        GitRefused: The config moves the work tree (``core.worktree``) or names more
            drivers than can be pinned.
    """
    entries = listed_config(cwd, env)
    root = cwd.resolve()
    for scope, key, value in entries:
        name = key.lower()
        if name == "core.worktree":
            raise GitRefused(f"this repository's config sets core.worktree={value!r}, which points git at "
                             "another directory; git is not run here")
        if blame and name in _LISTED_FILES and scope in ("local", "worktree"):
            target = (root / os.path.expanduser(value)).resolve()
            if value and not target.is_relative_to(root):
                raise GitRefused(f"this repository's config makes git read {target} ({key}), a file outside the "
                                 "project; git is not run here")
    pins = named_overrides([key for _, key, _ in entries])
    if len(pins) > MAX_OVERRIDES:
        raise GitRefused(f"this repository's config names {len(pins)} drivers, aliases or pagers; git is not run")
    return pins


def check_git_dir(cwd: Path) -> None:
    """Refuse a ``.git`` file that points outside the project (a planted gitfile).

    A linked worktree's ``.git`` file points into another repository's ``.git/worktrees/``;
    that is accepted when the admin directory points back at this ``.git`` file.

    Raises:
        GitRefused: The ``.git`` file points elsewhere.
    """
    dotgit = cwd / ".git"
    if not dotgit.is_file() or dotgit.is_symlink() and not dotgit.resolve().is_relative_to(cwd.resolve()):
        if dotgit.is_symlink():
            raise GitRefused(".git is a symbolic link out of the project; git is not run here")
        return
    try:
        text = dotgit.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return
    match = re.match(r"gitdir:\s*(.+?)\s*$", text, re.M)
    if not match:
        return
    target = (cwd / match.group(1)).resolve()
    root = cwd.resolve()
    if target.is_relative_to(root):
        return
    back = target / "gitdir"
    try:
        points_back = Path(back.read_text(encoding="utf-8").strip()).resolve() == dotgit.resolve()
    except OSError:
        points_back = False
    if not points_back:
        raise GitRefused(f".git points at {target}, a repository outside the project that is not one of its "
                         "worktrees; git is not run here")


def git_env(cwd: Path | None = None, base: Mapping[str, str] | None = None, *,
            identity: Sequence[tuple[str, str]] = (), global_config: bool = True, blame: bool = False
            ) -> dict[str, str]:
    """The environment for a git child: no repository-named program, no system config.

    Args:
        cwd: Where git will run; its config is listed to pin config-named drivers.
            None pins only the fixed keys.
        base: The environment to start from (default ``os.environ``; pass a scrubbed one).
        identity: Extra pins (e.g. ``user.name``) kept when the global config is hidden.
        global_config: False points ``GIT_CONFIG_GLOBAL`` at ``/dev/null``.
        blame: git blame will run: refuse a repository ``blame.ignoreRevsFile`` outside ``cwd``
            (a list the command line cannot reset; git prints the file's lines in errors).

    Raises:
        GitRefused: See :func:`config_overrides` and :func:`check_git_dir`.
    """
    env = _base_env(base)
    if not global_config:
        env["GIT_CONFIG_GLOBAL"] = os.devnull
    fixed = _fixed_pins(identity)
    _with_config(env, fixed)
    named: list[tuple[str, str]] = []
    if cwd is not None:
        check_git_dir(cwd)
        named = config_overrides(cwd, env, blame=blame)
    return _with_config(env, [*fixed, *named])


def harden_git_environment(environ: MutableMapping[str, str] | None = None, cwd: Path | None = None) -> None:
    """Make ``environ`` (default ``os.environ``) a hardened git environment, in place.

    For git run by libraries in this process (aider's GitPython) and children
    started with it. Only ``GIT_*`` variables change (the app's own ``EDITOR`` stays). A repository that refuses (:class:`GitRefused`) gets the fixed
    pins only, and its git commands will be refused where the app runs them.
    """
    target = os.environ if environ is None else environ
    try:
        env = git_env(cwd, base=target)
    except GitRefused as exc:
        log.warning("git hardening: %s", exc.reason)
        env = git_env(None, base=target)
    for key in [k for k in target if k.startswith("GIT_") and k not in env]:
        del target[key]
    target.update({k: v for k, v in env.items() if k.startswith("GIT_")})


def run_git(args: Sequence[str], cwd: Path, *, base: Mapping[str, str] | None = None, timeout: float = 10.0,
            text: bool = False) -> subprocess.CompletedProcess:
    """Run one hardened builtin git subcommand in ``cwd`` and capture its output.

    Raises:
        GitRefused: The repository would point git elsewhere, or ``args[0]`` is not a builtin.
        OSError, subprocess.TimeoutExpired: As :func:`subprocess.run`.
    """
    if not args or args[0] not in BUILTINS:
        raise GitRefused(f"git {args[0] if args else ''} is not a builtin git subcommand")
    return subprocess.run(git_argv(*args), cwd=cwd, env=git_env(cwd, base), capture_output=True, timeout=timeout,
                          text=text, check=False, stdin=subprocess.DEVNULL)


_IDENTITY: list[tuple[str, str]] | None = None


def user_identity() -> list[tuple[str, str]]:
    """``user.name``/``user.email`` from the user's global config, for git run with it hidden (cached)."""
    global _IDENTITY
    if _IDENTITY is None:
        found: list[tuple[str, str]] = []
        env = git_env(None)
        for key in ("user.name", "user.email"):
            try:
                proc = subprocess.run(["git", "config", "--global", "--get", key], env=env, capture_output=True,
                                      text=True, timeout=5, check=False, cwd=os.path.expanduser("~"))
            except (OSError, subprocess.TimeoutExpired):
                continue
            if proc.returncode == 0 and proc.stdout.strip():
                found.append((key, proc.stdout.strip()))
        _IDENTITY = found
    return _IDENTITY
