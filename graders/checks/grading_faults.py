"""What a check says when it could not judge: the grader's own fault, or a machine that cannot
run it (no sandbox). Never the student's fault, and never a bare traceback."""

from __future__ import annotations

from graders.checks.result import CheckResult, not_checked

__all__ = [
    "grader_fault", "cannot_grade",
]


def grader_fault(check_id: str, exc: BaseException) -> CheckResult:
    return not_checked(check_id, f"The grader could not run this check "
                       f"({type(exc).__name__}: {exc}). This is a fault in the grader, not in "
                       "your code: tell your instructor.")


def cannot_grade(check_id: str, exc: BaseException) -> CheckResult:
    return not_checked(check_id, f"Could not grade this check on this machine: {exc}")
