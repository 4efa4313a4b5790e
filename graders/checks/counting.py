"""Which verdicts count against which check: each check judges its own crash points and its own
problems, and nothing is excused because another check fails too.

Each exercise's record says how (`graders.checks.base.Exercise.counts_against`): by crash point
kind, by the check's own problems (:func:`fails_its_own_problems`), or every failure. The
self-check table, the feedback, the record of a result and every exercise's module ask here.
"""

from __future__ import annotations

import re

from graders.checks.base import CHECKS, Check, checks_for, exercise_of

__all__ = ["counts_against", "fails_its_own_problems", "kind_of"]


def kind_of(verdict) -> str:
    """The crash point kind of ``verdict`` (``torn_write``, ``no_crash``, ``power_cut``...)."""
    kind = getattr(verdict, "kind", None)
    if kind:
        return kind
    return re.sub(r"_\d+$", "", re.sub(r"_save_\d+$", "", verdict.point))


def _problems(verdict) -> set[str]:
    return set((verdict.evidence or {}).get("problems") or ())


def fails_its_own_problems(check: Check, verdict) -> bool:
    """For a check that judges its own problems (``check.problems``): ``verdict`` fails it when it
    names one of them, a problem no check of the exercise judges, or none at all (the run
    raised, hung...)."""
    if verdict.passed or getattr(verdict, "skipped", False):
        return False
    every = frozenset().union(*(c.problems for c in checks_for(check.notebook)))
    problems = _problems(verdict)
    return not problems or bool(problems & check.problems) or bool(problems - every)


def counts_against(check_id: str, verdict) -> bool:
    """Whether ``verdict`` fails check ``check_id``.

    Each check judges its own crash points (``Check.kinds``, and ``no_crash``) or its own
    problems, and nothing is excused there because another check also fails: the judge judges a
    kill in the middle of a save only for what the save left on disk, and a kill at a call for
    which tools left a trace, so a fix of one failure earns that check's points on its own.
    """
    if verdict.passed or getattr(verdict, "skipped", False):
        return False
    check = CHECKS[check_id]
    return exercise_of(check).counts_against(check, verdict)
