"""Images in a user's prompt: which models take them, the checks, and each SDK's wire format.

A user message carries its images as ``message["images"]``: ``[{"mime_type", "data"}]``
(``data`` base64, as the client sent it). The query text names each image with
:func:`label` (``[image: image/png, 12 KB]``), so the transcript and a replay show the
reference, never the bytes; a resumed session's model sees the label only.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Sequence

MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image types both providers' APIs accept (an allowlist)."""

MAX_BYTES = 5 * 1024 * 1024
"""Largest decoded image accepted (Anthropic's per-image API limit)."""

_OPENAI_VISION = re.compile(r"\A(?:[\w.-]+/)?(?:gpt-4o|gpt-4\.1|gpt-5)(?:[-.:][\w.:-]*)?\Z")
"""OpenAI-compatible models known to take images; any other is assumed not to (conservative)."""


class ImageError(ValueError):
    """An image the agent will not send; the message is for the user."""


def takes_images(provider: str, model: str) -> bool:
    """True when ``model`` on ``provider`` accepts image input (Claude models; gpt-4o, gpt-4.1, gpt-5 families)."""
    name = model.strip().lower()
    if provider == "anthropic":
        return name.startswith("claude")
    if provider == "openai":
        return bool(_OPENAI_VISION.match(name))
    return False


def checked(mime_type: str, data: str) -> dict[str, str]:
    """The image as a history entry ``{"mime_type", "data"}``.

    Raises:
        ImageError: the type is not png/jpeg/gif/webp, the data is not base64, or it is over :data:`MAX_BYTES`.
    """
    if mime_type not in MIME_TYPES:
        raise ImageError(f"Images of type {mime_type or '(none)'} are not supported; send PNG, JPEG, GIF or WebP.")
    if len(data) * 3 // 4 > MAX_BYTES + 3:
        raise ImageError(f"The image is {_kb(len(data) * 3 // 4)} KB; the limit is {MAX_BYTES // 1024} KB (5 MB).")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ImageError(f"The {mime_type} image's data is not valid base64.") from None
    if len(raw) > MAX_BYTES:
        raise ImageError(f"The image is {_kb(len(raw))} KB; the limit is {MAX_BYTES // 1024} KB (5 MB).")
    if not raw:
        raise ImageError("The image is empty.")
    return {"mime_type": mime_type, "data": data}


def label(image: dict[str, str]) -> str:
    """``[image: image/png, 12 KB]``: how the text, the transcript and a replay name an image."""
    return f"[image: {image['mime_type']}, {_kb(len(image['data']) * 3 // 4)} KB]"


def anthropic_blocks(images: Sequence[dict[str, str]]) -> list[dict[str, Any]]:
    """Anthropic Messages API image blocks (base64 source)."""
    return [{"type": "image", "source": {"type": "base64", "media_type": i["mime_type"], "data": i["data"]}} for i in images]


def openai_parts(images: Sequence[dict[str, str]]) -> list[dict[str, Any]]:
    """OpenAI chat completions ``image_url`` content parts (data URLs)."""
    return [{"type": "image_url", "image_url": {"url": f"data:{i['mime_type']};base64,{i['data']}"}} for i in images]


def _kb(size: int) -> int:
    return max(1, round(size / 1024))
