"""The grades CSV as an LMS gradebook import reads it: Canvas's SIS User ID and a percentage."""

from __future__ import annotations

import csv

from graders.nbgrader_plumbing.gradebook import StudentResult
from graders.nbgrader_plumbing.gradebook import TestScore as Score
from graders.nbgrader_plumbing.score_report import write_csv


def _student(name: str, scores: list[float | None], notes=()) -> StudentResult:
    tests = [Score("02_two_latent_failures", f"check_{i}", score, 3.0)
             for i, score in enumerate(scores)]
    return StudentResult(name, tests, list(notes))


def _rows(path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def test_each_row_carries_the_student_id_canvas_matches_on(tmp_path):
    write_csv(tmp_path / "grades.csv", [_student("s1234567", [3, 0]), _student("ada", [3, 3])])
    header, rows = _rows(tmp_path / "grades.csv")
    assert header[:2] == ["student", "SIS User ID"]
    assert [(r["student"], r["SIS User ID"]) for r in rows] == [("s1234567", "s1234567"),
                                                                 ("ada", "ada")]


def test_the_total_is_also_a_percentage(tmp_path):
    write_csv(tmp_path / "grades.csv", [_student("a", [3, 0, 1]), _student("b", [None, None, None],
                                                                       ["not submitted"])])
    header, rows = _rows(tmp_path / "grades.csv")
    assert header[-4:] == ["autograded_score", "autograded_max", "autograded_percent", "notes"]
    assert header[2:5] == ["check_0", "check_1", "check_2"]
    a, b = rows
    assert (a["autograded_score"], a["autograded_max"], a["autograded_percent"]) == ("4", "9",
                                                                                     "44.44")
    assert (b["autograded_score"], b["autograded_percent"], b["notes"]) == ("0", "0",
                                                                           "not submitted")


def test_no_autograded_points_gives_no_percentage(tmp_path):
    write_csv(tmp_path / "grades.csv", [StudentResult("a", [], [])])
    _, rows = _rows(tmp_path / "grades.csv")
    assert rows[0]["autograded_percent"] == ""
