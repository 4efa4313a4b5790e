"""Grade a submission: every check of one exercise notebook on the student's source, each
exercise by its own module. The code runs in the sandbox; this process only decides."""

from __future__ import annotations

from graders.checks.answer_cells import AnswerCells
from graders.checks.base import LEVEL1, LEVEL2, LEVEL3, NOTEBOOKS, checks_for
from graders.checks.grading_faults import cannot_grade, grader_fault
from graders.checks.incomplete_checkpoint import grade_level1
from graders.checks.parallel_tool_calls import grade_level4
from graders.checks.power_cut import grade_level3
from graders.checks.result import CheckResult
from graders.checks.two_latent_failures import grade_level2
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
    if notebook not in NOTEBOOKS:
        raise ValueError(f"unknown exercise notebook {notebook!r}; one of {sorted(NOTEBOOKS)}")
    cells = AnswerCells.of(submission, notebook)
    checks = checks_for(notebook, include_hidden=include_hidden)
    if notebook == LEVEL1:
        results = grade_level1(cells, checks, timeout, allow_fallback)
    else:
        try:
            if notebook == LEVEL2:
                results = grade_level2(cells, checks, timeout, allow_fallback)
            else:
                grade = grade_level3 if notebook == LEVEL3 else grade_level4
                results = grade(cells, checks, timeout, allow_fallback)
        except SandboxUnavailable as exc:
            results = {c.id: cannot_grade(c.id, exc) for c in checks}
        except Exception as exc:  # noqa: BLE001 - a grader fault fails the checks, saying so
            results = {c.id: grader_fault(c.id, exc) for c in checks}
    return {c.id: results[c.id] for c in checks}
