"""The course's gradebook: each student's autograded scores, with each check's record; zeros.

:func:`read_results` reads nbgrader's sqlite gradebook (the scores, as nbgrader and any manual
override keep them) and, for each test, the record of its check that the grader stored in the
autograded notebook (`graders.checks.record`: status, cause, message); :func:`record_zero`
records a student with nothing gradable (or whose autograde failed) with 0 for every autograded
test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import nbformat

from graders.checks.record import METADATA_KEY, CheckRecord
from graders.nbgrader_plumbing.cells import autograded_test_cells
from graders.nbgrader_plumbing.course import Course
from graders.nbgrader_plumbing.split_cells import joined_cells

__all__ = ["TestScore", "StudentResult", "record_zero", "read_results"]


@dataclass
class TestScore:
    """One autograded test of one student, as the gradebook has it, with its check's record."""

    notebook: str
    test: str
    score: float | None
    max_score: float
    #: the check's record (`graders.checks.record`); None when the grader stored none
    record: CheckRecord | None = None
    #: False when the student did not hand this notebook in (its tests then score 0)
    submitted: bool = True

    @property
    def status(self) -> str:
        """``"not_submitted"``, else the record's status (or, without one, the score's)."""
        if not self.submitted:
            return "not_submitted"
        if self.record is not None:
            return self.record.status
        return "passed" if self.score is not None and self.score >= self.max_score else "failed"

    @property
    def message(self) -> str:
        return self.record.message if self.record is not None else ""

    @property
    def cause(self) -> str:
        """Why it did not pass, as a code (``""`` when it passed or no record says)."""
        return self.record.cause if self.record is not None else ""

    @property
    def summary(self) -> str:
        """The record's message in short (else the message)."""
        return (self.record.summary if self.record is not None else "") or self.message


@dataclass
class StudentResult:
    """A student's autograded scores and notes (what was wrong with the submission)."""

    student: str
    tests: list[TestScore]
    notes: list[str]

    @property
    def score(self) -> float:
        return sum(t.score or 0.0 for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)

    @property
    def not_submitted(self) -> list[str]:
        """The notebooks the student did not hand in (their tests score 0), in order."""
        return list(dict.fromkeys(t.notebook for t in self.tests if not t.submitted))


def _source_tests(course: Course) -> dict[str, list[str]]:
    tests = {}
    for name in course.notebooks():
        nb = nbformat.read(course.source_dir / f"{name}.ipynb", as_version=4)
        tests[name] = [c.metadata["nbgrader"]["grade_id"] for c in autograded_test_cells(nb)]
    return tests


def _autograded(course: Course, student: str, notebook: str) -> dict:
    """The autograded notebook of ``student`` (as JSON; empty when there is none)."""
    path = course.autograded_dir(student) / f"{notebook}.ipynb"
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return nb if isinstance(nb, dict) and isinstance(nb.get("cells"), list) else {}


def _records(nb: dict) -> dict[str, CheckRecord]:
    """Each test cell's record of its check, by grade_id, as WriteVerdicts stored it."""
    records = {}
    for cell in autograded_test_cells(nbformat.from_dict(nb)) if nb else []:
        lab = cell.metadata.get(METADATA_KEY)
        record = CheckRecord.from_json(lab.get("result") if isinstance(lab, dict) else None)
        if record is not None:
            records[cell.metadata["nbgrader"]["grade_id"]] = record
    return records


def _handed_in(course: Course, student: str) -> set[str]:
    folder = course.submitted_dir(student)
    return {p.stem for p in folder.glob("*.ipynb")} if folder.is_dir() else set()


def record_zero(course: Course, student: str) -> None:
    """Record ``student``'s submission with 0 for every autograded test (nothing gradable)."""
    from nbgrader.api import Gradebook

    tests = _source_tests(course)
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_student(student)
        gb.update_or_create_submission(course.assignment, student)
        for notebook, ids in tests.items():
            sub = gb.find_submission_notebook(notebook, course.assignment, student)
            for grade in sub.grades:
                if grade.name in ids:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
        gb.db.commit()


def read_results(course: Course, students: list[str],
                 notes: dict[str, list[str]] | None = None,
                 submitted: dict[str, set[str]] | None = None) -> list[StudentResult]:
    """The autograded scores of ``students`` from the course's gradebook, with each test's
    record (`graders.checks.record`).

    ``submitted`` names, per student, the notebooks they handed in (default: the notebooks in
    their ``submitted/`` folder); the tests of any other notebook are marked not submitted.
    The notes say which answers were joined from split cells.
    """
    from nbgrader.api import Gradebook, MissingEntry

    tests = _source_tests(course)
    results = []
    with Gradebook(course.db_url) as gb:
        for student in students:
            handed_in = (set(submitted.get(student, ())) if submitted is not None
                         else _handed_in(course, student))
            scores = []
            student_notes = list((notes or {}).get(student, []))
            for notebook, ids in tests.items():
                nb = _autograded(course, student, notebook) if notebook in handed_in else {}
                records = _records(nb)
                student_notes += [f"{notebook}.ipynb: the answer {grade_id} was in {count} cells "
                                  "with one id (Split Cell?), graded as one"
                                  for grade_id, count in joined_cells(nb).items()]
                try:
                    sub = gb.find_submission_notebook(notebook, course.assignment, student)
                    by_name = {g.name: g for g in sub.grades}
                except MissingEntry:
                    by_name = {}
                for test in ids:
                    grade = by_name.get(test)
                    scores.append(TestScore(
                        notebook, test, None if grade is None else grade.score,
                        0.0 if grade is None else float(grade.max_score),
                        records.get(test), submitted=notebook in handed_in))
            results.append(StudentResult(student, scores, student_notes))
    return results
