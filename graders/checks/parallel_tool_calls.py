"""Level 4's checks: several tool calls in one turn, graded on the crash matrix.

The student's ``run_agent`` (answer cell ``l4_run_agent``) runs with the given atomic save (Level
2's reference ``save_checkpoint``, a locked cell before it) once per scenario, in the sandbox,
watched from outside; every crash state of that one recording is judged by
:func:`graders.judge.parallel_rules.check`. Three checks, each judging its own problems
(``Check.problem`` names the group): every call in flight is on record (``in_flight``), every
finished call is kept with its result (``kept``), one result message per turn answering every
call, in any order (``message``). A failure of none of these kinds (the run raised, hung, the
save was torn) counts against all three.
"""

from __future__ import annotations

from graders.checks.base import (
    ANSWER_CELLS,
    HINT_LINE,
    L4_HIDDEN,
    L4_KINDS,
    L4_VISIBLE,
    LEVEL4,
    Check,
    register,
)
from graders.checks.counting import GROUPS, counts_against_parallel
from graders.checks.result import check_result
from graders.checks.traced import grade_one_cell
from graders.judge import parallel_rules
from graders.loop import lesson_loop
from graders.submission import Part
from graders.text import plural

__all__ = [
    "grade_level4", "given_save_source", "submission_source", "GROUPS",
]


register(*(
    Check(
        f"l4_{name}{suffix}", LEVEL4, title + (", on a longer task" if hidden else ""),
        2 if hidden else 3, hidden,
        f"runs your run_agent with the given save on {scenario} once, then checks every "
        f"state a kill could leave (while each tool runs, while each model call is in "
        f"flight, in every save) and that {what}",
        ANSWER_CELLS[LEVEL4], scenario, L4_KINDS,
        success=f"after every crash {what}", problem=group)
    for name, title, group, what in (
        ("no_call_lost", "every call in flight on record", "in_flight",
         "every tool that had started was listed in pendingToolUse or recorded"),
        ("results_kept", "finished calls kept with their results", "kept",
         "every call that had returned was kept with its result"),
        ("one_result_message", "one result message per turn", "message",
         "messages held one result message per turn, answering every call, valid for the API"))
    for suffix, hidden, scenario in (("", False, L4_VISIBLE), ("_hidden", True, L4_HIDDEN))
))

_GIVEN_WHERE = "the given save_checkpoint (the locked cell)"


def given_save_source() -> str:
    """The given atomic ``save_checkpoint`` with the imports and constant it uses: the code of
    the notebook's locked cell (the grader's own copy, :mod:`graders.loop.lesson_loop`)."""
    return lesson_loop.source("CHECKPOINT", "save_checkpoint")


def _message(check, verdict) -> str:
    messages = (verdict.evidence or {}).get("messages") or {}
    own = [key for key in (verdict.evidence or {}).get("problems") or ()
           if key in GROUPS[check.problem] and key in messages]
    return messages[own[0]] if own else verdict.message


def _lower_first(text: str) -> str:
    """``text`` to follow a colon: its first letter in lower case (never an acronym's)."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


def _judge(check, verdicts: list):

    load = [v for v in verdicts if v.kind == "load"]
    if load:
        return check_result(check.id, False, f"Could not run your code on {check.scenario}: "
                            f"{load[0].message}", load)
    crashes = [v for v in verdicts if v.kind != "no_crash"]
    done = (f"Ran your run_agent on {check.scenario} to the end and at "
            f"{plural(len(crashes), 'crash point')} (kills while each tool runs, while each "
            "model call is in flight, and in every save)")
    end = [v for v in verdicts if v.kind == "no_crash" and counts_against_parallel(check, v)]
    if end:
        # The table shows the summary and the cause once, under it (no_crash).
        result = check_result(check.id, False, f"Ran your run_agent on {check.scenario} with no "
                              f"crash at all: {_lower_first(_message(check, end[0]))} "
                              f"{HINT_LINE}", verdicts)
        result.summary = (f"Ran your run_agent on {check.scenario} with no crash at all, and it "
                          "did not get through (no_crash, below).")
        return result
    failed = [v for v in crashes if counts_against_parallel(check, v)]
    if not failed:
        return check_result(check.id, True, f"{done}: {check.success}.", verdicts)
    first = failed[0]
    summary = f"{done}; {len(failed)} of {len(crashes)} failed."
    result = check_result(check.id, False, f"{summary} At {first.point}: "
                          f"{_message(check, first)} {HINT_LINE}", verdicts)
    result.summary = summary
    return result


def submission_source(part: Part) -> list[Part]:
    """The parts graded for answer cell ``part``: the given save, then the student's cell.

    A ``from __future__`` import in the cell goes first, where Python requires it.
    """
    lines = part.code.splitlines()
    future = [line for line in lines if line.startswith("from __future__ import")]
    code = part.code
    if future:  # moved up; an empty line keeps the cell's line numbers
        code = "\n".join("" if line in future else line for line in lines) + "\n"
    head = [Part(part.where, "".join(f"{line}\n" for line in future))] if future else []
    return [*head, Part(_GIVEN_WHERE, given_save_source()), Part(part.where, code)]


def grade_level4(source: str, checks: list, timeout: float | None,
                 fallback: bool = False) -> dict:
    """Grade the Level 4 answer cell in ``source`` on ``checks``; check id -> CheckResult."""
    return grade_one_cell(
        source, checks, timeout, notebook=LEVEL4, cell="l4_run_agent", name="run_agent",
        what="several tool calls in one turn are checked", join=submission_source,
        verdicts_of=lambda harness, scenario: harness.run_matrix(scenario), judge=_judge,
        checker=parallel_rules.check, fallback=fallback)
