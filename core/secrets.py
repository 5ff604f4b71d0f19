"""What counts as a secret, in one place: secret files, secret values, secret environment variables.

Used by ``readFile`` (refusals), the command tool (search exclusions, the
filtering of its output, the child environment), listings (the file picker,
the aider bridge) and log/error redaction.

A file is secret by name (:func:`is_secret_path`: ``.env*`` but not
``.env.example``/``.env.sample``/``.env.template``; ``.envrc``; ``.npmrc``,
``.pypirc``, ``.pgpass``, ``.netrc``, ``.git-credentials``, ``.git/config``;
keystores; private keys; anything in ``.ssh``/``.gnupg``/``.aws``...) or by
content (:func:`contains_private_key`: a PEM/OpenSSH/PuTTY private key anywhere in
the file). Names are compared case-insensitively after Unicode NFKC folding, so
``.ENV`` and full-width look-alikes count too.

A value is secret when the caller knows it (the API keys), when it has the shape
of a known credential (:data:`TOKEN_PATTERNS`), or when it is a URL with a
password in it.
"""

from __future__ import annotations

import fnmatch
import mmap
import os
import re
import stat
import unicodedata
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Iterable, Mapping, Sequence

# Base names of files that hold secrets (lower case; matched case-insensitively).
SECRET_FILE_GLOBS: tuple[str, ...] = (
    ".env", ".env.*", ".envrc",
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
    "*.pem", "*.key", "*.ppk", "*.p12", "*.pfx", "*.jks", "*.keystore",
    ".netrc", "_netrc", ".pgpass", ".git-credentials", ".pypirc", ".npmrc",
)
PUBLIC_ENV_FILES: frozenset[str] = frozenset({".env.example", ".env.sample", ".env.template"})
"""Documented templates of ``.env``: users want them read, and they hold no values."""
# Directories whose whole content is secret.
SECRET_DIRS: frozenset[str] = frozenset({".ssh", ".gnupg", ".aws", ".docker", ".kube"})
_SECRET_IN_GIT = frozenset({"config", "credentials"})
"""Files in ``.git`` that may hold credentials (a remote URL with a password)."""


def _icase_glob(glob: str) -> str:
    """``.env*`` -> ``.[eE][nN][vV]*``: a case-insensitive glob for tools without such a flag."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in glob)


# Globs excluded from content searches (grep --exclude, rg --glob=!, git grep pathspecs).
SEARCH_EXCLUDE_GLOBS: tuple[str, ...] = tuple(
    _icase_glob(g) for g in (*SECRET_FILE_GLOBS, "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*")
    if not g.startswith("id_") or g.endswith("*")
)

_PRIVATE_KEY_MARKER = re.compile(
    rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+:")
_PEM_BLOCK = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[^-]*-----|\Z)", re.S)
# Credential shapes. Sources: GitHub secret scanning "supported patterns" and gitleaks' default rules
# (AWS access key ids, GitHub/GitLab/Slack/npm/Stripe/Google tokens, OpenAI/Anthropic keys, JWTs).
TOKEN_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[A-Z0-9]{16}\b",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",
    r"\bgithub_pat_[A-Za-z0-9_]{22,}",
    r"\bglpat-[A-Za-z0-9_-]{20,}",
    r"\bxox[abposre]-[A-Za-z0-9-]{10,}",
    r"\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}",
    r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
    r"\bnpm_[A-Za-z0-9]{36}\b",
    r"\bAIza[0-9A-Za-z_-]{35}\b",
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]+:[^\s/@]+@",  # a URL with user:password@
))
# One pass over the text instead of one per pattern: 4x faster on command output
# (589 kB of `seq` output: 38 ms against 150 ms).
_ANY_TOKEN = re.compile("|".join(f"(?:{pattern.pattern})" for pattern in TOKEN_PATTERNS))
_SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "COOKIE", "_DSN")
_SECRET_NAMES = frozenset({"SSH_AUTH_SOCK", "DATABASE_URL", "REDIS_URL", "MONGODB_URI", "PGPASSFILE"})
_SECRET_NAME_PREFIXES = ("AWS_", "ANTHROPIC_", "OPENAI_", "AZURE_OPENAI_", "GH_", "GITHUB_", "NPM_CONFIG_",
                         "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "TWINE_")
_NOT_SECRET_NAMES = frozenset({"GIT_ASKPASS", "SSH_ASKPASS", "GIT_TERMINAL_PROMPT", "KEYTIMEOUT", "XAUTHORITY"})
_MIN_SUBSTRING_SECRET = 8
REDACTED = "[REDACTED]"


def _fold(name: str) -> str:
    if name.isascii():
        return name.lower()  # the same as NFKC + casefold for ASCII, and 10x faster
    return unicodedata.normalize("NFKC", name).casefold()


_SECRET_NAME = re.compile("|".join(fnmatch.translate(g) for g in SECRET_FILE_GLOBS))


def is_secret_name(name: str) -> bool:
    """The fast test of one file or directory name (no path): :func:`is_secret_path` for tree walks."""
    folded = _fold(name)
    if folded in SECRET_DIRS:
        return True
    if folded.endswith(".pub") or folded in PUBLIC_ENV_FILES:
        return False
    return (folded.startswith(".env") or _SECRET_NAME.match(folded) is not None
            or (folded.startswith("id_") and "." not in folded))


def is_secret_path(path: str | os.PathLike[str]) -> str | None:
    """Why a path names a secret file (``.env*``, private keys, ``~/.ssh``...), or None.

    Judged on the name alone, so it works for paths that do not exist. Public keys
    (``*.pub``) and the ``.env`` templates (``.env.example``...) are not secret.

    Args:
        path: A file or directory path, absolute or relative.

    Returns:
        A sentence naming the rule that matched, or None when the path looks harmless.
    """
    pure = PurePath(path)
    parts = [_fold(p) for p in pure.parts]
    if not parts:
        return None
    name = parts[-1]
    for part in parts[:-1] + [name]:
        if part in SECRET_DIRS:
            return f"{pure} is inside a {part} directory, which holds credentials"
    if len(parts) >= 2 and parts[-2] == ".git" and name in _SECRET_IN_GIT:
        return f"{pure} is git's {name} file, which can hold credentials in remote URLs"
    if name.endswith(".pub") or name in PUBLIC_ENV_FILES:
        return None
    if name.startswith(".env"):
        return f"{pure.name} is an environment file (.env*), which usually holds API keys and passwords"
    for pattern in SECRET_FILE_GLOBS:
        if fnmatch.fnmatchcase(name, pattern):
            return f"{pure.name} matches {pattern!r}, a file that usually holds a private key or credentials"
    if name.startswith("id_") and "." not in name:
        return f"{pure.name} looks like an SSH private key (id_*)"
    return None


def looks_like_private_key(head: bytes) -> bool:
    """True when ``head`` (some bytes of a file) contains a private-key header."""
    return bool(_PRIVATE_KEY_MARKER.search(head))


MAX_SCANNED_BYTES = 64 * 1024 * 1024


_SMALL_FILE = 64 * 1024


def _has_marker(data: bytes | mmap.mmap) -> bool:
    # A plain substring search first (memchr-fast); the regular expression only where it may match.
    if data.find(b"PRIVATE KEY") < 0 and data.find(b"PuTTY-User-Key-File") < 0:
        return False
    return bool(_PRIVATE_KEY_MARKER.search(data))


@lru_cache(maxsize=32768)
def _scan(path: str, size: int, mtime_ns: int, inode: int) -> bool:  # noqa: ARG001 - the cache key
    try:
        # O_NONBLOCK: a file swapped for a FIFO after the stat does not hang the scan.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb") as handle:
            if size == 0 or not stat.S_ISREG(os.fstat(fd).st_mode):
                return False
            if size <= _SMALL_FILE:  # one read() is cheaper than setting up a mapping
                return _has_marker(handle.read(_SMALL_FILE + 1))
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
                return _has_marker(view)
    except (OSError, ValueError):
        return False


def stat_has_private_key(path: str, info: os.stat_result) -> bool:
    """:func:`contains_private_key` for a walk that already has the file's ``lstat`` (one syscall less)."""
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SCANNED_BYTES:
        return contains_private_key(path) if stat.S_ISREG(info.st_mode) else False
    return _scan(path, info.st_size, info.st_mtime_ns, info.st_ino)


def contains_private_key(path: str | os.PathLike[str]) -> bool:
    """True when a regular file holds a private key anywhere (not only in its first bytes).

    Files above 64 MiB are judged on their first 64 MiB. Cached on (size, mtime, inode).
    """
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    if info.st_size > MAX_SCANNED_BYTES:
        try:
            with open(path, "rb") as handle:
                return looks_like_private_key(handle.read(MAX_SCANNED_BYTES))
        except OSError:
            return False
    return _scan(os.fspath(path), info.st_size, info.st_mtime_ns, info.st_ino)


def is_secret_file(path: str | os.PathLike[str], root: Path | None = None) -> str | None:
    """Why a file is secret, by its name, its resolved name, or its content; None otherwise.

    Args:
        path: The path as named (relative paths are taken from ``root``).
        root: The project root, for relative paths and the resolved name.
    """
    why = is_secret_path(path)
    if why:
        return why
    full = Path(path) if root is None or os.path.isabs(path) else root / path
    try:
        resolved = full.resolve()
    except (OSError, RuntimeError):
        return None
    if resolved != full:
        why = is_secret_path(resolved)
        if why:
            return why
    if contains_private_key(resolved):
        return f"{PurePath(path).name} contains a private key"
    return None


def holds_secret_value(value: str) -> bool:
    """True when ``value`` has the shape of a credential (a token format, a URL with a password)."""
    return any(pattern.search(value) for pattern in TOKEN_PATTERNS)


_GIT_CONFIG_KEY = re.compile(r"GIT_CONFIG_(?:KEY|VALUE)_\d+|GIT_CONFIG_COUNT")


def is_secret_env_name(name: str) -> bool:
    """True for environment variable names that usually carry credentials."""
    upper = name.upper()
    if _GIT_CONFIG_KEY.fullmatch(upper) or upper in _NOT_SECRET_NAMES:
        return False  # names a git config key (see core.gitutil); dropping it would break every git
    return (
        upper in _SECRET_NAMES
        or upper.startswith(_SECRET_NAME_PREFIXES)
        or any(part in upper for part in _SECRET_NAME_PARTS)
    )


def _holds_secret(value: str, secrets: Sequence[str]) -> bool:
    for secret in secrets:
        if not secret:
            continue
        if value == secret or (len(secret) >= _MIN_SUBSTRING_SECRET and secret in value):
            return True
    return False


def scrubbed_env(secrets: Iterable[str] = (), base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment with credentials removed, for child processes.

    Drops every variable whose name says it carries a credential (KEY, TOKEN,
    SECRET, PASSWORD, CREDENTIAL, PRIVATE, COOKIE, _DSN, AWS_*, ANTHROPIC_*, OPENAI_*,
    GITHUB_*, SSH_AUTH_SOCK...), every variable whose value has the shape of one
    (:func:`holds_secret_value`: ``postgres://user:pass@...``, ``ghp_...``,
    ``AKIA...``, ``sk-...``, JWTs...), and every variable whose value is (or, for
    secrets of 8+ characters, contains) one of ``secrets``. PATH, HOME, LANG and
    the like are kept.

    Args:
        secrets: Secret values known to the caller (e.g. ``Settings.secrets()``).
        base: The environment to filter; defaults to ``os.environ``.
    """
    values = [s for s in secrets if s]
    source = os.environ if base is None else base
    return {
        name: value
        for name, value in source.items()
        if not is_secret_env_name(name) and not _holds_secret(value, values)
        and (name.startswith("GIT_CONFIG_") or not holds_secret_value(value))
    }


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by ``[REDACTED]``.

    Secrets are the values given (4+ characters), private-key blocks and values
    with the shape of a credential (:data:`TOKEN_PATTERNS`).
    """
    for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    if "PRIVATE KEY" in text:
        text = _PEM_BLOCK.sub(REDACTED, text)
    return _ANY_TOKEN.sub(REDACTED, text)


_ENV_LINE = re.compile(r"^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*[=:]\s*(.*?)\s*$")


_VALUE_TOKEN = re.compile(r"[^\s=:'\"@/]{8,}")


def env_file_values(root: Path, limit: int = 256 * 1024) -> list[str]:
    """The values (8+ characters) held in the project's secret files at its top level.

    ``.env*``: every assigned value; ``.npmrc``, ``.netrc``, ``.pgpass``... : every
    token of 8+ characters with a digit in it. Redacted from command output, so a
    command that prints a tracked secret file through a route no rule foresaw
    (``git cat-file -p <blob>``) still shows none of its values.
    """
    values: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return values
    for entry in entries:
        if not is_secret_path(entry.name):
            continue
        try:
            if not entry.is_file():
                continue
            with open(entry.path, "r", encoding="utf-8", errors="replace") as handle:
                text = handle.read(limit)
        except OSError:
            continue
        env_file = _fold(entry.name).startswith(".env")
        for line in text.splitlines():
            match = _ENV_LINE.match(line) if env_file else None
            if match:
                value = match.group(1).strip("'\"")
                if len(value) >= _MIN_SUBSTRING_SECRET:
                    values.append(value)
            elif not env_file:
                values += [t for t in _VALUE_TOKEN.findall(line) if any(c.isdigit() for c in t)]
    return values


_PIECE = re.compile(r"([\n\0])")
_NAME_ENDS = re.compile(r"[:\-\0]")
_MAX_NAME_ENDS = 24
_MAX_NAME_CHARS = 4096


def withhold_secret_lines(output: str, root: Path, base: Path | None = None) -> tuple[str, int]:
    """A content search's output without the lines of secret files: the search is no oracle.

    Each line (or NUL-separated name) must begin with the name of an existing
    non-secret file inside ``root`` (``path``, ``path:12:text``, ``path-12-text``,
    ``path:3``); lines that begin with a secret file's name, or with no file's name,
    are withheld. ``--`` separators and empty lines are kept.

    Returns:
        The kept output and how many pieces were withheld.
    """
    start = (base or root).resolve()
    top = root.resolve()
    verdicts: dict[str, bool | None] = {}

    def verdict(name: str) -> bool | None:
        """True: a secret file; False: a plain file inside the root; None: not a file."""
        if name not in verdicts:
            full = Path(name) if os.path.isabs(name) else start / name
            found: bool | None
            if is_secret_path(name):
                found = True
            else:
                try:
                    resolved = full.resolve()
                    is_file = resolved.is_file()
                except (OSError, RuntimeError, ValueError):
                    is_file = False
                if not is_file:
                    found = None
                elif not resolved.is_relative_to(top):
                    found = True  # a file outside the project is never shown
                else:
                    found = bool(is_secret_file(full))
            verdicts[name] = found
        return verdicts[name]

    kept: list[str] = []
    withheld = 0
    pieces = _PIECE.split(output)
    for k in range(0, len(pieces), 2):
        piece, sep = pieces[k], pieces[k + 1] if k + 1 < len(pieces) else ""
        if piece in ("", "--"):
            kept.append(piece + sep)
            continue
        ends = [m.start() for m in _NAME_ENDS.finditer(piece, 0, _MAX_NAME_CHARS)][:_MAX_NAME_ENDS]
        plain = False
        secret = False
        for end in [*ends, len(piece)] if len(piece) <= _MAX_NAME_CHARS else ends:
            found = verdict(piece[:end]) if end else None
            if found:
                secret = True
                break
            plain = plain or found is False
        if plain and not secret:
            kept.append(piece + sep)
        else:
            withheld += 1
    return "".join(kept), withheld


_GIT_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]')
_GIT_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$)")
_SECRET_GIT_KEYS = ("extraheader", "password", "pass", "token", "secret", "smtppass", "credential")
_URL_USERINFO = re.compile(r"\b((?:https?|ftps?|git|ssh|git\+ssh|ssh\+git)://)([^/\s@\"]+)@", re.I)


def _strip_userinfo(match: re.Match[str]) -> str:
    scheme, userinfo = match.group(1), match.group(2)
    if scheme.lower().startswith(("ssh", "git+ssh", "git://")) and ":" not in userinfo and not holds_secret_value(userinfo):
        return match.group(0)  # ssh://git@host: a user name, not a credential
    return scheme


def mask_git_config(text: str) -> str:
    """A git configuration without its credentials, for the sandbox.

    Removes ``[credential]`` sections (helpers and user names), keys that carry
    secrets (``http.extraHeader``, ``*password``, ``*token``...), and the user
    information of URLs (``https://user:token@host`` -> ``https://host``; an ssh
    user name without a password stays). Everything else is kept, line for line.
    """
    out: list[str] = []
    in_credential = False
    for line in text.splitlines(keepends=True):
        section = _GIT_SECTION.match(line)
        if section:
            in_credential = section.group(1).lower().split(".")[0] == "credential"
            if in_credential:
                continue
            out.append(_URL_USERINFO.sub(_strip_userinfo, line))
            continue
        if in_credential:
            continue
        key = _GIT_KEY.match(line)
        if key and any(key.group(1).lower().endswith(part) for part in _SECRET_GIT_KEYS):
            continue
        out.append(redact(_URL_USERINFO.sub(_strip_userinfo, line), ()))
    return "".join(out)
