"""Grade a submission: every check of one exercise notebook on the student's source, each
exercise by its own module. The code runs in the sandbox; this process only decides."""

from __future__ import annotations

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


def grade_submission(source: str, notebook: str, *, include_hidden: bool = True,
                     timeout: float | None = None,
                     allow_fallback: bool = False) -> dict[str, CheckResult]:
    """Run every check of ``notebook`` on ``source``; return check id -> `CheckResult`.

    ``source`` is the student's code, as :func:`submission_from_notebook` joins it (or any Python
    source defining the answer cells' names). The code runs only in fresh child processes; this
    process decides. ``timeout`` bounds each run in seconds (the harness's default if None).
    The code runs in the sandbox, watched from outside (:mod:`graders.sandbox`); where that is
    impossible, ``allow_fallback`` (a student's self-check) uses the in-process harness instead,
    and otherwise every check fails saying why. Never raises on a bad submission: the affected
    checks fail with a message why.
    """
    if notebook not in NOTEBOOKS:
        raise ValueError(f"unknown exercise notebook {notebook!r}; one of {sorted(NOTEBOOKS)}")
    checks = checks_for(notebook, include_hidden=include_hidden)
    if notebook == LEVEL1:
        results = grade_level1(source, checks, timeout, allow_fallback)
    else:
        try:
            if notebook == LEVEL2:
                results = grade_level2(source, checks, timeout, allow_fallback)
            else:
                grade = grade_level3 if notebook == LEVEL3 else grade_level4
                results = grade(source, checks, timeout, allow_fallback)
        except SandboxUnavailable as exc:
            results = {c.id: cannot_grade(c.id, exc) for c in checks}
        except Exception as exc:  # noqa: BLE001 - a grader fault fails the checks, saying so
            results = {c.id: grader_fault(c.id, exc) for c in checks}
    return {c.id: results[c.id] for c in checks}
