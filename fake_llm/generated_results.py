"""Generated tool results: a compact ``{"generate": ...}`` spec in a scenario file, as text.

The same spec expands to the same text on every load: each picked value comes from sha256 of the
scenario, the turn, the row and the field (`fake_llm.ids.digest_int`). The format is in
``fake_llm/README.md``.
"""

from __future__ import annotations

import string
from collections.abc import Callable

from .ids import digest_int
from .scenario_fields import InvalidField, check_keys

__all__ = ["generate_result"]


def generate_result(spec: dict, where: str, scenario: str, turn: int | str) -> str:
    """The text ``spec`` (``{"generate": {...}}`` at field ``where``) expands to.

    ``turn`` seeds the picks with the scenario's name (a number, or ``"turn.block"`` for a later
    block of a turn with several calls). Raises `InvalidField` for a spec that breaks the format.
    """
    check_keys(spec, where, {"generate": dict}, {})
    where = f"{where}.generate"
    gen = check_keys(
        spec["generate"],
        where,
        {"rows": int, "row": str},
        {"header": str, "footer": str, "choices": dict, "ranges": dict},
    )
    if not 1 <= gen["rows"] <= 100_000:
        raise InvalidField(f"{where}.rows", "must be between 1 and 100000")
    pickers: dict[str, Callable[[int], object]] = {"n": lambda n: n}
    for field, options in gen.get("choices", {}).items():
        if (
            not isinstance(options, list)
            or not options
            or not all(isinstance(o, str) for o in options)
        ):
            raise InvalidField(f"{where}.choices.{field}", "must be a non-empty list of strings")
        pickers[field] = lambda n, f=field, o=options: o[digest_int(scenario, turn, n, f) % len(o)]
    for field, bounds in gen.get("ranges", {}).items():
        valid = (
            isinstance(bounds, list) and len(bounds) == 2 and all(type(b) is int for b in bounds)
        )
        if not valid or bounds[0] > bounds[1]:
            raise InvalidField(
                f"{where}.ranges.{field}", "must be [low, high], two integers with low <= high"
            )
        low, span = bounds[0], bounds[1] - bounds[0] + 1
        pickers[field] = lambda n, f=field, lo=low, s=span: (
            lo + digest_int(scenario, turn, n, f) % s
        )
    try:
        fields = [
            name for _, name, _, _ in string.Formatter().parse(gen["row"]) if name is not None
        ]
    except ValueError as error:
        raise InvalidField(f"{where}.row", f"not a valid template: {error}") from None
    for name in fields:
        if name not in pickers:
            known = ", ".join("{" + k + "}" for k in pickers)
            raise InvalidField(f"{where}.row", f"unknown placeholder {{{name}}} (known: {known})")
    lines = [gen["header"]] if "header" in gen else []
    try:
        for n in range(1, gen["rows"] + 1):
            lines.append(gen["row"].format_map({name: pickers[name](n) for name in set(fields)}))
    except (ValueError, TypeError) as error:
        raise InvalidField(f"{where}.row", f"cannot fill the template: {error}") from None
    if "footer" in gen:
        lines.append(gen["footer"])
    return "\n".join(lines)
