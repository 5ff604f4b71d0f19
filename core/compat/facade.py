"""The SPEC's classes: the engine's own with the SPEC's names added (see :mod:`core.compat`)."""

from __future__ import annotations

from core.app import Application as _EngineApplication
from core.compat.handler import BaseHandlerSpecApi, PassthroughSpecApi
from core.compat.selection import MemorySpecApi
from core.compat.tasks import TaskSystemSpecApi
from core.handlers.base import BaseHandler as _EngineBaseHandler
from core.handlers.passthrough import PassthroughHandler as _EnginePassthroughHandler
from core.memory.system import MemorySystem as _EngineMemorySystem
from core.tasks.system import TaskSystem as _EngineTaskSystem

__all__ = ["Application", "BaseHandler", "MemorySystem", "PassthroughHandler", "TaskSystem"]


class BaseHandler(_EngineBaseHandler, BaseHandlerSpecApi):
    """The engine's BaseHandler with SPEC section 3's helpers (``prime_data_context``, ``execute_file_path_command``...)."""


class PassthroughHandler(_EnginePassthroughHandler, PassthroughSpecApi, BaseHandlerSpecApi):
    """The engine's PassthroughHandler with ``handle_query``, ``registerDirectTool``, ``registerSubtaskTool`` and the rest."""


class MemorySystem(_EngineMemorySystem, MemorySpecApi):
    """The engine's MemorySystem with ``determine_relevant_files`` (the model chooses the files)."""


class TaskSystem(_EngineTaskSystem, TaskSystemSpecApi):
    """The engine's TaskSystem with ``PROGRAMMATIC_EXECUTORS``, ``execute_subtask`` and ``follow_continuation``."""


class Application(_EngineApplication):
    """The engine's Application, built of the classes above (what an embedder gets from SPEC section 1)."""

    memory_system_class = MemorySystem
    task_system_class = TaskSystem
    handler_class = PassthroughHandler
