"""The course's gradebook: each student's autograded scores, with each test's reason; zeros.

:func:`read_results` reads nbgrader's sqlite gradebook and, for each test, the reason its
verdict gave in the autograded notebook; :func:`record_zero` records a student with nothing
gradable (or whose autograde failed) with 0 for every autograded test.
"""

from __future__ import annotations

from dataclasses import dataclass

import nbformat

from graders.nbgrader_plumbing.cells import autograded_test_cells
from graders.nbgrader_plumbing.course import Course

__all__ = ["TestScore", "StudentResult", "record_zero", "read_results"]


@dataclass
class TestScore:
    """One autograded test of one student, as the gradebook has it."""

    notebook: str
    test: str
    score: float | None
    max_score: float
    message: str = ""
    #: False when the student did not hand this notebook in (its tests then score 0)
    submitted: bool = True


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


def _source_tests(course: Course) -> dict[str, list[str]]:
    tests = {}
    for name in course.notebooks():
        nb = nbformat.read(course.source_dir / f"{name}.ipynb", as_version=4)
        tests[name] = [c.metadata["nbgrader"]["grade_id"] for c in autograded_test_cells(nb)]
    return tests


def _messages(course: Course, student: str, notebook: str) -> dict[str, str]:
    """Each test's reason, from the autograded notebook: the text under its verdict's heading,
    "<title>: not passed (0/3 points)", unwrapped into one paragraph."""
    path = course.autograded_dir(student) / f"{notebook}.ipynb"
    if not path.is_file():
        return {}
    nb = nbformat.read(path, as_version=4)
    messages = {}
    for cell in autograded_test_cells(nb):
        texts = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                texts.append("\n".join(output.get("traceback") or [output.get("evalue", "")]))
            elif output.get("output_type") == "stream":
                texts.append(output.get("text", ""))
        lines = "\n".join(texts).strip().splitlines()
        heads = [i for i, line in enumerate(lines) if line.endswith(" points)")]
        start = heads[0] + 1 if heads else 0
        messages[cell.metadata["nbgrader"]["grade_id"]] = " ".join(
            line.strip() for line in lines[start:] if line.strip())
    return messages


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
    """The autograded scores of ``students`` from the course's gradebook, with each test's reason.

    ``submitted`` names, per student, the notebooks they handed in (default: the notebooks in
    their ``submitted/`` folder); the tests of any other notebook are marked not submitted, and
    the student's notes say so.
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
                if notebook not in handed_in:
                    student_notes.append(f"{notebook}.ipynb was not submitted: its tests "
                                         "score 0")
                messages = _messages(course, student, notebook)
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
                        messages.get(test, "") if notebook in handed_in else "",
                        submitted=notebook in handed_in))
            results.append(StudentResult(student, scores, student_notes))
    return results
