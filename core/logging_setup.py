"""Logging to a file under the XDG state dir, with secrets redacted."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable

from core import paths

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactingFilter(logging.Filter):
    """Replaces every known secret value in a record's final message with ``[REDACTED]``."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = message
        for secret in self.secrets:
            redacted = redacted.replace(secret, "[REDACTED]")
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def setup_logging(secrets: Iterable[str] = (), *, level: int = logging.INFO, log_path: Path | None = None) -> Path:
    """Send all logging to the log file (never the terminal) and return its path."""
    log_path = log_path or paths.log_file()
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(log_path, encoding="utf-8")
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
