"""``checkpoint-lab grade`` never loses a student's work or a grade (issue 26).

A real class cycle with nbgrader's own commands: students submit through the exchange, the
instructor collects, grades with ``checkpoint-lab grade`` (from the course's own ``submitted/``,
or from a separate folder), then generates, releases and (as a student) fetches the feedback and
exports. Every file nbgrader wrote is still there byte for byte, and the grades are nbgrader's
own ``autograde``'s.
"""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import pytest

from tests.fixtures.notebooks.class_cycle import (
    STUDENTS,
    collected_course,
    copy_course,
    grade_cli,
    hash_tree,
    nbgrader,
    scores,
    student_cmd,
)
from tests.fixtures.notebooks.submissions import LEVEL2

pytestmark = pytest.mark.nbgrader


@pytest.fixture(scope="module")
def collected():
    """A course after ``nbgrader collect`` and ``nbgrader autograde``: (course, its grades)."""
    course = collected_course()
    baseline = scores(course)
    assert sum(baseline["alice"].values()) == 10 and sum(baseline["bob"].values()) == 0
    assert sum(baseline["carol"].values()) == 5
    return course, baseline


@pytest.fixture
def course(collected, tmp_path):
    return copy_course(collected[0], tmp_path / "course")


def _feedback_cycle(course, tmp_path: Path, baseline) -> None:
    """generate_feedback, release_feedback, fetch_feedback (as alice), export: all work, and
    the export has nbgrader's grades."""
    nbgrader("generate_feedback", "lesson2", cwd=course.root)
    nbgrader("release_feedback", "lesson2", cwd=course.root)
    home = tmp_path / "alice-home"
    (home / "lesson2").mkdir(parents=True)
    nbgrader("fetch_feedback", "lesson2", *student_cmd(course, "alice"), cwd=home)
    fetched = list((home / "lesson2" / "feedback").glob(f"*/{LEVEL2}.html"))
    assert fetched, "alice fetched no feedback"
    nbgrader("export", cwd=course.root)
    with open(course.root / "grades.csv", newline="") as f:
        exported = {row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(f)
                    if row["assignment"] == "lesson2"}
    assert exported == {s: sum(baseline[s].values()) for s in STUDENTS}


def test_grading_the_courses_own_submitted_keeps_every_file(course, collected, tmp_path):
    _, baseline = collected
    submitted = hash_tree(course.root / "submitted")
    assert {f"{s}/lesson2/{n}" for s in STUDENTS
            for n in ("timestamp.txt", "submission_secret.txt")} <= set(submitted)
    proc = grade_cli("submitted", "--course", ".", "--csv", str(tmp_path / "g.csv"),
                     cwd=course.root)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "recorded with 0" not in proc.stdout + proc.stderr
    assert hash_tree(course.root / "submitted") == submitted
    assert scores(course) == baseline
    backups = list((course.root / "gradebook-backups").glob("gradebook-*.db"))
    assert len(backups) == 1 and str(backups[0]) in proc.stdout
    assert not (course.root / ".checkpoint-lab-grading" / "batch").exists()
    _feedback_cycle(course, tmp_path, baseline)
    assert hash_tree(course.root / "submitted") == submitted


def test_grading_a_separate_folder_keeps_nbgraders_files(course, collected, tmp_path):
    _, baseline = collected
    submitted = hash_tree(course.root / "submitted")
    handins = tmp_path / "downloaded"
    for student in STUDENTS:  # SUBMISSIONS/<student>/<notebook>.ipynb: notebooks only
        (handins / student).mkdir(parents=True)
        shutil.copy2(course.submitted_dir(student) / f"{LEVEL2}.ipynb", handins / student)
    handed = hash_tree(handins)
    proc = grade_cli(str(handins), "--course", str(course.root), "--csv",
                     str(tmp_path / "g.csv"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert hash_tree(handins) == handed
    assert hash_tree(course.root / "submitted") == submitted
    assert scores(course) == baseline
    _feedback_cycle(course, tmp_path, baseline)


def test_unreadable_work_keeps_the_earlier_grade_unless_forced(course, collected, tmp_path):
    _, baseline = collected
    handins = tmp_path / "broken"
    (handins / "alice").mkdir(parents=True)
    (handins / "alice" / f"{LEVEL2}.ipynb").write_text("def save_checkpoint(s):\n    pass\n")
    (handins / "carol").mkdir()
    os.symlink(course.submitted_dir("alice") / f"{LEVEL2}.ipynb",
               handins / "carol" / f"{LEVEL2}.ipynb")
    before = hash_tree(course.root)
    proc = grade_cli(str(handins), "--course", str(course.root), "--csv",
                     str(tmp_path / "g.csv"), cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    for student in ("alice", "carol"):
        assert f"warning: not graded: {student}/{LEVEL2}.ipynb: " in out, out[-3000:]
    assert "earlier grade kept (give --force to grade it anyway)" in out
    assert "it scores 0" not in out
    assert scores(course) == baseline
    after = hash_tree(course.root)
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert {p.split("/")[0] for p in changed} <= {"gradebook-backups", ".checkpoint-lab-grading",
                                                 "gradebook.db"}, sorted(changed)

    proc = grade_cli(str(handins), "--course", str(course.root), "--csv",
                     str(tmp_path / "g.csv"), "--force", "--no-feedback", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    now = scores(course)
    assert sum(now["alice"].values()) == 0 and sum(now["carol"].values()) == 0
    assert now["bob"] == baseline["bob"]
    assert (course.submitted_dir("alice") / "timestamp.txt").read_bytes() == \
        (collected[0].submitted_dir("alice") / "timestamp.txt").read_bytes()


def test_dry_run_writes_nothing(course, collected, tmp_path):
    handins = tmp_path / "handins"
    shutil.copytree(course.root / "submitted", handins)
    (handins / "bob" / "lesson2" / f"{LEVEL2}.ipynb").write_bytes(
        (course.submitted_dir("alice") / f"{LEVEL2}.ipynb").read_bytes())
    before = hash_tree(course.root), hash_tree(handins)
    proc = grade_cli(str(handins), "--course", str(course.root), "--csv",
                     str(tmp_path / "g.csv"), "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (hash_tree(course.root), hash_tree(handins)) == before
    assert "Dry run" in proc.stdout and str(tmp_path / "g.csv") in proc.stdout
    with open(tmp_path / "g.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert set(rows) == set(STUDENTS)
    assert "bob: 10/40" in proc.stdout, proc.stdout[-3000:]
    assert not (course.root / ".checkpoint-lab-grading").exists()
