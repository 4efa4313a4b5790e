"""Level 3's exercise (``03_power_cut``): a save that survives a power cut, graded on power-cut
crash states.

The student's ``save_checkpoint`` (answer cell ``l3_save_checkpoint``) runs with the lesson's
loop once per scenario, in the sandbox, watched from outside (:mod:`graders.sandbox`); from that
one recording :func:`graders.judge.power.judge_power` builds every state a power cut could leave
at every moment. Two checks, each judging its own failures, titled by what must hold (never by
the call that makes it hold: that is in the hints): checkpoint.json is never empty
(``data_not_synced``), and no save the loop relied on goes missing (``rename_not_synced``). A
failure of neither kind (the save is not atomic, the run raises) counts against both.
"""

from __future__ import annotations

import dataclasses

from graders.checks.answer_cells import AnswerCells, program_from, with_lesson_loop
from graders.checks.base import HINT_LINE, AnswerCell, Check, Exercise, register
from graders.checks.counting import fails_its_own_problems
from graders.checks.live import live_from_cells
from graders.checks.result import check_result
from graders.checks.traced import grade_recorded
from graders.judge.power import DATA_NOT_SYNCED, RENAME_NOT_SYNCED
from graders.text import plural

__all__ = [
    "EXERCISE", "NOTEBOOK", "grade_power_cuts", "POWER_PROBLEMS",
]

NOTEBOOK = "03_power_cut"
ANSWER_CELLS = (AnswerCell("l3_save_checkpoint", "save_checkpoint"),)
#: The two power-cut problems, each judged by its own check.
POWER_PROBLEMS = frozenset({DATA_NOT_SYNCED, RENAME_NOT_SYNCED})

#: At most this many moments are named after a cause; the rest are counted.
_SHOWN = 2


CHECKS = tuple(
    Check(
        id=f"l3_{name}{suffix}", notebook=NOTEBOOK,
        title=title + (", on a longer task" if hidden else ""), points=2 if hidden else 3,
        hidden=hidden,
        description=(f"runs your save with the given loop on {scenario} once, then builds every "
                     f"state a power cut could leave at each moment and checks that {what}"),
        answer_cells=("l3_save_checkpoint",), scenario=scenario, kinds=("power_cut",),
        success=f"after every power cut {what}", problems=frozenset({problem}),
        twin=f"l3_{name}" if hidden else "", label=f"l3_{label}{suffix}")
    # The ids are the gradebook's; the labels, what a student reads, name what must hold and
    # not the sync that makes it hold (issue 30).
    for name, label, title, problem, what in (
        ("file_synced", "never_empty", "after a power cut, checkpoint.json is never empty",
         DATA_NOT_SYNCED, "checkpoint.json held a complete save"),
        ("directory_synced", "no_save_lost",
         "after a power cut, no save the loop relied on is missing",
         RENAME_NOT_SYNCED, "no save the loop relied on was lost"))
    for suffix, hidden, scenario in (("", False, "support-tickets"),
                                     ("_hidden", True, "long-migration"))
)


def _problem(check) -> str:
    """The one power-cut problem ``check`` judges."""
    return next(iter(check.problems))


def _message(check, verdict) -> str:
    messages = (verdict.evidence or {}).get("messages") or {}
    return messages.get(_problem(check)) or verdict.message


def _cause(check, verdict) -> str:
    """The cause ``verdict`` fails ``check`` for, in one line that is the same at every moment."""
    causes = (verdict.evidence or {}).get("causes") or {}
    if _problem(check) in causes:
        return causes[_problem(check)]
    other = next((text for code, text in causes.items() if code not in POWER_PROBLEMS), None)
    return other or _message(check, verdict)


def _moments(labels: list[str]) -> str:
    shown = "; ".join(labels[:_SHOWN])
    more = len(labels) - _SHOWN
    return shown + (f"; and {plural(more, 'more moment')}" if more > 0 else "")


def _by_cause(check, failed: list) -> list:
    """One verdict per distinct cause, in the order each first happened, saying where."""
    groups: dict[str, list] = {}
    for verdict in failed:
        groups.setdefault(_cause(check, verdict), []).append(verdict)
    merged = []
    for cause, verdicts in groups.items():
        first = verdicts[0]
        labels = [(v.evidence or {}).get("moment") or v.point for v in verdicts]
        evidence = dict(first.evidence or {})
        evidence["points"] = [v.point for v in verdicts]
        merged.append(dataclasses.replace(
            first, message=f"{cause} It happens after a power cut {_moments(labels)}.",
            evidence=evidence))
    return merged


def _judge(check, verdicts: list):

    load = [v for v in verdicts if v.kind == "load"]
    if load:
        return check_result(check.id, False, f"Could not run your save on {check.scenario}: "
                            f"{load[0].message}", load)
    cuts = [v for v in verdicts if v.kind == "power_cut"]
    done = (f"Ran your save with the given loop on {check.scenario} and cut the power at "
            f"{plural(len(cuts), 'moment')} of the run")
    end = [v for v in verdicts if v.kind == "no_crash" and not v.passed]
    if end:
        return check_result(check.id, False, f"Ran your save with the given loop on "
                            f"{check.scenario} with no power cut at all, and that run already "
                            f"fails: {end[0].message}",
                            verdicts)
    failed = [v for v in cuts if fails_its_own_problems(check, v)]
    if not failed:
        return check_result(check.id, True, f"{done}: {check.success}.", verdicts)
    causes = _by_cause(check, failed)
    summary = (f"{done}; {len(failed)} of {len(cuts)} failed"
               + (f", for {len(causes)} different reasons." if len(causes) > 1 else "."))
    lines = " ".join(v.message for v in causes)
    kept = [v for v in verdicts if v not in failed] + causes
    result = check_result(check.id, False, f"{summary} {lines} {HINT_LINE}", kept)
    result.summary = summary
    return result


def program(cells: AnswerCells):
    """The save cell, then the lesson's loop that calls it."""
    return program_from(cells, ("l3_save_checkpoint",), with_lesson_loop)


def grade_power_cuts(cells: AnswerCells, checks: list, timeout: float | None,
                     fallback: bool = False) -> dict:
    """Grade the Level 3 answer cell of ``cells`` on ``checks`` from every state a power cut
    could leave; check id -> CheckResult."""
    return grade_recorded(
        cells, checks, timeout, fallback, what="a power cut can only be checked",
        verdicts_of=lambda harness, scenario: harness.power_verdicts(scenario), judge=_judge)


EXERCISE = register(Exercise(
    notebook=NOTEBOOK,
    title="Level 3: survive a power cut",
    answer_cells=ANSWER_CELLS,
    checks=CHECKS,
    grade=grade_power_cuts,
    live=live_from_cells,
    program=program,
    counts_against=fails_its_own_problems,
    fixture_cell="l3_save_checkpoint",
    gate="l3_predict_table",
    hints=f"{NOTEBOOK}.md",
))
