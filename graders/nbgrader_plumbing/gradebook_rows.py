"""One student's rows of nbgrader's gradebook, copied from the batch's shadow gradebook to the
course's in ONE SQLite transaction: after a crash the course's gradebook holds that student's
old rows or the new ones, never a mix.

The rows are the student's ``submitted_assignment`` of the assignment, its
``submitted_notebook`` rows and their ``grade`` and ``comment`` rows (nbgrader's schema); the
shadow gradebook is a copy of the course's, so every other row (cells, notebooks) is the same.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from graders.nbgrader_plumbing.durable import point

__all__ = ["copy_student_rows", "has_grade"]

_SUBMISSION = ("SELECT sa.id FROM {db}.submitted_assignment sa JOIN {db}.assignment a "
               "ON sa.assignment_id = a.id WHERE a.name = ? AND sa.student_id = ?")
_NOTEBOOKS = "SELECT id FROM {db}.submitted_notebook WHERE assignment_id IN (" + _SUBMISSION + ")"


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=120, isolation_level=None)
    db.execute("PRAGMA synchronous = FULL")
    return db


def has_grade(gradebook: Path, assignment: str, student: str) -> bool:
    """Whether ``gradebook`` holds a submission of ``assignment`` by ``student``."""
    if not Path(gradebook).is_file():
        return False
    db = sqlite3.connect(f"file:{gradebook}?mode=ro", uri=True, timeout=120)
    try:
        return db.execute(_SUBMISSION.format(db="main"), (assignment, student)).fetchone() \
            is not None
    finally:
        db.close()


def copy_student_rows(shadow: Path, gradebook: Path, assignment: str, student: str) -> None:
    """Replace ``student``'s rows of ``assignment`` in ``gradebook`` by those in ``shadow``,
    in one transaction (run again, it writes the same)."""
    db = _connect(gradebook)
    try:
        db.execute("ATTACH DATABASE ? AS shadow", (str(shadow),))
        key = (assignment, student)
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("INSERT OR IGNORE INTO main.student SELECT * FROM shadow.student "
                       "WHERE id = ?", (student,))
            for table in ("grade", "comment"):
                db.execute(f"DELETE FROM main.{table} WHERE notebook_id IN ("
                           + _NOTEBOOKS.format(db="main") + ")", key)
            db.execute("DELETE FROM main.submitted_notebook WHERE id IN ("
                       + _NOTEBOOKS.format(db="main") + ")", key)
            db.execute("DELETE FROM main.submitted_assignment WHERE id IN ("
                       + _SUBMISSION.format(db="main") + ")", key)
            db.execute("INSERT INTO main.submitted_assignment SELECT * FROM "
                       "shadow.submitted_assignment WHERE id IN ("
                       + _SUBMISSION.format(db="shadow") + ")", key)
            db.execute("INSERT INTO main.submitted_notebook SELECT * FROM "
                       "shadow.submitted_notebook WHERE id IN ("
                       + _NOTEBOOKS.format(db="shadow") + ")", key)
            for table in ("grade", "comment"):
                db.execute(f"INSERT INTO main.{table} SELECT * FROM shadow.{table} "
                           "WHERE notebook_id IN (" + _NOTEBOOKS.format(db="shadow") + ")", key)
            point(f"gradebook-written:{student}")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    finally:
        db.close()
