"""Grade a submission: every check of one exercise notebook on the student's source, by the
exercise's own ``grade`` (its record, `graders.checks.base.Exercise`). The code runs in the
sandbox; this process only decides."""

from __future__ import annotations

from graders.checks.answer_cells import AnswerCells
from graders.checks.base import checks_for, exercise
from graders.checks.grading_faults import cannot_grade, grader_fault
from graders.checks.result import CheckResult
from graders.sandbox.serve import SandboxUnavailable

__all__ = [
    "grade_submission",
]


def grade_submission(submission: AnswerCells | str, notebook: str, *,
                     include_hidden: bool = True, timeout: float | None = None,
                     allow_fallback: bool = False) -> dict[str, CheckResult]:
    """Run every check of ``notebook`` on ``submission``; return check id -> `CheckResult`.

    ``submission`` is the student's answer cells (`AnswerCells`, as
    :func:`submission_from_notebook` reads them from a notebook), or text: Python source standing
    for every answer cell, or cells marked as :meth:`AnswerCells.from_text` reads them. Each
    cell travels as itself to the runner, and a line in a message is a line of the cell the
    student wrote. The code runs only in fresh child processes; this
    process decides. ``timeout`` bounds each run in seconds (the harness's default if None).
    The code runs in the sandbox, watched from outside (:mod:`graders.sandbox`); where that is
    impossible, ``allow_fallback`` (a student's self-check) uses the in-process harness instead,
    and otherwise every check fails saying why. Never raises on a bad submission: the affected
    checks fail with a message why.
    """
    record = exercise(notebook)
    cells = AnswerCells.of(submission, notebook)
    checks = checks_for(notebook, include_hidden=include_hidden)
    try:
        results = record.grade(cells, checks, timeout, allow_fallback)
    except SandboxUnavailable as exc:
        results = {c.id: cannot_grade(c.id, exc) for c in checks}
    except Exception as exc:  # noqa: BLE001 - a grader fault fails the checks, saying so
        results = {c.id: grader_fault(c.id, exc) for c in checks}
    return {c.id: results[c.id] for c in checks}
