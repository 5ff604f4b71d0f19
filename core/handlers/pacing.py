"""The handler's clocks and retry pause: fixed at construction (tests and benchmarks pass their own)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from core.handlers.requests import current_time
from core.handlers.retry import RetryBudget


@dataclass(frozen=True, kw_only=True)
class Pacing:
    """How the handler measures time and waits between retries.

    Attributes:
        clock: Measures tool calls' run time and approval waits (monotonic seconds).
        wall_clock: The time each user message is stamped with.
        retry_base_delay: Seconds before the first retry of a failed request (doubling after).
        retry_budget: The retries the session may spend (a token bucket shared by every request).
    """

    clock: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], str] = current_time
    retry_base_delay: float = 0.5
    retry_budget: RetryBudget = field(default_factory=RetryBudget)
