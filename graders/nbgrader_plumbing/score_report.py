"""The scores as people read them: the CSV (one row per student) and a text table per student."""

from __future__ import annotations

import csv
import shutil
import textwrap
from pathlib import Path

from graders.nbgrader_plumbing.gradebook import StudentResult

__all__ = ["write_csv", "format_student"]


def write_csv(path: Path, results: list[StudentResult]) -> None:
    """One row per student: the student id (twice: ``student``, and ``SIS User ID`` for an LMS
    gradebook import such as Canvas's), one column per autograded test, then the totals (points
    and percent) and notes."""
    tests = [t.test for t in results[0].tests] if results else []
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "SIS User ID", *tests, "autograded_score", "autograded_max",
                         "autograded_percent", "notes"])
        for result in results:
            by_test = {t.test: t for t in result.tests}
            writer.writerow([
                result.student, result.student,
                *("" if by_test[t].score is None else f"{by_test[t].score:g}" for t in tests),
                f"{result.score:g}", f"{result.max_score:g}", _percent(result),
                " | ".join(result.notes)])


def _percent(result: StudentResult) -> str:
    """The autograded total as a percentage of its maximum, two decimals at most."""
    if not result.max_score:
        return ""
    return f"{round(100 * result.score / result.max_score, 2):g}"


def format_student(result: StudentResult, width: int | None = None) -> str:
    """A student's scores as a text table: each test, its points, its status, and under a test
    that was not passed the whole reason, wrapped to ``width`` (default: the terminal's); then
    the notes."""
    width = width or max(60, min(120, shutil.get_terminal_size((100, 24)).columns))
    name_w = max([len(t.test) for t in result.tests] + [4])
    lines = [f"{result.student}: {result.score:g}/{result.max_score:g} autograded points"]
    for t in result.tests:
        score = "-" if t.score is None else f"{t.score:g}"
        status = ("not submitted" if not t.submitted
                  else "passed" if t.score is not None and t.score >= t.max_score > 0
                  else "partly" if t.score else "not passed")
        lines.append(f"  {t.test:<{name_w}}  {score:>4}/{t.max_score:<3g} {status}")
        if status != "passed" and t.message:
            lines.extend(textwrap.wrap(t.message, width, initial_indent=" " * 6,
                                       subsequent_indent=" " * 6, break_on_hyphens=False))
    for note in result.notes:
        lines.extend(textwrap.wrap(note, width, initial_indent="  note: ",
                                   subsequent_indent=" " * 8, break_on_hyphens=False))
    return "\n".join(lines)
