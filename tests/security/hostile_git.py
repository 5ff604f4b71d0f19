"""A repository that names a sentinel program in every place git documents as running one.

Each entry of :data:`PROGRAM_KEYS` is a config key git's documentation says runs a
program (or reads a file/credential the repository chooses), with the manual page
and section that says so (git 2.39: git-config(1) "Variables", gitattributes(5),
githooks(5), git(1)). The sentinel appends a line to ``sentinel.log`` in the
fixture's base directory; any line there is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# (config key, value kind, doc section). "cmd": a shell command; "path": a program path;
# "bool": a setting that makes git run a configured program.
PROGRAM_KEYS: tuple[tuple[str, str, str], ...] = (
    ("core.fsmonitor", "path", "git-config(1) core.fsmonitor"),
    ("core.editor", "cmd", "git-config(1) core.editor"),
    ("core.pager", "cmd", "git-config(1) core.pager"),
    ("core.sshCommand", "cmd", "git-config(1) core.sshCommand"),
    ("core.askPass", "path", "git-config(1) core.askPass"),
    ("core.gitProxy", "cmd", "git-config(1) core.gitProxy"),
    ("core.alternateRefsCommand", "cmd", "git-config(1) core.alternateRefsCommand"),
    ("core.hooksPath", "hooks", "git-config(1) core.hooksPath, githooks(5)"),
    ("diff.external", "cmd", "git-config(1) diff.external"),
    ("diff.evil.command", "cmd", "git-config(1) diff.<driver>.command, gitattributes(5) 'Defining an external diff driver'"),
    ("diff.evil.textconv", "cmd", "git-config(1) diff.<driver>.textconv, gitattributes(5) 'Performing text diffs of binary files'"),
    ("diff.tool", "name", "git-config(1) diff.tool"),
    ("difftool.evil.cmd", "cmd", "git-config(1) difftool.<tool>.cmd"),
    ("difftool.evil.path", "path", "git-config(1) difftool.<tool>.path"),
    ("filter.evil.clean", "cmd", "git-config(1) filter.<driver>.clean, gitattributes(5) 'filter'"),
    ("filter.evil.smudge", "cmd", "git-config(1) filter.<driver>.smudge, gitattributes(5) 'filter'"),
    ("filter.proc.process", "cmd", "gitattributes(5) 'Long Running Filter Process'"),
    ("merge.evil.driver", "cmd", "git-config(1) merge.<driver>.driver, gitattributes(5) 'Defining a custom merge driver'"),
    ("merge.tool", "name", "git-config(1) merge.tool"),
    ("mergetool.evil.cmd", "cmd", "git-config(1) mergetool.<tool>.cmd"),
    ("mergetool.evil.path", "path", "git-config(1) mergetool.<tool>.path"),
    ("gpg.program", "path", "git-config(1) gpg.program"),
    ("gpg.openpgp.program", "path", "git-config(1) gpg.<format>.program"),
    ("gpg.x509.program", "path", "git-config(1) gpg.<format>.program"),
    ("gpg.ssh.program", "path", "git-config(1) gpg.<format>.program"),
    ("gpg.ssh.defaultKeyCommand", "cmd", "git-config(1) gpg.ssh.defaultKeyCommand"),
    ("log.showSignature", "bool", "git-config(1) log.showSignature (runs gpg.program)"),
    ("commit.gpgSign", "bool", "git-config(1) commit.gpgSign (runs gpg.program)"),
    ("tag.gpgSign", "bool", "git-config(1) tag.gpgSign (runs gpg.program)"),
    ("tag.forceSignAnnotated", "bool", "git-config(1) tag.forceSignAnnotated"),
    ("merge.verifySignatures", "bool", "git-config(1) merge.verifySignatures"),
    ("credential.helper", "cmd", "git-config(1) credential.helper, gitcredentials(7)"),
    ("credential.https://example.invalid.helper", "cmd", "gitcredentials(7) credential.<url>.helper"),
    ("sequence.editor", "cmd", "git-config(1) sequence.editor"),
    ("pager.status", "cmd", "git-config(1) pager.<cmd>"),
    ("pager.log", "cmd", "git-config(1) pager.<cmd>"),
    ("pager.diff", "cmd", "git-config(1) pager.<cmd>"),
    ("pager.show", "cmd", "git-config(1) pager.<cmd>"),
    ("pager.branch", "cmd", "git-config(1) pager.<cmd>"),
    ("pager.grep", "cmd", "git-config(1) pager.<cmd>"),
    ("pager.tag", "cmd", "git-config(1) pager.<cmd>"),
    ("alias.st", "alias", "git-config(1) alias.* ('!' runs a shell command)"),
    ("alias.lsf", "alias", "git-config(1) alias.*"),
    ("man.viewer", "name", "git-config(1) man.viewer, git-help(1)"),
    ("man.evil.cmd", "cmd", "git-config(1) man.<tool>.cmd"),
    ("man.evil.path", "path", "git-config(1) man.<tool>.path"),
    ("help.format", "name", "git-config(1) help.format"),
    ("help.browser", "name", "git-config(1) help.browser"),
    ("web.browser", "name", "git-config(1) web.browser"),
    ("browser.evil.cmd", "cmd", "git-config(1) browser.<tool>.cmd"),
    ("browser.evil.path", "path", "git-config(1) browser.<tool>.path"),
    ("help.autoCorrect", "bool", "git-config(1) help.autoCorrect (runs a guessed command)"),
    ("sendemail.smtpServer", "path", "git-config(1) sendemail.smtpServer"),
    ("sendemail.toCmd", "cmd", "git-config(1) sendemail.toCmd"),
    ("sendemail.ccCmd", "cmd", "git-config(1) sendemail.ccCmd"),
    ("sendemail.headerCmd", "cmd", "git-config(1) sendemail.headerCmd"),
    ("uploadpack.packObjectsHook", "cmd", "git-config(1) uploadpack.packObjectsHook"),
    ("remote.origin.uploadpack", "path", "git-config(1) remote.<name>.uploadpack"),
    ("remote.origin.receivepack", "path", "git-config(1) remote.<name>.receivepack"),
    ("remote.origin.vcs", "name", "git-config(1) remote.<name>.vcs (runs git-remote-<vcs>)"),
    ("remote.origin.url", "url", "git-remote-ext(1) 'ext::' transport runs a command"),
    ("protocol.allow", "name", "git-config(1) protocol.allow"),
    ("protocol.ext.allow", "name", "git-config(1) protocol.<name>.allow, git-remote-ext(1)"),
    ("interactive.diffFilter", "cmd", "git-config(1) interactive.diffFilter"),
    ("trailer.evil.command", "cmd", "git-config(1) trailer.<token>.command, git-interpret-trailers(1)"),
    ("trailer.evil.cmd", "cmd", "git-interpret-trailers(1) trailer.<token>.cmd"),
    ("submodule.evil.update", "alias", "git-config(1) submodule.<name>.update ('!command')"),
    ("commit.template", "secret", "git-config(1) commit.template (reads a file into the commit message)"),
    ("core.excludesFile", "secret", "git-config(1) core.excludesFile (reads a file)"),
    ("core.attributesFile", "secret", "git-config(1) core.attributesFile (reads a file)"),
    ("mailmap.file", "secret", "git-config(1) mailmap.file (reads a file)"),
    ("blame.ignoreRevsFile", "secret", "git-config(1) blame.ignoreRevsFile (reads a file)"),
    ("gc.auto", "bool", "git-config(1) gc.auto (runs gc and its pre-auto-gc hook after commands)"),
    ("maintenance.auto", "bool", "git-config(1) maintenance.auto"),
    ("include.path", "include", "git-config(1) 'Includes' (more keys from a file in the work tree)"),
)
# githooks(5), git 2.39: every hook it documents.
HOOKS: tuple[str, ...] = (
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit", "prepare-commit-msg",
    "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive", "update",
    "proc-receive", "post-receive", "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc",
    "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
    "p4-post-changelist", "p4-pre-submit", "post-index-change",
)
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "Test",
                "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def _value(kind: str, key: str, sentinel: Path, hooks: Path, secret: Path) -> str:
    call = f"{sentinel} {key}"
    return {
        "cmd": call, "path": str(sentinel), "bool": "true", "alias": f"!{call}", "name": "evil",
        "hooks": str(hooks), "url": f"ext::{call}", "secret": str(secret), "include": "included.cfg",
    }[kind] if key not in _SPECIAL else _SPECIAL[key]


_SPECIAL = {"gc.auto": "1", "help.autoCorrect": "immediate", "protocol.allow": "always",
            "protocol.ext.allow": "always"}


def build_hostile_repo(base: Path, files: dict[str, str] | None = None) -> Path:
    """``base/repo``: committed files (plus ``files``), a second branch, and every key of :data:`PROGRAM_KEYS` armed."""
    log = base / "sentinel.log"
    sentinel = base / "sentinel"
    sentinel.write_text(f'#!/bin/sh\necho "$0 $*" >> "{log}"\ncat\n')
    sentinel.chmod(0o755)
    secret = base / "outside-secret.txt"
    secret.write_text("OUTSIDE-CANARY-4471\n")
    repo = base / "repo"
    repo.mkdir()
    env = {**os.environ, **GIT_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main", "--template=")
    (repo / "a.txt").write_text("hello world\n")
    (repo / "b.dat").write_text("binary-ish hello\n")
    (repo / "c.inc").write_text("included hello\n")
    for name, text in (files or {}).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git("add", "-A", "-f")
    git("commit", "-q", "-m", "initial")
    git("branch", "other")
    (repo / "a.txt").write_text("hello world\nfrom main\n")
    git("commit", "-q", "-am", "second")
    git("tag", "-a", "v1", "-m", "v1")
    # Arm the repository after the setup commits.
    hooks = base / "hostile-hooks"
    for directory in (hooks, repo / ".git" / "hooks"):
        directory.mkdir(exist_ok=True)
        for hook in HOOKS:
            shutil.copy(sentinel, directory / hook)
    for key, kind, _ in PROGRAM_KEYS:
        git("config", "--add", key, _value(kind, key, sentinel, hooks, secret))
    (repo / "included.cfg").write_text(f"[filter \"inc\"]\n\tclean = {sentinel} inc-clean\n"
                                       f"\tsmudge = {sentinel} inc-smudge\n[core]\n\tpager = {sentinel} inc-pager\n")
    attributes = "* filter=evil diff=evil merge=evil\n*.dat filter=proc\n*.inc filter=inc\n"
    (repo / ".gitattributes").write_text(attributes)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text(attributes)
    (repo / "a.txt").write_text("hello world\nfrom main\nchanged\n")  # a modified file: filters, diffs, status
    (repo / "b.dat").write_text("binary-ish hello\nchanged\n")
    return repo
