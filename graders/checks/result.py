"""The outcome of one check on one submission (`CheckResult`), shown as a one-row table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graders.checks.base import CHECKS, Check

__all__ = [
    "CheckResult", "check_result", "not_checked", "verdict_dict", "STATUSES", "NOT_CHECKED",
]

#: What a check's result can be: it ran and passed, it ran and failed, or it could not run here.
STATUSES = ("passed", "failed", "not_checked")
NOT_CHECKED = "not_checked"


@dataclass
class CheckResult:
    """The outcome of one check on one submission.

    Attributes:
        check_id: the check's id (a key of ``CHECKS``).
        passed: whether the check passed.
        points_earned: its points if it passed, else 0.
        message: what was done, what came back, what was expected, in the lesson's words.
        verdicts: the crash harness's verdicts behind it (`graders.Verdict`), if any.
        summary: the message without the first failed crash point's verdict, for a table that
            lists the failed crash points under it ("" when it is the whole message).
        status: ``"passed"``, ``"failed"`` or ``"not_checked"`` (the check could not run here:
            ``message`` says why and how to get it checked, its points are pending, never shown
            as lost). Left out, it follows ``passed``; ``passed`` is ``status == "passed"``.
    """

    check_id: str
    passed: bool
    points_earned: float
    message: str
    verdicts: list = field(default_factory=list)
    summary: str = ""
    status: str = ""

    def __post_init__(self) -> None:
        if not self.status:
            self.status = "passed" if self.passed else "failed"
        if self.status not in STATUSES:
            raise ValueError(f"a check's status is one of {STATUSES}, not {self.status!r}")
        self.passed = self.status == "passed"

    @property
    def checked(self) -> bool:
        """Whether the check ran here (its status is ``"passed"`` or ``"failed"``)."""
        return self.status != NOT_CHECKED

    @property
    def check(self) -> Check:
        """The `Check` this result belongs to."""
        return CHECKS[self.check_id]

    @property
    def points(self) -> int:
        """The points the check is worth."""
        return CHECKS[self.check_id].points

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (``json.dumps`` works on it)."""
        return {
            "check_id": self.check_id,
            "passed": self.passed,
            "points_earned": self.points_earned,
            "message": self.message,
            "verdicts": [verdict_dict(v) for v in self.verdicts],
            "summary": self.summary,
            "status": self.status,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        """The result ``to_dict`` described."""
        from graders.judge.recording import Verdict

        return cls(
            check_id=data["check_id"],
            passed=bool(data["passed"]),
            points_earned=data["points_earned"],
            message=data["message"],
            verdicts=[Verdict.from_dict(v) for v in data.get("verdicts") or []],
            summary=data.get("summary", ""),
            status=data.get("status", ""),
        )

    def __str__(self) -> str:
        from graders.checks.table import ResultTable

        return str(ResultTable([self]))

    def _repr_html_(self) -> str:
        from graders.checks.table import ResultTable

        return ResultTable([self])._repr_html_()

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(str(self))

    def __repr__(self) -> str:
        if not self.checked:
            return f"<CheckResult {self.check_id} NOT CHECKED ({self.points} pending)>"
        status = "PASS" if self.passed else "FAIL"
        return f"<CheckResult {self.check_id} {status} {self.points_earned:g}/{self.points}>"


def verdict_dict(verdict) -> dict:
    return verdict.to_dict() if hasattr(verdict, "to_dict") else dict(verdict)


def check_result(check_id: str, passed: bool, message: str, verdicts=()) -> CheckResult:
    points = CHECKS[check_id].points if passed else 0
    return CheckResult(check_id, passed, points, message, list(verdicts))


def not_checked(check_id: str, why: str, verdicts=()) -> CheckResult:
    """The result of a check that could not run here: ``why`` says why, and how to get it
    checked. It earns nothing yet, and is never shown as failed."""
    return CheckResult(check_id, False, 0, why, list(verdicts), status=NOT_CHECKED)
