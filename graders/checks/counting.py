"""Which verdicts count against which check: each check judges its own crash points and its own
problems, and nothing is excused because another check fails too.

Level 2's checks judge their crash point kinds (``Check.kinds``); Level 3's their power-cut cause
(``Check.problem``); Level 4's their group of problems. The self-check table, the feedback and
every exercise's module ask here.
"""

from __future__ import annotations

import re

from graders.checks.base import ATOMIC_KINDS, CHECKS, LEVEL3, LEVEL4, SAVE_POINT_A_PROBLEMS
from graders.judge.parallel_rules import IN_FLIGHT_PROBLEMS, KEPT_PROBLEMS, MESSAGE_PROBLEMS
from graders.judge.power import DATA_NOT_SYNCED, RENAME_NOT_SYNCED

__all__ = [
    "counts_against", "counts_against_power", "counts_against_parallel", "kind_of",
    "POWER_PROBLEMS", "GROUPS",
]


#: The two power-cut problems, each judged by its own check.
POWER_PROBLEMS = frozenset({DATA_NOT_SYNCED, RENAME_NOT_SYNCED})

#: Each Level 4 check's group of problems (``Check.problem``) and its problem codes.
GROUPS: dict[str, frozenset[str]] = {
    "in_flight": frozenset(IN_FLIGHT_PROBLEMS),
    "kept": frozenset(KEPT_PROBLEMS),
    "message": frozenset(MESSAGE_PROBLEMS),
}
_ALL = frozenset().union(*GROUPS.values())


def kind_of(verdict) -> str:
    kind = getattr(verdict, "kind", None)
    if kind:
        return kind
    return re.sub(r"_\d+$", "", re.sub(r"_save_\d+$", "", verdict.point))


def _fails_its_own_group(verdict, mine: frozenset[str], every: frozenset[str]) -> bool:
    """A check that judges a group of problems: ``verdict`` fails it when it names a problem of
    ``mine``, one of no check's group (``every``), or none at all (the run raised, hung...)."""
    if verdict.passed or getattr(verdict, "skipped", False):
        return False
    problems = set((verdict.evidence or {}).get("problems") or ())
    return not problems or bool(problems & mine) or bool(problems - every)


def counts_against_power(check, verdict) -> bool:
    """Whether ``verdict`` fails ``check`` (a Level 3 check, judging ``check.problem``)."""
    return _fails_its_own_group(verdict, frozenset({check.problem}), POWER_PROBLEMS)


def counts_against_parallel(check, verdict) -> bool:
    """Whether ``verdict`` fails ``check`` (a Level 4 check, judging group ``check.problem``)."""
    return _fails_its_own_group(verdict, GROUPS[check.problem], _ALL)


def counts_against(check_id: str, verdict) -> bool:
    """Whether ``verdict`` fails check ``check_id``.

    Each check judges its own crash points (``Check.kinds``, and ``no_crash``), and nothing is
    excused there because another check also fails: the judge judges a kill in the middle of
    a save only for what the save left on disk, and a kill at a call for which tools left a
    trace, so a fix of one failure earns that check's points on its own.
    """
    if verdict.passed or getattr(verdict, "skipped", False):
        return False
    if CHECKS[check_id].notebook == LEVEL4:  # judges its own group of problems
        return counts_against_parallel(CHECKS[check_id], verdict)
    if CHECKS[check_id].notebook == LEVEL3:  # a power-cut check judges its own cause
        return counts_against_power(CHECKS[check_id], verdict)
    if kind_of(verdict) == "no_crash":
        # the end of the run is shared: a save point problem found there is save point A's
        problems = set((verdict.evidence or {}).get("problems") or ())
        if problems and problems <= SAVE_POINT_A_PROBLEMS | {"no_save_point_b", "incomplete"}:
            return CHECKS[check_id].kinds != ATOMIC_KINDS
    return True
