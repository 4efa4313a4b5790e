"""One grading worker process: its setup, and one student's autograde and feedback.

Each worker runs nbgrader's own ``Autograde`` and ``GenerateFeedback`` (through ``NbGraderAPI``)
for one student at a time (:func:`grade_one`). The sqlite gradebook stays consistent: nbgrader's
transactions are short, the course's ``db_url`` gives sqlite a long busy timeout, and a student
whose autograde still fails on a locked database is graded again. The pool that runs the workers
is :mod:`graders.nbgrader_plumbing.grading_pool`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from graders.nbgrader_plumbing.course import nbgrader_api

__all__ = ["LOG_NAME", "quiet_sqlalchemy", "worker_init", "grade_one"]

#: The course directory's log of the grading workers' own output (kernels, nbgrader).
LOG_NAME = "checkpoint-lab-grade.log"
_DB_RETRIES = 3
#: This worker process's nbgrader API, made once by :func:`worker_init`.
_API = None


def quiet_sqlalchemy() -> None:
    """Silence SQLAlchemy's SAWarnings that nbgrader's own autograde triggers for new students."""
    import warnings

    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings("ignore", category=SAWarning)


def worker_init(root: str) -> None:
    """Set up a worker process for the course in ``root`` (the pool's initializer)."""
    global _API
    # The kernels' own chatter (and anything else on fds 1 and 2) goes to the course's log, so
    # that the progress bar stays readable; nbgrader's log comes back with each outcome.
    log = os.open(Path(root) / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    quiet_sqlalchemy()
    _API = nbgrader_api(Path(root))


def _last_error(result: dict) -> str:
    lines = [line for line in (result.get("log") or "").splitlines() if "[ERROR]" in line]
    error = (result.get("error") or "").strip().splitlines()
    return (error[-1] if error else lines[-1] if lines else "unknown error").strip()


def grade_one(student: str, assignment: str, feedback: bool) -> dict:
    """Autograde ``student`` (and write their feedback); the outcome, as a dict."""
    started = time.monotonic()
    outcome: dict = {"student": student, "success": False, "tries": 0}
    for _ in range(_DB_RETRIES):
        outcome["tries"] += 1
        result = _API.autograde(assignment, student, force=True, create=True)
        log = (result.get("log") or "") + (result.get("error") or "")
        outcome.update(success=bool(result.get("success")), log=log, error=_last_error(result))
        if outcome["success"] or "database" not in log.lower():
            break
        time.sleep(0.2)
    if outcome["success"] and feedback:
        fb = _API.generate_feedback(assignment, student, force=True)
        outcome["feedback_ok"] = bool(fb.get("success"))
        if not fb.get("success"):
            outcome["feedback_error"] = _last_error(fb)
    outcome["seconds"] = time.monotonic() - started
    return outcome
