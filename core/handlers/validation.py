"""Tool-argument validation against the tool's JSON schema (with ``jsonschema``)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=128)
def _validator_for(schema_key: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(schema_key))


def prewarm() -> None:
    """Import ``jsonschema`` now (blocking, 30-60 ms: call from a thread), not at a session's first tool call on the event loop."""
    import jsonschema  # noqa: F401 - for its side effect

    _validator_for(json.dumps({"type": "object"}, sort_keys=True))


def validate_arguments(schema: dict[str, Any], arguments: Any) -> str:
    """An empty string when ``arguments`` fit ``schema``, else a message the model can act on."""
    if not isinstance(arguments, dict):
        return "arguments must be a JSON object"
    if not schema:
        return ""
    validator = _validator_for(json.dumps(schema, sort_keys=True))
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    if not errors:
        return ""
    messages = []
    for error in errors[:3]:
        where = "/".join(str(p) for p in error.absolute_path)
        messages.append(f"{where}: {error.message}" if where else error.message)
    return "; ".join(messages)


def schema_problem(schema: dict[str, Any]) -> str:
    """An empty string when ``schema`` is a valid JSON schema, else what is wrong with it."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    return ""
