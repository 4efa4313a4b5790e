"""Level 3's checks: a save that survives a power cut, graded on power-cut crash states.

The student's ``save_checkpoint`` (answer cell ``l3_save_checkpoint``) runs with the lesson's
loop once per scenario, in the sandbox, watched from outside (:mod:`graders.sandbox`); from that
one recording :func:`graders.judge.power.judge_power` builds every state a power cut could leave
at every moment. Two checks, each judging its own failures: the bytes reach the disk before the
rename (``data_not_synced``), and the rename reaches the disk before the loop runs the next tool
(``rename_not_synced``). A failure of neither kind (the save is not atomic, the run raises)
counts against both.
"""

from __future__ import annotations

from graders.checks.answer_cells import with_lesson_loop
from graders.checks.base import (
    ANSWER_CELLS,
    HIDDEN_SCENARIO,
    HINT_LINE,
    LEVEL3,
    VISIBLE_SCENARIO,
    Check,
    register,
)
from graders.checks.counting import counts_against_power
from graders.checks.result import check_result
from graders.checks.traced import grade_one_cell
from graders.text import plural

__all__ = [
    "grade_level3",
]


register(*(
    Check(
        f"l3_{name}{suffix}", LEVEL3, title + (", on a longer task" if hidden else ""),
        2 if hidden else 3, hidden,
        f"runs your save with the lesson's loop on {scenario} once, then builds every state a "
        f"power cut could leave at each moment and checks that {what}",
        ANSWER_CELLS[LEVEL3], scenario, ("power_cut",),
        success=f"after every power cut {what}", problem=problem)
    for name, title, problem, what in (
        ("file_synced", "the bytes reach the disk before the rename",
         "data_not_synced", "checkpoint.json held a complete save"),
        ("directory_synced", "the rename reaches the disk before the next tool",
         "rename_not_synced", "no save the loop relied on was lost"))
    for suffix, hidden, scenario in (("", False, VISIBLE_SCENARIO),
                                     ("_hidden", True, HIDDEN_SCENARIO))
))


def _message(check, verdict) -> str:
    messages = (verdict.evidence or {}).get("messages") or {}
    return messages.get(check.problem) or verdict.message


def _judge(check, verdicts: list):

    load = [v for v in verdicts if v.kind == "load"]
    if load:
        return check_result(check.id, False, f"Could not run your save on {check.scenario}: "
                            f"{load[0].message}", load)
    cuts = [v for v in verdicts if v.kind == "power_cut"]
    done = (f"Ran your save with the lesson's loop on {check.scenario} and cut the power at "
            f"{plural(len(cuts), 'moment')} of the run")
    end = [v for v in verdicts if v.kind == "no_crash" and not v.passed]
    if end:
        return check_result(check.id, False, f"Ran your save with the lesson's loop on "
                            f"{check.scenario}, and it did not get through: {end[0].message}",
                            verdicts)
    failed = [v for v in cuts if counts_against_power(check, v)]
    if not failed:
        return check_result(check.id, True, f"{done}: {check.success}.", verdicts)
    first = failed[0]
    summary = f"{done}; {len(failed)} of {len(cuts)} failed."
    result = check_result(check.id, False, f"{summary} At {first.point}: {_message(check, first)} "
                          f"{HINT_LINE}", verdicts)
    result.summary = summary
    return result


def grade_level3(source: str, checks: list, timeout: float | None,
                 fallback: bool = False) -> dict:
    """Grade the Level 3 answer cell in ``source`` on ``checks``; check id -> CheckResult."""
    return grade_one_cell(
        source, checks, timeout, notebook=LEVEL3, cell="l3_save_checkpoint",
        name="save_checkpoint", what="a power cut can only be checked", join=with_lesson_loop,
        verdicts_of=lambda harness, scenario: harness.power_verdicts(scenario), judge=_judge,
        fallback=fallback)
