"""Value types of the memory system (SPEC.md sections 3 and 5)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, kw_only=True)
class MatchItem:
    """One piece of context handed to the model, usually a file's content.

    Attributes:
        id: Stable identifier (the absolute path for files).
        content: The text itself.
        content_type: What the content is, e.g. ``file_content``.
        source_path: Where it came from (absolute path), or ``""``.
    """

    id: str
    content: str
    content_type: str = "file_content"
    source_path: str = ""


@dataclass(kw_only=True)
class DataContext:
    """What the handler primes into the system prompt for the next request.

    Attributes:
        items: The context items, explicit files first.
        source_query: The query they were retrieved for.
        retrieved_at: Wall-clock time of retrieval.
        summary: Optional overall summary shown after the items.
    """

    items: list[MatchItem] = field(default_factory=list)
    source_query: str = ""
    retrieved_at: float = field(default_factory=time.time)
    summary: str = ""


@dataclass(kw_only=True)
class AssociativeMatchResult:
    """The answer of :meth:`MemorySystem.get_relevant_context_for`.

    Attributes:
        context: A short human summary of what was found.
        matches: ``(absolute path, relevance in 0..1)``, best first.
    """

    context: str = ""
    matches: list[tuple[str, float]] = field(default_factory=list)


@dataclass(kw_only=True)
class ContextGenerationInput:
    """A structured relevance request (SPEC.md section 5).

    Attributes:
        template_description: What the task is about.
        inputs: The task's parameters (values are searched too).
        context_relevance: Per input name, whether it should shape the search
            (names missing here count as relevant).
        inherited_context: Context text carried over from a parent task.
        previous_outputs: Earlier outputs worth searching with.
    """

    template_description: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    context_relevance: dict[str, bool] = field(default_factory=dict)
    inherited_context: str = ""
    previous_outputs: list[str] = field(default_factory=list)
