"""``checkpoint-lab grade`` killed (SIGKILL) at any moment of a batch loses nothing (issue 26).

An uninterrupted run of a batch of three students lists the named moments it passes
(``CHECKPOINT_LAB_GRADE_TRACE``): the start, the hand-ins' copy, each student's autograde in a
worker (before and after nbgrader's autograde, i.e. mid-student), the journal, each folder swapped
in (submitted, autograded, feedback), the gradebook rows written but not committed, and committed.
Then the batch is run again and killed (``CHECKPOINT_LAB_GRADE_KILL_AT``) at each kind of those
moments in turn (the students taking turns), every run picking up what the killed one left.
After every kill, for every student, the submission, the autograded notebooks, the feedback and
the gradebook rows are each as before the batch or as after it, never half, the gradebook passes
``PRAGMA integrity_check``, the folder of hand-ins is untouched and no process of the batch is
left; the run that finishes gives what the uninterrupted run gave.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graders.nbgrader_plumbing.durable import KILL_ENV, TRACE_ENV
from tests.fixtures.notebooks.class_cycle import (
    ENV,
    STUDENTS,
    collected_course,
    copy_course,
    hash_tree,
    scores,
)
from tests.fixtures.notebooks.submissions import LEVEL2

pytestmark = pytest.mark.nbgrader

#: Each student hands in the next one's notebook, so that every grade changes.
ROTATED = {"alice": "bob", "bob": "carol", "carol": "alice"}
FOLDERS = ("submitted", "autograded", "feedback")


def _state(course) -> dict[str, dict]:
    """Per student: each folder's hash and the gradebook scores."""
    graded = scores(course)
    return {s: {**{kind: hash_tree(course.root / kind / s) for kind in FOLDERS},
                "gradebook": graded.get(s)} for s in STUDENTS}


def _run(course, handins: Path, tmp: Path, **env: str) -> int:
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "graders.cli", "grade", str(handins), "--course", str(course.root),
         "--csv", str(tmp / "g.csv"), "--jobs", "2", "--quiet"],
        cwd=tmp, env={**ENV, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True)
    _, err = proc.communicate(timeout=600)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # a killed batch's workers go with it
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("processes of the killed batch were still running 30 s after it")
    assert proc.returncode in (0, -signal.SIGKILL), err.decode()[-3000:]
    print(f"{env.get(KILL_ENV, 'no kill')}: {proc.returncode} in "
          f"{time.monotonic() - started:.1f} s")
    return proc.returncode


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """(the course before the batch, the hand-ins, its state before, after, the points passed)"""
    scratch = tmp_path_factory.mktemp("killed")
    before_course = collected_course()
    handins = scratch / "handins"
    for student, other in ROTATED.items():
        (handins / student).mkdir(parents=True)
        shutil.copy2(before_course.submitted_dir(other) / f"{LEVEL2}.ipynb", handins / student)
    trace = scratch / "trace.txt"
    course = copy_course(before_course, scratch / "uninterrupted")
    assert _run(course, handins, scratch, **{TRACE_ENV: str(trace)}) == 0
    points = list(dict.fromkeys(line.split()[0] for line in trace.read_text().splitlines()))
    return before_course, handins, _state(before_course), _state(course), points


def test_the_batch_passes_every_kind_of_point(batch):
    *_, before, after, points = batch
    kinds = {p.split(":")[0] for p in points}
    assert {"batch-start", "hand-ins-copied", "autograding", "autograded", "committing",
            "swapped-submitted", "swapped-autograded", "swapped-feedback", "gradebook-written",
            "gradebook-committed", "done"} <= kinds, kinds
    assert len(points) >= 20
    for student in STUDENTS:  # every grade changes, so "as before" and "as after" differ
        assert before[student]["gradebook"] != after[student]["gradebook"]


def _check_invariants(course, before, after, where: str) -> None:
    now = _state(course)
    for student in STUDENTS:
        for part in (*FOLDERS, "gradebook"):
            assert now[student][part] in (before[student][part], after[student][part]), \
                f"killed at {where}: {student}'s {part} is neither as before nor as after"
    with sqlite3.connect(course.gradebook_path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok", where


def _chosen(points: list[str]) -> list[str]:
    """Each kind of point once, in the batch's order; the students take turns at the kinds each
    student passes (so a kill finds some students committed and others not), a kill at each
    kind is a kill in each phase of the batch."""
    students = list(dict.fromkeys(p.split(":")[1] for p in points if p.startswith("committing:")))
    chosen = []
    for turn, kind in enumerate(dict.fromkeys(p.split(":")[0] for p in points)):
        of_kind = [p for p in points if p.split(":")[0] == kind]
        mine = [p for p in of_kind if p.endswith(f":{students[turn % len(students)]}")]
        chosen.append((mine or of_kind)[0])
    return sorted(chosen, key=points.index)


@pytest.mark.timeout(1500)
def test_killed_at_every_point_loses_nothing_and_a_rerun_finishes(batch, tmp_path):
    before_course, handins, before, after, all_points = batch
    points = _chosen(all_points)
    handed = hash_tree(handins)
    course = copy_course(before_course, tmp_path / "course")
    killed = 0
    for where in points:
        if _run(course, handins, tmp_path, **{KILL_ENV: where}) == 0:
            # this run had nothing left to do at `where`: it finished; start again from before
            assert _state(course) == after, f"finished (aimed at {where}) unlike uninterrupted"
            shutil.rmtree(course.root)
            course = copy_course(before_course, tmp_path / "course")
            assert _run(course, handins, tmp_path, **{KILL_ENV: where}) != 0, where
        killed += 1
        _check_invariants(course, before, after, where)
        assert hash_tree(handins) == handed, f"killed at {where}: the hand-ins changed"
    assert killed == len(points)
    assert {p.split(":")[0] for p in points} == {p.split(":")[0] for p in all_points}
    assert len({p.split(":")[1] for p in points if ":" in p}) == len(STUDENTS), points
    assert _run(course, handins, tmp_path) == 0
    assert _state(course) == after
    assert not (course.root / ".checkpoint-lab-grading" / "batch").exists()
