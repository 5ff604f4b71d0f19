"""A ``session/prompt``'s content blocks as our query text."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import RequestError
from acp.schema import EmbeddedResourceContentBlock, ImageContentBlock, ResourceContentBlock, TextContentBlock, TextResourceContents

from core import images as imaging


def prompt_text(blocks: list[Any], project_root: Path) -> str:
    """The user's query from ACP content blocks.

    Text is kept as typed; a linked file becomes its project-relative path (the model
    reads it with readFile); embedded text resources are included as ``<file>`` blocks.
    An image is its label (``[image: image/png, 12 KB]``; :func:`prompt_images` takes
    its data); audio is not advertised, so it is refused.
    """
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(_link_text(block.uri, project_root))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            name = _link_text(resource.uri, project_root)
            if isinstance(resource, TextResourceContents):
                parts.append(f'\n<file path="{name}">\n{resource.text}\n</file>\n')
            else:
                parts.append(f"{name} (binary content not included)")
        elif isinstance(block, ImageContentBlock):
            parts.append(imaging.label({"mime_type": block.mime_type, "data": block.data}))
        else:
            kind = getattr(block, "type", type(block).__name__)
            text = f"{kind} content is not supported: the models assistant-tui drives here take text; send text or files."
            raise RequestError(-32602, text, {"reason": "unsupported_content", "details": text})
    return " ".join(part for part in parts if part) if len(parts) > 1 else "".join(parts)


def prompt_images(blocks: list[Any], model: str, accepts: bool) -> list[dict[str, str]]:
    """The prompt's images, checked (:func:`core.images.checked`), for a model that takes them.

    Raises:
        RequestError: an image for a model that takes none, of a type not allowed, or over 5 MB.
    """
    found = [block for block in blocks if isinstance(block, ImageContentBlock)]
    if found and not accepts:
        text = f"The model {model} does not take images; send text, or switch to a model that takes images (a Claude model, gpt-4o, gpt-4.1, gpt-5)."
        raise RequestError(-32602, text, {"reason": "unsupported_content", "details": text})
    try:
        return [imaging.checked(block.mime_type, block.data) for block in found]
    except imaging.ImageError as exc:
        raise RequestError(-32602, str(exc), {"reason": "bad_image", "details": str(exc)}) from None


def _link_text(uri: str, project_root: Path) -> str:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return uri
    path = Path(unquote(parsed.path))
    try:
        return str(path.resolve().relative_to(project_root.resolve()))
    except (ValueError, OSError):
        return str(path)
