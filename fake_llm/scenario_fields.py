"""Checking one object of a scenario file: its keys, their types, and errors that name the field.

`InvalidField` carries the field's path (``turns[2].content[1].input``); `fake_llm.scenario`
turns it into a `ScenarioError` that also names the file.
"""

from __future__ import annotations

__all__ = ["InvalidField", "check_keys", "join_path"]


class InvalidField(Exception):
    """A field of a scenario file breaks the format: ``path`` says which, ``message`` how."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, message)
        self.path = path
        self.message = message


def check_keys(
    value: object, path: str, required: dict[str, type], optional: dict[str, type]
) -> dict:
    """``value`` itself, once it is an object with the ``required`` keys, maybe some
    ``optional`` ones and no others, each of its type (strings non-empty); else `InvalidField`."""
    if not isinstance(value, dict):
        raise InvalidField(path, f"must be an object, got {type(value).__name__}")
    for key in value:
        if key not in required and key not in optional:
            known = ", ".join(list(required) + list(optional))
            raise InvalidField(join_path(path, key), f"unknown field (known fields: {known})")
    for key, kind in {**required, **optional}.items():
        if key not in value:
            if key in required:
                raise InvalidField(join_path(path, key), "missing required field")
            continue
        if not isinstance(value[key], kind) or isinstance(value[key], bool) and kind is not bool:
            raise InvalidField(
                join_path(path, key),
                f"must be {_kind_name(kind)}, got {type(value[key]).__name__}",
            )
        if kind is str and not value[key].strip():
            raise InvalidField(join_path(path, key), "must not be empty")
    return value


def _kind_name(kind: type | tuple) -> str:
    names = {
        str: "a string",
        int: "an integer",
        list: "a list",
        dict: "an object",
        bool: "true or false",
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def join_path(path: str, key: str) -> str:
    """The path of field ``key`` inside the object at ``path`` (``""`` is the file's top)."""
    return f"{path}.{key}" if path else key
