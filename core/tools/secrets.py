"""What counts as a secret, in one place: secret files, secret environment variables.

Used by the command tool (child environment, search exclusions), ``readFile``
(refusals) and later the file picker and the aider bridge.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import PurePath
from typing import Iterable, Mapping, Sequence

# File-name globs of files that hold secrets. Matched against the base name.
SECRET_FILE_GLOBS: tuple[str, ...] = (
    ".env",
    ".env.*",
    ".envrc",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
)
# Compact globs excluded from content searches (grep -r, rg -l) so they cannot probe secrets.
SEARCH_EXCLUDE_GLOBS: tuple[str, ...] = (
    ".env*", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.pem", "*.key", "*.p12", "*.pfx",
    ".netrc", ".git-credentials",
)
# Directories whose whole content is secret.
SECRET_DIRS: frozenset[str] = frozenset({".ssh", ".gnupg", ".aws"})

_PRIVATE_KEY_MARKER = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")
_SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE")
_SECRET_NAMES = frozenset({"SSH_AUTH_SOCK"})
_SECRET_NAME_PREFIXES = ("AWS_", "ANTHROPIC_", "OPENAI_", "AZURE_OPENAI_")
_MIN_SUBSTRING_SECRET = 8
REDACTED = "[REDACTED]"


def is_secret_path(path: str | os.PathLike[str]) -> str | None:
    """Why a path names a secret file (``.env*``, private keys, ``~/.ssh``...), or None.

    Judged on the name alone, so it works for paths that do not exist. Public keys
    (``*.pub``) are not secret.

    Args:
        path: A file or directory path, absolute or relative.

    Returns:
        A sentence naming the rule that matched, or None when the path looks harmless.
    """
    pure = PurePath(path)
    name = pure.name
    for part in pure.parts[:-1] + (name,):
        if part in SECRET_DIRS:
            return f"{pure} is inside a {part} directory, which holds credentials"
    if name.endswith(".pub"):
        return None
    if name.startswith(".env"):
        return f"{name} is an environment file (.env*), which usually holds API keys and passwords"
    for pattern in SECRET_FILE_GLOBS:
        if fnmatch.fnmatchcase(name, pattern):
            return f"{name} matches {pattern!r}, a file that usually holds a private key or credentials"
    if name.startswith("id_") and "." not in name:
        return f"{name} looks like an SSH private key (id_*)"
    return None


def looks_like_private_key(head: bytes) -> bool:
    """True when the first bytes of a file contain a PEM private-key header."""
    return bool(_PRIVATE_KEY_MARKER.search(head))


_GIT_CONFIG_KEY = re.compile(r"GIT_CONFIG_KEY_\d+")


def is_secret_env_name(name: str) -> bool:
    """True for environment variable names that usually carry credentials."""
    upper = name.upper()
    if _GIT_CONFIG_KEY.fullmatch(upper):
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

    Drops every variable whose name contains KEY, TOKEN, SECRET, PASSWORD,
    PASSWD, CREDENTIAL or PRIVATE, or starts with AWS_, ANTHROPIC_, OPENAI_ or
    AZURE_OPENAI_, SSH_AUTH_SOCK (agent access), and every variable whose value is (or, for secrets
    of 8+ characters, contains) one of ``secrets``. PATH, HOME, LANG and the
    like are kept.

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
    }


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of a secret value replaced by ``[REDACTED]``."""
    for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text
