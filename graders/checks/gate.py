"""Commit first, then read the diagnosis: a check's findings held back until a written answer is
locked in (the lessons' ``predict()`` pattern, for an exercise).

Level 2's part 1 asks the student to name the two failures in their own words; its checks, run
top to bottom, would otherwise print that diagnosis first ("a torn write", "save point A").
Until the student locks part 1 in (a button under the answer, or ``lock_in_answer(...)`` in
code: `graders.teaching.predict.AnswerLock`), the self-check in their kernel shows only PASS or
FAIL, the points, and the crash points that failed; afterwards, everything. It is a commitment
device in the student's own kernel, not a grading rule: grading computes every verdict outside
the kernel and its feedback says everything.
"""

from __future__ import annotations

import dataclasses
import os

from graders.checks.base import CHECKS, LEVEL2
from graders.checks.result import CheckResult

__all__ = ["GATES", "HELD_BACK", "mark_answered", "answered", "forget_answers", "hold_back",
           "gated"]

#: Exercise notebook -> the grade_id of the written answer its checks wait for.
GATES = {LEVEL2: "l2_name_the_failures"}

#: Said in place of what a held-back check found.
HELD_BACK = ("What it found is held back until you have written part 1 and locked it in "
             "(the button under your answer): commit to your own diagnosis first.")

#: Set to "1" to show every finding at once (an instructor trying the notebook).
SHOW_ALL_ENV = "CHECKPOINT_LAB_SHOW_ALL"

_ANSWERED: set[str] = set()


def mark_answered(grade_id: str) -> None:
    """Record, in this kernel, that the written answer ``grade_id`` was locked in."""
    if grade_id not in GATES.values():
        raise KeyError(f"no check waits for {grade_id!r}; the gated answers are "
                       f"{', '.join(sorted(GATES.values()))}")
    _ANSWERED.add(grade_id)


def answered(grade_id: str) -> bool:
    """Whether the written answer ``grade_id`` was locked in, in this kernel."""
    return grade_id in _ANSWERED


def forget_answers() -> None:
    """Forget every locked-in answer, as a fresh kernel would."""
    _ANSWERED.clear()


def gated(check_id: str) -> bool:
    """Whether check ``check_id``'s findings are held back now, in this kernel."""
    gate = GATES.get(CHECKS[check_id].notebook)
    return (gate is not None and not answered(gate)
            and os.environ.get(SHOW_ALL_ENV) != "1")


def hold_back(result: CheckResult) -> CheckResult:
    """``result`` as a held-back check shows it: pass or fail, points, the crash points that
    failed; no message of the judge's. A check that could not run, or whose code did not get
    through a run without a crash, keeps its message: that is no diagnosis."""
    if not gated(result.check_id):
        return result
    crashed = [v for v in result.verdicts
               if not v.passed and not v.skipped and v.kind not in ("no_crash", "load")]
    if not result.passed and not crashed:
        return result
    verdicts = [dataclasses.replace(v, message="", evidence={"problems": ["held_back"]})
                if v in crashed else v for v in result.verdicts]
    if result.passed:
        message = "Every crash point passed."
    else:
        message = (f"{len(crashed)} crash point{'s' if len(crashed) != 1 else ''} failed. "
                   f"{HELD_BACK}")
    return dataclasses.replace(result, message=message, verdicts=verdicts, summary=message)
