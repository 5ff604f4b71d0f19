"""Retries of failed model requests: our own, visible, and bounded by one shared budget.

The SDKs' silent internal retries are turned off; the loop retries here so each
retry is shown to the user, ``retry-after`` is honoured, and a storm of 429s
cannot multiply requests: every retry of the session spends from one token
bucket.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Iterable

from core.providers.base import ProviderError
from core.secrets import redact

MAX_DELAY = 30.0


@dataclass
class RetryBudget:
    """A token bucket of retries shared by every request of a session."""

    capacity: float = 8.0
    refill_per_second: float = 8.0 / 60.0
    tokens: float = field(default=-1.0)
    _updated: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = self.capacity

    def try_spend(self) -> bool:
        """Take one retry from the budget; False when it is empty."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self._updated) * self.refill_per_second)
        self._updated = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


def retry_delay(error: ProviderError, attempt: int, base: float) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based): ``retry-after`` or jittered backoff."""
    if error.retry_after is not None:
        return max(0.0, min(error.retry_after, MAX_DELAY))
    backoff = base * 2 ** (attempt - 1)
    return min(MAX_DELAY, backoff * (0.75 + random.random() * 0.5))


def shown_message(error: ProviderError, secrets: Iterable[str]) -> str:
    """The error's user message with every secret redacted (some gateways echo the API key in errors).

    What is shown is also recorded in the transcript and the events, so it must never carry the key.
    """
    return redact(error.user_message(), secrets)
