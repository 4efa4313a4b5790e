"""One grading worker process: its setup, and one student's autograde and feedback.

Each worker runs nbgrader's own ``Autograde`` and ``GenerateFeedback`` (through ``NbGraderAPI``)
for one student at a time (:func:`grade_one`). The sqlite gradebook stays consistent: nbgrader's
transactions are short, the course's ``db_url`` gives sqlite a long busy timeout, and a student
whose autograde still fails on a locked database is graded again. The pool that runs the workers
is :mod:`graders.nbgrader_plumbing.grading_pool`.
"""

from __future__ import annotations

import os
import signal
import time
from contextlib import contextmanager
from pathlib import Path

from graders.nbgrader_plumbing.course import nbgrader_api
from graders.nbgrader_plumbing.durable import die_with_parent, point
from graders.nbgrader_plumbing.gradings import close_gradings

__all__ = ["LOG_NAME", "STUDENT_TIMEOUT", "quiet_sqlalchemy", "worker_init", "grade_one"]

#: The course directory's log of the grading workers' own output (kernels, nbgrader).
LOG_NAME = "checkpoint-lab-grade.log"
_DB_RETRIES = 3
#: Seconds one student's autograde and feedback may take in all, by default (a student takes
#: seconds; a notebook made to cost the grader time is stopped, as that student's failure).
STUDENT_TIMEOUT = 300.0
#: This worker process's nbgrader API, made once by :func:`worker_init`.
_API = None


def quiet_sqlalchemy() -> None:
    """Build new students' submissions without SQLAlchemy's autoflush, the cause of the
    SAWarnings nbgrader's own autograde gave (`graders.nbgrader_plumbing.nbgrader_fixes`)."""
    from graders.nbgrader_plumbing.nbgrader_fixes import add_submission_without_autoflush

    add_submission_without_autoflush()


def worker_init(root: str) -> None:
    """Set up a worker process for the course in ``root`` (the pool's initializer)."""
    global _API
    die_with_parent()  # a killed batch leaves no worker writing behind it
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


class _OutOfTime(BaseException):
    """Raised in the worker when a student's time is up (a BaseException: nbgrader's own
    ``except Exception`` blocks do not swallow it)."""


@contextmanager
def _time_limit(seconds: float | None):
    """Raise `_OutOfTime` in this (the worker's main) thread after ``seconds``, and again until
    the block is left."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(_signum, _frame):
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, expire)
    # again every half second: an exception raised where Python ignores it (a weakref
    # callback, a __del__) is lost, and the next one lands
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _autograde(outcome: dict, student: str, assignment: str, feedback: bool) -> None:
    point(f"autograding:{student}")
    for _ in range(_DB_RETRIES):
        outcome["tries"] += 1
        result = _API.autograde(assignment, student, force=True, create=True)
        log = (result.get("log") or "") + (result.get("error") or "")
        outcome.update(success=bool(result.get("success")), log=log, error=_last_error(result))
        if outcome["success"] or "database" not in log.lower():
            break
        time.sleep(0.2)
    point(f"autograded:{student}")
    if outcome["success"] and feedback:
        fb = _API.generate_feedback(assignment, student, force=True)
        outcome["feedback_ok"] = bool(fb.get("success"))
        if not fb.get("success"):
            outcome["feedback_error"] = _last_error(fb)


def grade_one(student: str, assignment: str, feedback: bool,
              timeout: float | None = STUDENT_TIMEOUT) -> dict:
    """Autograde ``student`` (and write their feedback) in at most ``timeout`` seconds; the
    outcome, as a dict (``timed_out`` when the time was up: the student is not graded)."""
    started = time.monotonic()
    outcome: dict = {"student": student, "success": False, "tries": 0}
    expired = False
    try:
        with _time_limit(timeout):
            try:
                _autograde(outcome, student, assignment, feedback)
            except _OutOfTime:
                expired = True
    except _OutOfTime:  # in the instant between the work and the end of the limit
        expired = True
    finally:  # the next student's gradings never wait behind this one's
        close_gradings()
    # nbgrader's own log capture catches even a BaseException: the clock says what happened
    late = expired or bool(timeout and time.monotonic() - started >= timeout)
    stopped = (f"it took longer than {timeout:g} s, so it was stopped (is a notebook far larger "
               "than the exercise's?)")
    if late and not outcome["success"]:
        outcome.update(success=False, timed_out=True, error=f"grading this student: {stopped}")
    elif late and feedback and not outcome.get("feedback_ok"):
        outcome.update(feedback_ok=False, feedback_error=stopped)
    outcome["seconds"] = time.monotonic() - started
    return outcome
