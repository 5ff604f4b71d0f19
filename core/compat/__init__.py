"""The SPEC's public interface for embedders, a façade on top of the engine (SPEC.md sections 1, 3, 5 and 7).

SPEC.md names an interface for embedders: ``handle_query``, ``registerDirectTool``,
``prime_data_context``, ``determine_relevant_files``, ``PROGRAMMATIC_EXECUTORS``... The
app drives the engine through ``stream_query`` and its own tool registrations, so these
names live here, on the classes the SPEC puts them on: each class below is the engine's
own with the SPEC's names added, and :class:`Application` builds them. Nothing in
``core`` imports this package (``tests/core/test_architecture.py``): it sits on top.

They are tested by ``tests/core/test_handler_api.py``, ``tests/memory/test_selection.py``
and ``tests/tasks/test_task_system.py``; ``tests/test_surface.py`` exempts this package
from its "every function has a caller" rule and nothing else.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Application", "BaseHandler", "MemorySystem", "PassthroughHandler", "TaskSystem"]


def __getattr__(name: str) -> Any:
    """The classes load on first use: importing :mod:`core.compat.handler` alone loads no engine."""
    if name in __all__:
        from core.compat import facade

        return getattr(facade, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
