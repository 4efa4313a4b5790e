"""A notebook that could not be graded at all (not a notebook, too large, a link): its checks'
records say why, for the instructor's table, and its feedback page says why, for the student.

nbgrader never sees such a notebook (:mod:`graders.nbgrader_plumbing.submissions` leaves it
out), so it writes no feedback for it and the gradebook holds 0 with no record: these fill both
gaps with the one reason :func:`~graders.nbgrader_plumbing.submissions.find_submissions` found.
"""

from __future__ import annotations

import html
from pathlib import Path

from graders.checks.record import CheckRecord

__all__ = ["CAUSE", "refused_records", "write_refused_feedback"]

#: The cause of every check of a refused notebook (`graders.checks.record`).
CAUSE = "notebook_not_read"


def _words(notebook: str, why: str) -> str:
    return (f"{notebook}.ipynb was not graded: {why}. Nothing of it ran, so every check of it "
            "scores 0. Hand in the notebook as JupyterLab saves it (File > Save, then the file "
            f"{notebook}.ipynb itself), and it is graded as usual.")


def refused_records(notebook: str, why: str, tests: list[str]) -> dict[str, CheckRecord]:
    """The record of each of ``tests`` of a refused ``notebook``."""
    from graders.checks import CHECKS

    message = _words(notebook, why)
    return {test: CheckRecord(
        check_id=test, notebook=notebook, title=check.title if check else test,
        hidden=check.hidden if check else False, points=float(check.points) if check else 0.0,
        score=0.0, status="failed", message=message, summary=f"not graded: {why}", cause=CAUSE)
        for test in tests for check in [CHECKS.get(test)]}


def write_refused_feedback(feedback_dir: Path, notebook: str, why: str) -> Path:
    """Write the feedback page of a refused ``notebook`` in ``feedback_dir``; return it."""
    feedback_dir.mkdir(parents=True, exist_ok=True)
    page = feedback_dir / f"{notebook}.html"
    page.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">"
        f"<title>{html.escape(notebook)}: not graded</title></head>\n"
        f"<body><h1>{html.escape(notebook)}</h1>\n"
        f"<p>{html.escape(_words(notebook, why))}</p></body></html>\n", encoding="utf-8")
    return page
