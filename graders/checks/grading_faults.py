"""What a check says when it could not judge: the grader's own fault, or a machine that cannot
run it (no sandbox). Never the student's fault, and never a bare traceback.

Both are a `NotJudged` result: a `CheckResult` that says why in a field (``why``), so that what
reads it (the log, the instructor's table) branches on that field, never on the wording.
"""

from __future__ import annotations

from dataclasses import dataclass

from graders.checks.result import NOT_CHECKED, CheckResult

__all__ = [
    "NotJudged", "grader_fault", "cannot_grade", "GRADER_FAULT", "NO_SANDBOX",
]

GRADER_FAULT = "grader_fault"
NO_SANDBOX = "no_sandbox"


@dataclass(repr=False)
class NotJudged(CheckResult):
    """A check the grader could not judge: ``why`` is :data:`GRADER_FAULT` or
    :data:`NO_SANDBOX`. It earns nothing and says why; it is not the student's failure."""

    why: str = GRADER_FAULT

    def __post_init__(self) -> None:
        self.status = NOT_CHECKED  # not judged: never shown as the student's failure
        super().__post_init__()


def grader_fault(check_id: str, exc: BaseException) -> CheckResult:
    return NotJudged(check_id, False, 0, f"The grader could not run this check "
                     f"({type(exc).__name__}: {exc}). This is a fault in the grader, not in "
                     "your code: tell your instructor.", why=GRADER_FAULT)


def cannot_grade(check_id: str, exc: BaseException) -> CheckResult:
    return NotJudged(check_id, False, 0, f"Could not grade this check on this machine: {exc}",
                     why=NO_SANDBOX)
