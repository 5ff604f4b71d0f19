"""One strong, process-wide cache of pydantic's parametrized generic models, for the SDKs' streams.

pydantic 2.12 keeps the classes it builds for ``Model[T]`` in a weak dictionary that lives in a
context variable. The SDKs parametrize on every stream, inside functions (anthropic:
``ParsedMessage[ResponseFormatT]`` at ``message_start``, ``ParsedTextBlock[...]``), so nothing holds
the class: a garbage collection frees it and the next reply builds it again, 1-15 ms on the event
loop (30 of 50 steps of a tool loop did). And a class built in another thread's context, such as
the prewarm's, is never found by the loop's tasks. The SDKs use a handful of parametrizations, so
one dictionary for the whole process stays small.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


class _ProcessCache:
    """Stands in for pydantic's context variable: the same strong dictionary in every thread and task."""

    def __init__(self) -> None:
        self.cache: dict[Any, Any] = {}

    def get(self, default: Any = None) -> dict[Any, Any]:
        return self.cache

    def set(self, value: Any) -> None:  # pydantic sets a fresh cache where it found none; there always is one
        return None


def keep_generic_models() -> None:
    """Give pydantic one strong cache of generic models for the process (idempotent; a pydantic without it is left alone)."""
    try:
        from pydantic._internal import _generics  # pydantic's internals: guarded, never required
    except ImportError:
        return
    current = getattr(_generics, "_GENERIC_TYPES_CACHE", None)
    if isinstance(current, _ProcessCache) or not callable(getattr(current, "get", None)):
        return
    _generics._GENERIC_TYPES_CACHE = _ProcessCache()  # type: ignore[assignment]
    log.debug("pydantic's generic-model cache is one strong dictionary for the process")
