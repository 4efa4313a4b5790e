"""A check result as stored beside its rendered text: plain JSON, the one source of every view.

The grader stores one record per check in the graded cell's metadata (nbgrader's autograded
notebook, key :data:`METADATA_KEY`), and builds the same record for Gradescope's
``results.json``. The feedback, the CLI's table, the class summary, the CSV and Gradescope all
render from it, never from each other's text:

``check_id``, ``notebook``, ``title``, ``hidden``; ``points`` (what the graded cell is worth) and
``score``; ``status`` (``"passed"``, ``"failed"`` or ``"not_checked"``: a check that could not run,
its points pending); ``message`` (what was done, what was on disk, what was expected; without
the self-check's pointer to ``hint()``, which only a notebook can run); ``summary`` (the message
in short); ``cause`` (why it did not pass, as a code: the judge's problem, such as
``in_place_write``, or ``no_answer_cell``, ``syntax_error``, ``not_loaded``, ``grader_fault``,
``no_sandbox``; ``""`` when it passed); ``failed`` and ``crash_points`` (how many crash points
failed, of how many judged; None when it judged none).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from graders.checks.base import CHECKS, HINT_LINE
from graders.checks.counting import counts_against, kind_of
from graders.checks.grading_faults import NotJudged

__all__ = ["METADATA_KEY", "STATUSES", "CheckRecord", "SubmissionResult", "status_of",
           "cause_of", "record_of", "failure_record", "without_hint"]

#: The cell metadata key (``cell.metadata[METADATA_KEY]["result"]``) that holds a record.
METADATA_KEY = "checkpoint_lab"
STATUSES = ("passed", "failed", "not_checked")


@dataclass(frozen=True, kw_only=True)
class CheckRecord:
    """One check's result as every view renders it; the fields are the module docstring's."""

    check_id: str
    notebook: str
    title: str
    hidden: bool
    points: float
    score: float
    status: str
    message: str
    summary: str
    cause: str
    failed: int | None = None
    crash_points: int | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"a check record's status is one of {STATUSES}, not {self.status!r}")

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_json(self) -> dict[str, Any]:
        """The record as plain JSON (what the autograded notebook's cell metadata holds)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> CheckRecord | None:
        """The record ``data`` (as :meth:`to_json` wrote it) holds; None when it is not one
        (missing or ill-typed fields: a notebook's metadata is not to be trusted blindly)."""
        if not isinstance(data, dict):
            return None
        kinds = {"check_id": str, "notebook": str, "title": str, "hidden": bool,
                 "points": (int, float), "score": (int, float), "status": str, "message": str,
                 "summary": str, "cause": str, "failed": (int, type(None)),
                 "crash_points": (int, type(None))}
        values = {f.name: data.get(f.name) for f in fields(cls)}
        if any(not isinstance(values[k], t) or isinstance(values[k], bool) and t is not bool
               for k, t in kinds.items()) or values["status"] not in STATUSES:
            return None
        values["points"], values["score"] = float(values["points"]), float(values["score"])
        return cls(**values)


@dataclass(frozen=True)
class SubmissionResult:
    """Every check record of one submission, with its totals (otter's ``GradingResults``)."""

    records: tuple[CheckRecord, ...]

    @property
    def score(self) -> float:
        return round(sum(r.score for r in self.records), 4)

    @property
    def points(self) -> float:
        return sum(r.points for r in self.records)

    @property
    def visible(self) -> tuple[CheckRecord, ...]:
        """The records a student sees before grades are published (not hidden)."""
        return tuple(r for r in self.records if not r.hidden)

    @property
    def hidden(self) -> tuple[CheckRecord, ...]:
        return tuple(r for r in self.records if r.hidden)

    def to_json(self) -> list[dict[str, Any]]:
        return [r.to_json() for r in self.records]


def status_of(result) -> str:
    """``"passed"``, ``"failed"`` or ``"not_checked"``: the result's own ``status`` where it has
    one, ``"not_checked"`` for a check the grader could not judge."""
    if isinstance(result, NotJudged):
        return "not_checked"
    status = getattr(result, "status", None)
    if status in STATUSES:
        return status
    return "passed" if result.passed else "failed"


def cause_of(result, cells=None) -> str:
    """Why ``result`` did not pass, as a code (``""`` when it passed): the first problem of the
    first verdict that fails the check (one of the check's own problems, where it judges a group
    of them); ``cells`` (the submission's `AnswerCells`) tell a missing or unreadable cell."""
    if isinstance(result, NotJudged):
        return result.why
    status = status_of(result)
    if status != "failed":
        return "" if status == "passed" else "not_checked"
    check = CHECKS[result.check_id]
    own = check.problems
    for verdict in result.verdicts:
        if counts_against(result.check_id, verdict):
            problems = [str(p) for p in
                        (getattr(verdict, "evidence", None) or {}).get("problems") or ()]
            return next((p for p in problems if p in own), problems[0] if problems
                        else kind_of(verdict))
    problem = cells.problem(check.answer_cells) if cells is not None else None
    return problem or "failed"


def without_hint(text: str) -> str:
    """``text`` without the self-check's pointer to ``hint()`` (the grader's own sentence)."""
    return text.replace(f" {HINT_LINE}", "").replace(HINT_LINE, "").strip()


def record_of(result, check=None, cells=None, points: float | None = None) -> CheckRecord:
    """The record of ``result`` (a `CheckResult`) for ``check`` (default: its own), worth
    ``points`` in the graded cell (default: the check's points)."""
    check = check or CHECKS[result.check_id]
    points = float(check.points if points is None else points)
    fraction = (float(result.points_earned) / check.points) if check.points else float(
        bool(result.passed))
    crashes = [v for v in result.verdicts if kind_of(v) not in ("no_crash", "load")]
    failed = [v for v in crashes if counts_against(result.check_id, v)]
    message = without_hint(str(result.message or ""))
    return CheckRecord(
        check_id=check.id,
        notebook=check.notebook,
        title=check.title,
        hidden=check.hidden,
        points=points,
        score=round(points * max(0.0, min(1.0, fraction)), 4),
        status=status_of(result),
        message=message,
        summary=without_hint(result.summary) if result.summary else message,
        cause=cause_of(result, cells),
        failed=len(failed) if crashes else None,
        crash_points=len(crashes) if crashes else None,
    )


def failure_record(check_id: str, points: float, why: str, cause: str, check=None,
                   ) -> CheckRecord:
    """The record of a check with no result: the grader failed (``cause`` ``"grader_fault"``)
    or there is no such check (``"unknown_check"``). ``why`` says so to the student."""
    return CheckRecord(
        check_id=check_id,
        notebook=getattr(check, "notebook", ""),
        title=getattr(check, "title", None) or check_id,
        hidden=bool(getattr(check, "hidden", False)),
        points=float(points),
        score=0.0,
        status="not_checked",
        message=why,
        summary=why,
        cause=cause,
    )
