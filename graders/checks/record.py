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

from typing import Any

from graders.checks.base import CHECKS, HINT_LINE
from graders.checks.counting import GROUPS, counts_against, kind_of
from graders.checks.grading_faults import NotJudged

__all__ = ["METADATA_KEY", "STATUSES", "status_of", "cause_of", "record_of", "failure_record",
           "without_hint"]

#: The cell metadata key (``cell.metadata[METADATA_KEY]["result"]``) that holds a record.
METADATA_KEY = "checkpoint_lab"
STATUSES = ("passed", "failed", "not_checked")


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
    own = GROUPS.get(check.problem) or {check.problem}
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


def record_of(result, check=None, cells=None, points: float | None = None) -> dict[str, Any]:
    """The record of ``result`` (a `CheckResult`) for ``check`` (default: its own), worth
    ``points`` in the graded cell (default: the check's points)."""
    check = check or CHECKS[result.check_id]
    points = float(check.points if points is None else points)
    fraction = (float(result.points_earned) / check.points) if check.points else float(
        bool(result.passed))
    crashes = [v for v in result.verdicts if kind_of(v) not in ("no_crash", "load")]
    failed = [v for v in crashes if counts_against(result.check_id, v)]
    message = without_hint(str(result.message or ""))
    return {
        "check_id": check.id,
        "notebook": check.notebook,
        "title": check.title,
        "hidden": check.hidden,
        "points": points,
        "score": round(points * max(0.0, min(1.0, fraction)), 4),
        "status": status_of(result),
        "message": message,
        "summary": without_hint(result.summary) if result.summary else message,
        "cause": cause_of(result, cells),
        "failed": len(failed) if crashes else None,
        "crash_points": len(crashes) if crashes else None,
    }


def failure_record(check_id: str, points: float, why: str, cause: str, check=None,
                   ) -> dict[str, Any]:
    """The record of a check with no result: the grader failed (``cause`` ``"grader_fault"``)
    or there is no such check (``"unknown_check"``). ``why`` says so to the student."""
    return {
        "check_id": check_id,
        "notebook": getattr(check, "notebook", ""),
        "title": getattr(check, "title", None) or check_id,
        "hidden": bool(getattr(check, "hidden", False)),
        "points": float(points),
        "score": 0.0,
        "status": "not_checked",
        "message": why,
        "summary": why,
        "cause": cause,
        "failed": None,
        "crash_points": None,
    }
