"""Level 4's exercise (``04_parallel_tool_calls``): several tool calls in one turn, graded on the
crash matrix.

The student's ``run_agent`` (answer cell ``l4_run_agent``) runs with the given atomic save (Level
2's reference ``save_checkpoint``, a locked cell before it) once per scenario, in the sandbox,
watched from outside; every crash state of that one recording is judged by
:func:`graders.judge.parallel_rules.check`. Three checks, each judging its own problems
(``Check.problems``): every call in flight is on record (``IN_FLIGHT_PROBLEMS``), every finished
call is kept with its result (``KEPT_PROBLEMS``), one result message per turn answering every
call, in any order (``MESSAGE_PROBLEMS``). A failure of none of these kinds (the run raised,
hung, the save was torn) counts against all three.
"""

from __future__ import annotations

from graders.checks.answer_cells import AnswerCells, program_from
from graders.checks.base import HINT_LINE, AnswerCell, Check, Exercise, register
from graders.checks.counting import fails_its_own_problems
from graders.checks.live import live_from_cells
from graders.checks.result import check_result
from graders.checks.traced import grade_recorded, lower_first
from graders.judge import parallel_rules
from graders.judge.parallel_rules import IN_FLIGHT_PROBLEMS, KEPT_PROBLEMS, MESSAGE_PROBLEMS
from graders.loop import lesson_loop
from graders.submission import Part
from graders.text import plural

__all__ = [
    "EXERCISE", "NOTEBOOK", "grade_calls_in_one_turn", "given_save_source", "with_given_save",
]

NOTEBOOK = "04_parallel_tool_calls"
ANSWER_CELLS = (AnswerCell("l4_run_agent", "run_agent"),)
#: Level 4's scenarios: several tool calls in one turn.
VISIBLE_SCENARIO = "incident-triage"
HIDDEN_SCENARIO = "release-audit"
KINDS = ("killed_during_tool", "killed_during_model_call", "torn_write", "killed_before_rename")

CHECKS = tuple(
    Check(
        id=f"l4_{name}{suffix}", notebook=NOTEBOOK,
        title=title + (", on a longer task" if hidden else ""), points=2 if hidden else 3,
        hidden=hidden,
        description=(f"runs your run_agent with the given save on {scenario} once, then checks "
                     "every state a kill could leave (while each tool runs, while each model "
                     f"call is in flight, in every save) and that {what}"),
        answer_cells=("l4_run_agent",), scenario=scenario, kinds=KINDS,
        success=f"after every crash {what}", problems=frozenset(group),
        twin=f"l4_{name}" if hidden else "",
    )
    for name, title, group, what in (
        ("no_call_lost", "every call in flight on record", IN_FLIGHT_PROBLEMS,
         "every tool that had started was listed in pendingToolUse or recorded"),
        ("results_kept", "finished calls kept with their results", KEPT_PROBLEMS,
         "every call that had returned was kept with its result"),
        ("one_result_message", "one result message per turn", MESSAGE_PROBLEMS,
         "messages held one result message per turn, answering every call, valid for the API"))
    for suffix, hidden, scenario in (("", False, VISIBLE_SCENARIO),
                                     ("_hidden", True, HIDDEN_SCENARIO))
)

_GIVEN_WHERE = "the given save_checkpoint (the locked cell)"


def given_save_source() -> str:
    """The given atomic ``save_checkpoint`` with the imports and constant it uses: the code of
    the notebook's locked cell (the grader's own copy, :mod:`graders.loop.lesson_loop`)."""
    return lesson_loop.source("CHECKPOINT", "save_checkpoint")


def _message(check, verdict) -> str:
    messages = (verdict.evidence or {}).get("messages") or {}
    own = [key for key in (verdict.evidence or {}).get("problems") or ()
           if key in check.problems and key in messages]
    return messages[own[0]] if own else verdict.message


def _judge(check, verdicts: list):

    load = [v for v in verdicts if v.kind == "load"]
    if load:
        return check_result(check.id, False, f"Could not run your code on {check.scenario}: "
                            f"{load[0].message}", load)
    crashes = [v for v in verdicts if v.kind != "no_crash"]
    done = (f"Ran your run_agent on {check.scenario} to the end and at "
            f"{plural(len(crashes), 'crash point')} (kills while each tool runs, while each "
            "model call is in flight, and in every save)")
    end = [v for v in verdicts if v.kind == "no_crash" and fails_its_own_problems(check, v)]
    if end:
        # The table shows the summary and the cause once, under it (no_crash).
        result = check_result(check.id, False, f"Ran your run_agent on {check.scenario} with no "
                              f"crash at all: {lower_first(_message(check, end[0]))} "
                              f"{HINT_LINE}", verdicts)
        result.summary = (f"Ran your run_agent on {check.scenario} with no crash at all, and "
                          "that run already fails this check (no_crash, below).")
        return result
    failed = [v for v in crashes if fails_its_own_problems(check, v)]
    if not failed:
        return check_result(check.id, True, f"{done}: {check.success}.", verdicts)
    first = failed[0]
    summary = f"{done}; {len(failed)} of {len(crashes)} failed."
    result = check_result(check.id, False, f"{summary} At {first.point}: "
                          f"{_message(check, first)} {HINT_LINE}", verdicts)
    result.summary = summary
    return result


def with_given_save(part: Part) -> list[Part]:
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


def program(cells: AnswerCells):
    """The given save, then the student's run_agent cell."""
    return program_from(cells, ("l4_run_agent",), with_given_save)


def grade_calls_in_one_turn(cells: AnswerCells, checks: list, timeout: float | None,
                            fallback: bool = False) -> dict:
    """Grade the Level 4 answer cell of ``cells`` on ``checks``, every crash state held to the
    rules of several calls in one turn; check id -> CheckResult."""
    return grade_recorded(
        cells, checks, timeout, fallback, what="several tool calls in one turn are checked",
        verdicts_of=lambda harness, scenario: harness.run_matrix(scenario), judge=_judge)


EXERCISE = register(Exercise(
    notebook=NOTEBOOK,
    title="Level 4: several tool calls in one turn",
    answer_cells=ANSWER_CELLS,
    checks=CHECKS,
    grade=grade_calls_in_one_turn,
    live=live_from_cells,
    program=program,
    counts_against=fails_its_own_problems,
    rules=parallel_rules.check,
    gate="l4_why_keep_results",
    hints=f"{NOTEBOOK}.md",
))
