"""Stable ids, pseudo-random picks and serialization: sha256 and sorted JSON, never `hash`."""

from __future__ import annotations

import hashlib
import json

__all__ = ["tool_use_id", "message_id", "digest_int", "canonical_json"]

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def digest_int(*parts: object) -> int:
    """A large non-negative integer determined only by ``parts`` (same in every process)."""
    seed = "\x1f".join(str(part) for part in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(seed).digest(), "big")


def _base62(number: int, length: int) -> str:
    chars = []
    for _ in range(length):
        number, digit = divmod(number, 62)
        chars.append(_BASE62[digit])
    return "".join(chars)


def tool_use_id(scenario: str, turn: int, block: int = 0) -> str:
    """The id of tool_use block ``block`` (from 0) of ``turn`` (1-based) in ``scenario``.

    ``toolu_01...``; the first block of a turn keeps the id a one-call turn always had.
    """
    parts = (scenario, "tool_use", turn) if block == 0 else (scenario, "tool_use", turn, block)
    return "toolu_01" + _base62(digest_int(*parts), 22)


def message_id(scenario: str, turn: int) -> str:
    """The id of the model's response in ``turn`` (1-based) of ``scenario``: ``msg_01...``."""
    return "msg_01" + _base62(digest_int(scenario, "message", turn), 22)


def canonical_json(value: object) -> str:
    """``value`` as JSON with sorted keys and no spaces: equal values give equal strings.

    A value JSON cannot hold (a set, an object) gives its ``repr`` instead, which equals no
    scenario's JSON, so it is refused as a mismatch rather than crashing the comparison.
    """
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
