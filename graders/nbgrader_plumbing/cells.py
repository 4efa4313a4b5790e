"""Verdicts as nbgrader cell outputs: what an autograded test cell shows and how it scores.

nbgrader's own ``determine_grade`` scores a test cell from its outputs: an ``error`` output (or
anything on stderr) is zero, an ``execute_result`` holding a number is partial credit, anything
else is full marks. :func:`verdict_outputs` writes exactly one of those shapes per check, with the
check's message as the text the student reads in the feedback.
"""

from __future__ import annotations

import textwrap
from typing import Any

from nbformat import NotebookNode
from nbgrader import utils

__all__ = [
    "MISSING_CELL_MARK",
    "autograded_test_cells",
    "is_autograded_test_cell",
    "verdict_outputs",
    "verdict_text",
    "WRAP",
]

#: Verdict text is wrapped at this many characters: it is shown in ``<pre>`` blocks (the feedback
#: HTML, the Validate dialog) and by ``nbgrader validate``, which cuts lines longer than 87.
WRAP = 80

#: How nbgrader's OverwriteCells (``add_missing_cells``) starts a test cell it put back.
MISSING_CELL_MARK = "# This cell (id:"


def is_autograded_test_cell(cell: NotebookNode) -> bool:
    """A code cell nbgrader scores from its outputs: ``grade: true``, ``solution: false``."""
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


def autograded_test_cells(nb: NotebookNode) -> list[NotebookNode]:
    """The autograded test cells of ``nb``, in notebook order."""
    return [cell for cell in nb.cells if is_autograded_test_cell(cell)]


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _stream(text: str) -> NotebookNode:
    return NotebookNode(output_type="stream", name="stdout", text=text.rstrip("\n") + "\n")


def _error(text: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename="CheckNotPassed", evalue=text,
                        traceback=[text])


def _wrap(text: str) -> str:
    lines = []
    for paragraph in text.splitlines():
        lines.extend(textwrap.wrap(paragraph, WRAP, break_on_hyphens=False) or [""])
    return "\n".join(lines)


def verdict_text(title: str, score: float, points: float, message: str, *,
                 note: str = "", status: str | None = None) -> str:
    """What a check says: ``"<title>: not passed (0/3 points)"``, then why, wrapped.

    The same words in the feedback (through :func:`verdict_outputs`) and in nbgrader's Validate
    (`graders.nbgrader_plumbing.validation`). ``note`` is a line put first;
    ``status`` defaults to what the score
    says (passed, partly passed, not passed).
    """
    if status is None:
        status = "passed" if score >= points else "partly passed" if score > 0 else "not passed"
    head = f"{title}: {status} ({score:g}/{points:g} points)"
    body = "\n".join(part for part in (note.strip(), head, message.strip()) if part)
    return _wrap(body)


def verdict_outputs(grade_id: str, points: float, result: Any, *, check: Any = None,
                    grader_failure: str | None = None,
                    restored: bool = False) -> list[NotebookNode]:
    """The outputs that replace test cell ``grade_id``'s, for nbgrader to score.

    ``result`` is the check's ``CheckResult`` (or its ``to_dict()``), None when there is none;
    ``check`` the ``Check`` (for its title and points); ``grader_failure`` says why the grader
    could not run; ``restored`` marks a test cell that nbgrader put back after the student
    deleted it.
    """
    title = _field(check, "title") or grade_id
    if _field(check, "hidden"):
        title += " (hidden check)"
    note = ("This test cell was missing from your notebook; nbgrader put it back and it was "
            "graded on your code.\n" if restored else "")
    if result is None:
        if grader_failure:
            why = (f"The grader could not run this check ({grader_failure}). This is not your "
                   "fault: tell your instructor.")
        else:
            why = (f"There is no check called {grade_id!r} in graders.checks, so this test cell "
                   "cannot be graded: tell your instructor.")
        return [_error(_wrap(f"{note}{title}: not graded (0/{points:g} points)\n{why}"))]

    message = str(_field(result, "message", "") or "").strip()
    check_points = _field(check, "points")
    earned = _field(result, "points_earned")
    if check_points and earned is not None:
        fraction = max(0.0, min(1.0, float(earned) / float(check_points)))
    else:
        fraction = 1.0 if _field(result, "passed") else 0.0
    score = round(points * fraction, 4)
    if _field(result, "passed") and fraction >= 1.0:
        return [_stream(verdict_text(title, score, points, message, note=note,
                                     status="passed"))]
    if score > 0:
        return [
            _stream(verdict_text(title, score, points, message, note=note,
                                 status="partly passed")),
            NotebookNode(output_type="execute_result", execution_count=None, metadata={},
                         data={"text/plain": f"{score:g}"}),
        ]
    return [_error(verdict_text(title, 0, points, message, note=note, status="not passed"))]
