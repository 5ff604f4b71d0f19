"""An MCP ``CallToolResult`` as the TaskResult the tool loop feeds back to the model.

Text content is kept as text; structured content as JSON when the server sent no
text for it; images, audio and binary resources become one-line placeholders with
their type and size (the model cannot use base64 and it would flood the context);
text resources keep their text. ``isError`` becomes an error result. The loop caps
the whole content like any other tool result.
"""

from __future__ import annotations

import json
from typing import Any

from core.text import human_size
from core.types import TaskResult, error_result, ok_result


def _size(data: str) -> int:
    """Bytes encoded by a base64 string (its decoded length, without decoding it)."""
    data = data.strip()
    return max(0, (len(data) * 3) // 4 - data[-2:].count("="))


def _block_text(block: Any) -> tuple[str, str]:
    """(text for the model, kind) of one content block."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text, "text"
    if kind in ("image", "audio"):
        return f"[{kind} {block.mimeType}, {human_size(_size(block.data))} not shown]", kind
    if kind == "resource_link":
        mime = f" ({block.mimeType})" if getattr(block, "mimeType", None) else ""
        return f"[resource link {block.uri}{mime}: {block.name}]", kind
    if kind == "resource":
        resource = block.resource
        mime = getattr(resource, "mimeType", None) or "unknown type"
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource {resource.uri} ({mime}), {len(text):,} characters]\n{text}", kind
        return f"[resource {resource.uri} ({mime}), {human_size(_size(getattr(resource, 'blob', '')))} not shown]", kind
    return f"[{kind or 'unknown'} content not shown]", kind or "unknown"


def to_task_result(result: Any, server: str, tool: str) -> TaskResult:
    """The TaskResult for a ``types.CallToolResult`` of ``server``'s ``tool``."""
    parts: list[str] = []
    kinds: dict[str, int] = {}
    for block in result.content or []:
        text, kind = _block_text(block)
        parts.append(text)
        kinds[kind] = kinds.get(kind, 0) + 1
    structured = getattr(result, "structuredContent", None)
    if structured is not None and not kinds.get("text"):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=1, default=str))
    content = "\n".join(parts) if parts else "(the tool returned no content)"
    metadata: dict[str, Any] = {"mcp_server": server, "mcp_tool": tool, "content_kinds": kinds}
    if structured is not None:
        metadata["structured"] = True
    if result.isError:
        return error_result(content, error="mcp_tool_error", **metadata)
    return ok_result(content, **metadata)
