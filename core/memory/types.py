"""Value types of the memory system and the handler's data context."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class MatchItem:
    """One item of the data context: a file's content and where it came from."""

    id: str
    content: str
    content_type: str = "file_content"
    source_path: str = ""


@dataclass(kw_only=True)
class DataContext:
    """What the handler sends the model besides the conversation."""

    items: list[MatchItem] = field(default_factory=list)
    source_query: str = ""
    retrieved_at: float = 0.0
    summary: str = ""
