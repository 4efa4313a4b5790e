"""The autograde preprocessors' gradings: each submission's own, closed when its autograde is
over (issue 31; before, one pool and one cache of started gradings served the whole process, so
a student whose time ran out kept the next student's notebooks queued behind theirs)."""

from __future__ import annotations

import threading

import pytest

import graders.nbgrader_plumbing.grading_worker as grading_worker
import graders.nbgrader_plumbing.preprocessors as preprocessors
from graders.nbgrader_plumbing.course import nbgrader_api
from graders.nbgrader_plumbing.gradings import Gradings
from tests.fixtures.notebooks.class_cycle import collected_course, copy_course, scores

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]


def test_two_autograde_runs_in_one_worker_share_no_gradings(tmp_path, monkeypatch):
    """Two students autograded one after the other in one grading worker: each run grades on a
    pool of its own, closed once that student is done, and the grades are nbgrader's own."""
    course = copy_course(collected_course(), tmp_path / "course")
    before = scores(course)
    monkeypatch.setattr(grading_worker, "_API", nbgrader_api(course.root))
    made: list[Gradings] = []
    ran_on: dict[str, list[str]] = {}
    real_init, real_grade = Gradings.__init__, preprocessors._grade_cells

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        made.append(self)

    def grade(cells, timeout):
        pool = threading.current_thread().name.rsplit("_", 1)[0]
        ran_on.setdefault(pool, []).append(cells.notebook)
        return real_grade(cells, timeout)

    monkeypatch.setattr(Gradings, "__init__", init)
    monkeypatch.setattr(preprocessors, "_grade_cells", grade)
    for student in ("alice", "carol"):
        outcome = grading_worker.grade_one(student, "lesson2", feedback=False)
        assert outcome["success"], outcome
        assert made and all(g.closed for g in made), f"{student}'s gradings left open"
    assert len(made) == 2 and made[0] is not made[1], made
    assert sorted(ran_on) == sorted(g.name for g in made), (ran_on, [g.name for g in made])
    for gradings in made:
        with pytest.raises(RuntimeError, match="closed"):
            gradings.start(None, None)
    after = scores(course)
    assert {s: after[s] for s in ("alice", "carol")} == {s: before[s] for s in ("alice", "carol")}
