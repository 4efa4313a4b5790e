"""``checkpoint-lab grade``: bad input gets one clear line; odd submissions never stop a batch.

The grading itself, end to end, is in test_nbgrader_pipeline.py.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from graders.cli import main
from tests.fixtures.notebooks.course_cache import shared_course


@pytest.fixture(scope="module")
def course():
    return shared_course()


def _grade(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["grade", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_help_names_the_layout():
    proc = subprocess.run([sys.executable, "-m", "graders.cli", "grade", "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "SUBMISSIONS/<student>/<notebook>.ipynb" in proc.stdout
    assert "--course" in proc.stdout and "--csv" in proc.stdout


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.nbgrader
def test_a_missing_submissions_folder(course, tmp_path, capsys):
    status, _, err = _grade(capsys, str(tmp_path / "nope"), "--course", str(course.root),
                            "--csv", str(tmp_path / "s.csv"))
    assert status == 2 and "no folder" in _one_line(err)
    assert not (tmp_path / "s.csv").exists()


@pytest.mark.nbgrader
def test_notebooks_not_in_student_folders(course, tmp_path, capsys):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "02_two_latent_failures.ipynb").write_text("{}")
    status, _, err = _grade(capsys, str(tmp_path / "subs"), "--course", str(course.root),
                            "--csv", str(tmp_path / "s.csv"))
    assert status == 2 and "folder of their own" in _one_line(err)


@pytest.mark.nbgrader
def test_no_student_folders(course, tmp_path, capsys):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "readme.txt").write_text("hi")
    status, _, err = _grade(capsys, str(tmp_path / "subs"), "--course", str(course.root),
                            "--csv", str(tmp_path / "s.csv"))
    assert status == 2 and "no student folders" in _one_line(err)


@pytest.mark.sandbox  # grade says first whether a sandbox can confine the submissions
def test_a_folder_that_is_not_a_course(tmp_path, capsys):
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    status, _, err = _grade(capsys, str(tmp_path / "subs"), "--course", str(tmp_path),
                            "--csv", str(tmp_path / "s.csv"))
    assert status == 2 and "checkpoint-lab course" in _one_line(err)


@pytest.mark.nbgrader
def test_unknown_notebook_and_not_json_are_reported_and_recorded(course, tmp_path, capsys):
    subs = tmp_path / "subs"
    (subs / "cli_unknown").mkdir(parents=True)
    (subs / "cli_unknown" / "homework.ipynb").write_text(json.dumps({"cells": []}))
    (subs / "cli_garbage").mkdir()
    (subs / "cli_garbage" / "02_two_latent_failures.ipynb").write_bytes(b"\x89PNG\r\n")
    status, out, err = _grade(capsys, str(subs), "--course", str(course.root),
                              "--csv", str(tmp_path / "s.csv"), "--quiet")
    assert status == 0, err
    assert "cli_unknown/homework.ipynb is not a notebook of lesson2" in err
    assert "cli_garbage/02_two_latent_failures.ipynb: it is not a notebook (not UTF-8" in err
    with open(tmp_path / "s.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert rows["cli_unknown"]["autograded_score"] == "0"
    assert rows["cli_garbage"]["l2_atomic_save"] == "0"
    assert (subs / "cli_garbage" / "02_two_latent_failures.ipynb").read_bytes() == b"\x89PNG\r\n"


@pytest.mark.sandbox  # grade says first whether a sandbox can confine the submissions
def test_bad_jobs_and_csv_paths(tmp_path, capsys):
    status, _, err = _grade(capsys, str(tmp_path), "--course", str(tmp_path), "--csv",
                            str(tmp_path / "no" / "such" / "dir.csv"))
    assert status == 2
    _one_line(err)
    status, _, err = _grade(capsys, str(tmp_path), "--course", str(tmp_path), "--csv",
                            str(Path(tmp_path) / "s.csv"), "--jobs", "0")
    assert status == 2 and "--jobs" in _one_line(err)


@pytest.mark.nbgrader
def test_nbgraders_own_layout_is_read_too(course, tmp_path):
    from graders.nbgrader_plumbing.submissions import find_submissions

    (tmp_path / "ann" / "lesson2").mkdir(parents=True)
    (tmp_path / "ann" / "lesson2" / "02_two_latent_failures.ipynb").write_text(
        (course.release_dir / "02_two_latent_failures.ipynb").read_text())
    (tmp_path / "bo").mkdir()
    (tmp_path / "bo" / "01_incomplete_checkpoint.ipynb").write_text(
        (course.release_dir / "01_incomplete_checkpoint.ipynb").read_text())
    found = find_submissions(tmp_path, course)
    assert sorted(found.notebooks["ann"]) == ["02_two_latent_failures"]
    assert sorted(found.notebooks["bo"]) == ["01_incomplete_checkpoint"]
    assert not found.notes


@pytest.mark.nbgrader
def test_the_table_shows_the_whole_reason_wrapped_and_marks_what_was_not_submitted(
        course, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    subs = tmp_path / "subs"
    (subs / "cli_half").mkdir(parents=True)
    (subs / "cli_half" / "02_two_latent_failures.ipynb").write_text(
        (course.release_dir / "02_two_latent_failures.ipynb").read_text())
    status, out, err = _grade(capsys, str(subs), "--course", str(course.root),
                              "--csv", str(tmp_path / "s.csv"), "--no-feedback")
    assert status == 0, err
    lines = out.split("\nGraded 1 student")[0].splitlines()  # the table, not the paths after it
    assert max(len(line) for line in lines) <= 100, out
    # one line on the sandbox that graded, then the table
    tier, out = out.split("\n", 1)
    assert tier.startswith("sandbox: ") and " tier " in tier, tier
    assert out.startswith("Class: 1 student"), out[:200]
    student = out.split("\ncli_half: ")[1]
    table = " ".join(student.split())
    # The released starter fails the atomic save: the reason is there to its last sentence.
    atomic = table[table.index("l2_atomic_save"):]
    assert atomic.split(" l2_")[0].startswith("l2_atomic_save 0/3 not passed Ran your code")
    assert "Resume would fail on json.load" in atomic.split(" l2_")[0], atomic
    # Level 1 was not handed in: not the same as a zero, and one line, not a row per check.
    assert not [line for line in student.splitlines() if line.strip().startswith("l1_")], out
    assert "01_incomplete_checkpoint.ipynb: not submitted (2 checks, 5 points" in table
    with open(tmp_path / "s.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["student"] == "cli_half")
    assert "01_incomplete_checkpoint.ipynb was not submitted" in row["notes"]
    assert "02_two_latent_failures" not in row["notes"]


def _record(check_id: str, message: str, cause: str):
    from graders.checks.record import CheckRecord

    return CheckRecord(check_id=check_id, notebook="02", title=check_id, hidden=False, points=3,
                       score=0, status="failed", message=message, summary="", cause=cause)


def test_format_student_wraps_every_line_to_the_width():
    from graders.checks.record import CheckRecord
    from graders.nbgrader_plumbing.gradebook import StudentResult, TestScore
    from graders.nbgrader_plumbing.score_report import format_student

    reason = "Killed halfway through save 1: checkpoint.json held 936 of its 1,873 bytes. " * 4
    record = CheckRecord(check_id="l2_atomic_save", notebook="02", title="t", hidden=False,
                         points=3.0, score=0.0, status="failed", message=reason.strip(),
                         summary=reason.strip(), cause="in_place_write")
    result = StudentResult("ann", [TestScore("02", "l2_atomic_save", 0, 3, record),
                                   TestScore("01", "l1_saves_all_six", 0, 3, None,
                                             submitted=False)], ["a note " * 20])
    text = format_student(result, width=70)
    assert max(len(line) for line in text.splitlines()) <= 70, text
    assert " ".join(text.split()).count("Killed halfway through save 1") == 4
    assert "  01.ipynb: not submitted (1 check, 3 points, scored 0)" in text


def test_the_class_table_names_each_cause_in_words_with_its_code():
    """Issue 28 item 6: a cause was shown as its id lower-cased ("no save point a")."""
    from graders.nbgrader_plumbing.gradebook import StudentResult, TestScore
    from graders.nbgrader_plumbing.score_report import format_class

    def student(name: str, cause: str) -> StudentResult:
        record = _record("l2_save_point_a", "Killed while tool 1 ran.", cause)
        return StudentResult(name, [TestScore("02", "l2_save_point_a", 0, 3, record)], [])

    text = " ".join(format_class([student("ann", "no_save_point_a"), student("bo", "hung"),
                                  student("cy", "")], width=100).split())
    assert "A tool ran and left no trace: no save before it ran (no_save_point_a) (1): ann" in text
    assert "The run was still going after the timeout (hung) (1): bo" in text
    assert "No reason recorded (1): cy" in text
    assert "no save point a" not in text


@pytest.mark.nbgrader
def test_a_second_run_on_one_course_is_refused_in_one_line(course, tmp_path, capsys):
    from graders.nbgrader_plumbing.grading_batch import batch_lock

    (tmp_path / "subs" / "ann").mkdir(parents=True)
    backups = set((course.root / "gradebook-backups").glob("*"))
    with batch_lock(course):  # another run, grading this course now
        status, _, err = _grade(capsys, str(tmp_path / "subs"), "--course", str(course.root),
                                "--csv", str(tmp_path / "s.csv"))
    assert status == 2 and "another `checkpoint-lab grade` is grading" in _one_line(err)
    assert set((course.root / "gradebook-backups").glob("*")) == backups
    assert not (tmp_path / "s.csv").exists()


@pytest.mark.nbgrader
def test_the_course_itself_is_not_a_folder_of_hand_ins(course, tmp_path, capsys):
    status, _, err = _grade(capsys, str(course.root), "--course", str(course.root),
                            "--csv", str(tmp_path / "s.csv"))
    assert status == 2 and "is the course directory" in _one_line(err)
