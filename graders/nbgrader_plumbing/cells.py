"""Verdicts as nbgrader cell outputs: what an autograded test cell shows and how it scores.

nbgrader's own ``determine_grade`` scores a test cell from its outputs: an ``error`` output (or
anything on stderr) is zero, an ``execute_result`` holding a number is partial credit, anything
else is full marks. :func:`verdict_outputs` writes exactly one of those shapes per check, from the
check's record (`graders.checks.record`, stored in the cell's metadata beside it), as the text the
student reads in the feedback.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from nbformat import NotebookNode
from nbgrader import utils

if TYPE_CHECKING:
    from graders.checks.record import CheckRecord

__all__ = [
    "MISSING_CELL_MARK",
    "autograded_test_cells",
    "is_autograded_test_cell",
    "verdict_outputs",
    "verdict_text",
    "record_text",
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
    head = f"{title[:1].upper()}{title[1:]}: {status} ({score:g}/{points:g} points)"
    body = "\n".join(part for part in (note.strip(), head, message.strip()) if part)
    return _wrap(body)


def record_text(record: CheckRecord, *, note: str = "") -> str:
    """What a check's record says, as :func:`verdict_text` words it: the feedback, Gradescope's
    test output and the Validate dialog read the same."""
    title = record.title or record.check_id
    if record.hidden:
        title += " (hidden check)"
    status = _STATUS_WORDS[record.status]
    if record.status == "passed" and record.score < record.points:
        status = "partly passed"
    elif record.status == "failed" and record.score > 0:
        status = "partly passed"
    return verdict_text(title, record.score, record.points, record.message, note=note,
                        status=status)


_STATUS_WORDS = {"passed": "passed", "failed": "not passed", "not_checked": "not checked"}


def verdict_outputs(record: CheckRecord, *, restored: bool = False) -> list[NotebookNode]:
    """The outputs that replace a test cell's, for nbgrader to score, from the check's
    ``record`` (`graders.checks.record`): full marks a stream, nothing an error (no
    traceback), partial credit a stream and an ``execute_result`` with the points earned.

    ``restored`` marks a test cell that nbgrader put back after the student deleted it.
    """
    note = ("This test cell was missing from your notebook; nbgrader put it back and it was "
            "graded on your code.\n" if restored else "")
    text = record_text(record, note=note)
    score, points = record.score, record.points
    if record.status == "passed" and score >= points:
        return [_stream(text)]
    if score > 0:
        return [_stream(text), NotebookNode(output_type="execute_result", execution_count=None,
                                             metadata={}, data={"text/plain": f"{score:g}"})]
    return [_error(text)]
