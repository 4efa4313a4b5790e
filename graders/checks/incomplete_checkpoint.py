"""Level 1's exercise (``01_incomplete_checkpoint``): the five fields an incomplete checkpoint
lacks (``l1_missing_fields``), and a save that writes all six (``l1_saves_all_six``).

The MISSING_FIELDS cell runs alone in the sandbox (or, for a self-check where there is none, in
a namespace of its own in this process) and only what it defined comes back; the save runs with
the lesson's loop (:mod:`graders.loop.lesson_loop`), to the end and killed while each tool runs.
"""

from __future__ import annotations

import re

from graders.checks.answer_cells import AnswerCells, program_from, syntax_problem, with_lesson_loop
from graders.checks.base import AnswerCell, Check, Exercise, register
from graders.checks.incomplete_checkpoint_save import (
    MISSING_IN_STARTER,
    WITHOUT,
    grade_saves_all_six,
)
from graders.checks.live import live_from_cells
from graders.checks.result import CheckResult, check_result
from graders.loop import lesson_loop
from graders.loop.protocol import SIX_FIELDS
from graders.sandbox.serve import SandboxUnavailable
from graders.submission import Submission

__all__ = [
    "EXERCISE", "NOTEBOOK", "grade_fields", "grade_save", "grade_missing_fields",
    "judge_missing_fields", "describe", "evaluate_answer_cell",
]

NOTEBOOK = "01_incomplete_checkpoint"
#: How long the MISSING_FIELDS answer cell may run in its fresh process, in seconds.
ANSWER_CELL_TIMEOUT = 20.0
ANSWER_CELLS = (AnswerCell("l1_missing_fields_answer", "MISSING_FIELDS"),
                AnswerCell("l1_save_checkpoint", "save_checkpoint"))

CHECKS = (
    Check(
        id="l1_missing_fields", notebook=NOTEBOOK, title="the five missing fields", points=2,
        hidden=False,
        description=("runs your MISSING_FIELDS cell in a fresh Python process and compares the "
                     "set with the fields the starter's checkpoint lacks"),
        answer_cells=("l1_missing_fields_answer",),
    ),
    Check(
        id="l1_saves_all_six", notebook=NOTEBOOK, title="all six fields saved", points=3,
        hidden=False,
        description=("runs your save_checkpoint with the lesson's loop on support-tickets, to "
                     "the end and killed while each tool runs, and reads the six fields back "
                     "from checkpoint.json"),
        answer_cells=("l1_save_checkpoint",), scenario="support-tickets",
    ),
)


def describe(value) -> dict:
    """A JSON-able description of the student's MISSING_FIELDS value (no judgement)."""
    description = {"defined": True, "type": type(value).__name__, "repr": repr(value)[:300]}
    if isinstance(value, set | frozenset | list | tuple):
        items = []
        for item in value:
            items.append({"str": item} if isinstance(item, str) else {"repr": repr(item)[:100]})
        description["items"] = items
    return description


def evaluate_answer_cell(code: str, timeout: float = ANSWER_CELL_TIMEOUT,
                          fallback: bool = False) -> dict:
    """Run the MISSING_FIELDS answer cell in the sandbox (or, for a self-check where there is
    none, in a namespace of its own in this process); describe what it defined."""
    from graders.grading.observers import grading_problem, observer, sandboxed
    from graders.sandbox.serve import SandboxUnavailable, record

    problem = grading_problem()
    if problem is None and not (fallback and observer() != "sandbox"):
        rec = record(code, None, mode="missing_fields", timeout=timeout,
                     sandbox=sandboxed())
    elif not fallback:
        raise SandboxUnavailable(problem)
    else:
        from graders.inprocess.record import record_in_process

        rec = record_in_process(code, None, mode="missing_fields", timeout=timeout)
    if rec.described is not None:
        return rec.described
    if rec.ended == "not_loaded":
        error = (rec.load or {}).get("error") or {}
        return {"error": f"{error.get('type')}: {error.get('message', '')}"[:300]}
    if rec.ended == "hung":
        return {"problem": f"the answer cell was still running after {timeout:g} s; it "
                "only needs to define MISSING_FIELDS"}
    return {"problem": "the answer cell ended the Python process (exit status "
            f"{rec.exit_code}) before MISSING_FIELDS could be read"}


def _closest_field(name: str) -> str | None:
    def squash(text: str) -> str:
        return re.sub(r"[^a-z]", "", text.lower())

    return next((f for f in SIX_FIELDS if squash(f) == squash(name)), None)


def judge_missing_fields(description: dict) -> tuple[bool, str]:
    """Judge a `_describe` result (or an evaluation problem) against the five missing fields."""
    done = "Ran your MISSING_FIELDS cell in a fresh Python process"
    expected = "Expected a set of the five field names the starter's checkpoint lacks."
    if "problem" in description:
        return False, f"{done}, but {description['problem']}. {expected}"
    if "error" in description:
        return False, f"{done}; it raised {description['error']}. {expected}"
    if not description.get("defined"):
        return False, (f"{done}; it does not define MISSING_FIELDS. Keep the name "
                       f"MISSING_FIELDS in the cell. {expected}")
    items = description.get("items")
    if not isinstance(items, list):
        return False, (f"{done}: MISSING_FIELDS is a {description.get('type')} "
                       f"({description.get('repr')}). {expected[:-1]}, written like "
                       '{"a", "b"}.')
    names = [i["str"] for i in items if isinstance(i, dict) and isinstance(i.get("str"), str)]
    others = [i.get("repr", "?") for i in items
              if not (isinstance(i, dict) and isinstance(i.get("str"), str))]
    given = set(names)
    wanted = set(MISSING_IN_STARTER)
    if not given and not others:
        return False, f"{done}: MISSING_FIELDS is empty. {expected}"
    found = given & wanted
    notes = []
    for name in sorted(given - wanted):
        close = _closest_field(name)
        if name == "messages":
            notes.append("messages is the one field the starter does save")
        elif close and close not in given:
            notes.append(f"{name!r} is not spelled as the checkpoint spells its key {close!r}")
        elif close:
            notes.append(f"{name!r} names {close!r} a second time, spelled differently")
        else:
            notes.append(f"{name!r} is not one of the six fields")
    notes.extend(f"{item} is not a field name (write each name as a string)" for item in others)
    lacking = [f for f in MISSING_IN_STARTER if f not in given
               and not any(_closest_field(n) == f for n in given - wanted)]
    if len(lacking) == 1:
        notes.append(f"{lacking[0]} is missing; without it {WITHOUT[lacking[0]]}")
    elif lacking:  # naming them would be the answer itself
        notes.append(f"{len(lacking)} more of the fields the starter's checkpoint lacks are not "
                     "in it (compare its save with the six fields of lesson 01)")
    if not notes:
        return True, (f"{done}: MISSING_FIELDS names all five fields the starter's checkpoint "
                      f"lacks ({', '.join(MISSING_IN_STARTER)}).")
    return False, (f"{done}: MISSING_FIELDS has {len(found)} of the 5: " + "; ".join(notes)
                   + ".")


def grade_missing_fields(code: str | None, problem: str | None,
                          timeout: float | None = None, fallback: bool = False) -> CheckResult:
    check_id = "l1_missing_fields"
    if code is None:
        return check_result(check_id, False, f"Could not run this check: {problem}.")
    syntax = syntax_problem(code, "the answer cell l1_missing_fields_answer")
    if syntax:
        return check_result(check_id, False, syntax + ".")
    from graders.grading.observers import observer

    timeout = ANSWER_CELL_TIMEOUT if timeout is None else timeout
    passed, message = judge_missing_fields(evaluate_answer_cell(code, timeout, fallback))
    if fallback and observer() != "sandbox":  # it ran in this process, in a namespace of its own
        message = message.replace(" in a fresh Python process", "")
    return check_result(check_id, passed, message)


def program(cells: AnswerCells) -> tuple[Submission | None, str | None]:
    """The save cell, then the lesson's loop that calls it (the MISSING_FIELDS cell runs alone)."""
    return program_from(cells, ("l1_save_checkpoint",), with_lesson_loop)


def grade_save(cells: AnswerCells, timeout, fallback: bool = False) -> CheckResult:
    """``l1_saves_all_six`` on the cell ``l1_save_checkpoint`` of ``cells``, with the lesson's
    loop."""
    check_id = "l1_saves_all_six"
    submission, problem = program(cells)
    if problem:
        return check_result(check_id, False, f"Could not run this check: {problem.rstrip('.')}.")
    return grade_saves_all_six(submission, "your save_checkpoint", timeout, fallback)


def grade_fields(cells: AnswerCells, checks: list[Check], timeout: float | None,
                 fallback: bool = False) -> dict[str, CheckResult]:
    """Grade Level 1's answer cells ``cells`` on ``checks``; check id -> CheckResult.

    Each check is a run in its own sandbox: side by side, the threads only wait."""
    from graders.checks.grading_faults import cannot_grade, grader_fault
    from graders.parallel import side_by_side

    def one(check: Check) -> CheckResult:
        try:
            if check.id == "l1_missing_fields":
                part, problem = cells.part(check.answer_cells[0])
                return grade_missing_fields(part and part.code, problem, timeout, fallback)
            return grade_save(cells, timeout, fallback)
        except SandboxUnavailable as exc:
            return cannot_grade(check.id, exc)
        except Exception as exc:  # noqa: BLE001 - one check's fault must not stop the others
            return grader_fault(check.id, exc)

    return dict(zip((c.id for c in checks), side_by_side(one, checks), strict=True))


def _run_live_save(check: Check, functions: dict) -> CheckResult:
    """The live save itself, with the lesson's loop, where its cell's source is not to be had."""
    save = functions["l1_save_checkpoint"]
    return grade_saves_all_six(Submission.from_functions(lesson_loop.bound_to(save), save),
                               "your save_checkpoint", None, True)


def live(check: Check, namespace: dict) -> CheckResult:
    """A Level 1 check in a kernel: MISSING_FIELDS judged as the kernel holds it; the save's cell
    graded as grading grades it."""
    if check.id != "l1_missing_fields":
        return live_from_cells(check, namespace, without_source=_run_live_save)
    if "MISSING_FIELDS" not in namespace:
        return check_result(check.id, False, "MISSING_FIELDS is not defined in this notebook "
                            "yet: run the answer cell that defines it first.")
    passed, message = judge_missing_fields(describe(namespace["MISSING_FIELDS"]))
    return check_result(check.id, passed, message.replace(" in a fresh Python process", ""))


EXERCISE = register(Exercise(
    notebook=NOTEBOOK,
    title="Level 1: an incomplete checkpoint",
    answer_cells=ANSWER_CELLS,
    checks=CHECKS,
    grade=grade_fields,
    live=live,
    program=program,
    fixture_cell="l1_save_checkpoint",
    gate="l1_where_resume_falls_over",
    hints=f"{NOTEBOOK}.md",
))
