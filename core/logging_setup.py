"""Logging to a file under the XDG state dir, with secrets redacted."""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path
from typing import Iterable

from core import paths

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactingFilter(logging.Filter):
    """Replaces every known secret value in a record with ``[REDACTED]``.

    Covers the final message, the formatted traceback (``exc_info``, whose
    exception message may quote a key) and ``stack_info``. The traceback is
    formatted here, once, and cached on the record as ``exc_text``, which the
    formatters of every handler then use instead of formatting it again.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        from core.secrets import redact  # its patterns compile at import: not before the app's first frame

        message = record.getMessage()
        redacted = redact(message, self.secrets)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = _TRACEBACKS.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
        return True


_TRACEBACKS = logging.Formatter()


class PrivateFileHandler(logging.FileHandler):
    """A log file only its user can read (0600), never opened through a symbolic link.

    A link found where the log goes was not made by the app (its directory is private):
    it is removed and a plain file made in its place, so nothing is appended to the
    file it pointed at.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8", delay=True)
        self.stream = self._open()

    def _open(self):  # type: ignore[no-untyped-def] - logging's own signature
        path = Path(self.baseFilename)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        try:
            fd = paths.open_private(path, flags)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            os.unlink(path)
            fd = paths.open_private(path, flags | os.O_EXCL)
        os.fchmod(fd, paths.PRIVATE_FILE_MODE)
        return os.fdopen(fd, "a", encoding="utf-8")


def setup_logging(secrets: Iterable[str] = (), *, level: int = logging.INFO, log_path: Path | None = None) -> Path:
    """Send all logging to the log file (never the terminal) and return its path."""
    log_path = log_path or paths.log_file()
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    try:
        paths.private_dir(log_path.parent)
        handler: logging.Handler = PrivateFileHandler(log_path)
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.addFilter(RedactingFilter(secrets))
    root.addHandler(handler)
    root.setLevel(level)
    # The SDKs log request details at DEBUG; keep them at INFO or above.
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2", "anthropic", "openai", "LiteLLM", "litellm"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
    return log_path


def add_secrets(secrets: Iterable[str]) -> None:
    """Redact more secret values from now on (settings loaded later, e.g. an ACP session's project)."""
    for handler in logging.getLogger().handlers:
        for existing in handler.filters:
            if isinstance(existing, RedactingFilter):
                merged = set(existing.secrets) | {s for s in secrets if len(s) >= 6}
                existing.secrets = sorted(merged, key=len, reverse=True)
