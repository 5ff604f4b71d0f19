"""Moved to :mod:`core.tokens` (the bottom floor); kept for an importer with other edits in flight (handlers/base)."""

from core.tokens import estimate_request_tokens  # noqa: F401
