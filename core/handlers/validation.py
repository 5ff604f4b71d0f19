"""Tool-argument validation against the tool's JSON schema (with ``jsonschema``)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=128)
def _validator_for(schema_key: str) -> Any:
    import json

    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(schema_key))


def validate_arguments(schema: dict[str, Any], arguments: Any) -> str:
    """An empty string when ``arguments`` fit ``schema``, else a message the model can act on."""
    import json

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
