"""The small subset of JSON Schema that tool ``input_schema`` s may use, and a checker for it.

Supported keywords: ``type`` (a name or a list of names), ``properties``, ``required``,
``additionalProperties`` (true/false), ``items``, ``enum``, ``minimum``, ``maximum``,
``minItems``, ``maxItems``, and the annotations ``description``, ``title``, ``default``.
"""

from __future__ import annotations

import json

__all__ = ["SUPPORTED_KEYWORDS", "schema_problems", "value_problems"]

SUPPORTED_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "description",
        "title",
        "default",
    }
)
_TYPE_NAMES = ("string", "integer", "number", "boolean", "array", "object", "null")


def _is_type(value: object, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    return value is None


def _type_names(schema: dict) -> list[str]:
    declared = schema.get("type")
    if declared is None:
        return []
    return [declared] if isinstance(declared, str) else list(declared)


def _json_type(value: object) -> str:
    for name in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _is_type(value, name):
            return name
    return type(value).__name__


def schema_problems(schema: object, path: str) -> list[tuple[str, str]]:
    """Problems with ``schema`` itself, as ``(field path, message)`` pairs; empty if none."""
    if not isinstance(schema, dict):
        return [(path, f"must be a JSON Schema object, got {_json_type(schema)}")]
    problems: list[tuple[str, str]] = []
    for key in schema:
        if key not in SUPPORTED_KEYWORDS:
            supported = ", ".join(sorted(SUPPORTED_KEYWORDS))
            problems.append(
                (f"{path}.{key}", f"keyword not supported by fake_llm (supported: {supported})")
            )
    names = schema.get("type")
    if names is not None:
        listed = [names] if isinstance(names, str) else names
        if not isinstance(listed, list) or not listed or any(n not in _TYPE_NAMES for n in listed):
            problems.append(
                (f"{path}.type", f"must be one of {', '.join(_TYPE_NAMES)} (or a list of them)")
            )
    properties = schema.get("properties")
    if properties is not None:
        if not isinstance(properties, dict):
            problems.append((f"{path}.properties", "must be an object mapping names to schemas"))
        else:
            for key, sub in properties.items():
                problems += schema_problems(sub, f"{path}.properties.{key}")
    required = schema.get("required")
    if required is not None:
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            problems.append((f"{path}.required", "must be a list of property names"))
        elif isinstance(properties, dict):
            for name in required:
                if name not in properties:
                    problems.append(
                        (f"{path}.required", f"{name!r} is required but not in properties")
                    )
    if "additionalProperties" in schema and not isinstance(schema["additionalProperties"], bool):
        problems.append(
            (f"{path}.additionalProperties", "fake_llm supports only true or false here")
        )
    if "items" in schema:
        problems += schema_problems(schema["items"], f"{path}.items")
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        problems.append((f"{path}.enum", "must be a non-empty list"))
    for key in ("minimum", "maximum", "minItems", "maxItems"):
        if key in schema and not _is_type(schema[key], "number"):
            problems.append((f"{path}.{key}", "must be a number"))
    return problems


def value_problems(value: object, schema: dict, path: str = "input") -> list[str]:
    """What is wrong with ``value`` against ``schema`` (a checked schema); empty when it fits."""
    names = _type_names(schema)
    if names and not any(_is_type(value, n) for n in names):
        return [
            f"{path} must be of type {' or '.join(names)}, got {_json_type(value)} {_short(value)}"
        ]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        options = ", ".join(json.dumps(v) for v in schema["enum"])
        problems.append(f"{path} must be one of {options}, got {_short(value)}")
    if _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path} must be at least {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path} must be at most {schema['maximum']}, got {value}")
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key in schema.get("required") or []:
            if key not in value:
                problems.append(f"{path} is missing the required key {key!r}")
        for key, item in value.items():
            if key in properties:
                problems += value_problems(item, properties[key], f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                known = ", ".join(repr(k) for k in properties) or "none"
                problems.append(f"{path} has the unknown key {key!r} (known keys: {known})")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(
                f"{path} must have at least {schema['minItems']} items, got {len(value)}"
            )
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(
                f"{path} must have at most {schema['maxItems']} items, got {len(value)}"
            )
        if isinstance(schema.get("items"), dict):
            for position, item in enumerate(value):
                problems += value_problems(item, schema["items"], f"{path}[{position}]")
    return problems


def _short(value: object, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
