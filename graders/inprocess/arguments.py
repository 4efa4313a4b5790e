"""The harness's arguments, checked: a scenario (by name or as is), crash-point kinds, an id's kind.

Bad input gets a :class:`~graders.inprocess.errors.HarnessError` that names what is known.
"""

from __future__ import annotations

from collections.abc import Iterable

from graders.inprocess.errors import HarnessError
from graders.judge.crash_points import KINDS

__all__ = ["scenario_of", "point_kind", "checked_kinds"]


def scenario_of(scenario):
    """The fake_llm Scenario named ``scenario`` (a Scenario is returned as is)."""
    import fake_llm

    if isinstance(scenario, str):
        try:
            return fake_llm.load_scenario(scenario)
        except fake_llm.FakeLLMError as err:
            raise HarnessError(str(err)) from None
    return scenario


def point_kind(point_id: str) -> str:
    """The kind a crash point id starts with (``"killed_during_tool"``), or ``"unknown"``."""
    for kind in sorted(KINDS, key=len, reverse=True):
        if point_id.startswith(kind):
            return kind
    return "unknown"


def checked_kinds(kinds: Iterable[str] | None) -> set[str]:
    """``kinds`` as a set (every kind for ``None``); an unknown kind is a HarnessError."""
    if kinds is None:
        return set(KINDS)
    kinds = {kinds} if isinstance(kinds, str) else set(kinds)
    unknown = kinds - set(KINDS)
    if unknown:
        raise HarnessError(f"unknown crash point kind(s) {sorted(unknown)}; "
                           f"the kinds are {', '.join(KINDS)}")
    return kinds
