"""What a student reads for a check is its label; the gradebook keeps its id (issue 30).

The ids of Level 2's and Level 3's checks name their fixes (``l2_atomic_save``,
``l3_file_synced``). They stay the gradebook's keys, the CSV's columns and the feedback's names,
since existing courses hold them; the check cells, the self-check's table and the hints use each
check's label (``l2_kill_during_save``), which names what is checked. A notebook of an earlier
release names its checks by id, and keeps working.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import nbformat
import pytest

from graders.checks import CHECKS
from graders.checks.base import check_named
from tests.conftest import ROOT

LEVEL2 = "02_two_latent_failures"
LABELLED = [c for c in CHECKS.values() if c.label]


def test_the_checks_whose_ids_name_a_fix_have_labels_that_do_not():
    assert {c.id for c in LABELLED} >= {"l2_atomic_save", "l2_save_point_a", "l3_file_synced",
                                        "l3_directory_synced"}
    for check in LABELLED:
        for word in ("atomic", "save_point", "synced", "sync", "rename", "temp"):
            assert word not in check.label, (check.id, check.label)
        assert check_named(check.label) is check_named(check.id) is check


def test_an_unknown_name_is_refused_with_the_names_a_student_reads():
    with pytest.raises(KeyError, match="l2_kill_during_save"):
        check_named("l2_no_such_check")


def _student_text(path: Path) -> str:
    """What a student reads of a released notebook: every cell's source (nbgrader's metadata,
    where the grade ids live, is not shown)."""
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells)


@pytest.mark.parametrize("path", sorted((ROOT / "exercises").glob("*.ipynb")),
                         ids=lambda p: p.stem)
def test_no_released_notebook_names_a_check_by_an_id_that_names_its_fix(path):
    text = _student_text(path)
    for check in LABELLED:
        assert not re.search(rf"\b{check.id}\b", text), f"{path.name} names {check.id}"
        if check.notebook == path.stem:
            assert f'run_check("{check.label}", globals())' in text
    assert "l3_why_two_fsyncs" not in text


def _hand_in(release: Path, folder: Path, student: str) -> None:
    from tests.fixtures.notebooks.submissions import submission_notebook

    (folder / student).mkdir(parents=True)
    nb = submission_notebook("reference", json.loads(release.read_text()))
    (folder / student / f"{LEVEL2}.ipynb").write_text(json.dumps(nb))


def _grades(course, student: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:
        notebook = gb.find_submission_notebook(LEVEL2, course.assignment, student)
        return {g.name: g.score for g in notebook.grades if g.name in CHECKS}


@pytest.mark.nbgrader
@pytest.mark.sandbox
def test_a_course_built_with_the_ids_grades_on_after_a_rebuild_with_the_labels(tmp_path):
    """A real gradebook made from a release whose check cells name the ids (as every release
    before the labels did): its student is graded, the course is rebuilt from this release,
    and that hand-in and one of the new release are graded into the same rows."""
    from graders.cli import main
    from graders.nbgrader_plumbing.course import build_course

    source = (ROOT / "exercises" / "src" / f"{LEVEL2}.py").read_text()
    for check in LABELLED:
        source = source.replace(f'run_check("{check.label}"', f'run_check("{check.id}"')
    old = tmp_path / "before" / f"{LEVEL2}.py"
    old.parent.mkdir()
    old.write_text(source)
    sources = [old if s.stem == LEVEL2 else s
               for s in sorted((ROOT / "exercises" / "src").glob("[0-9][0-9]_*.py"))]
    course = build_course(tmp_path / "course", sources=sources, students=["ann", "bo"])
    old_release = course.release_dir / f"{LEVEL2}.ipynb"
    assert 'run_check("l2_atomic_save", globals())' in _student_text(old_release)
    _hand_in(old_release, tmp_path / "first", "ann")
    assert main(["grade", str(tmp_path / "first"), "--course", str(course.root),
                 "--csv", str(tmp_path / "first.csv"), "--quiet"]) == 0
    before = _grades(course, "ann")
    assert before == {"l2_atomic_save": 3, "l2_save_point_a": 3, "l2_atomic_save_hidden": 2,
                      "l2_save_point_a_hidden": 2}, before

    course = build_course(course.root)  # the instructor rebuilds with this release
    new_release = course.release_dir / f"{LEVEL2}.ipynb"
    assert 'run_check("l2_kill_during_save", globals())' in _student_text(new_release)
    _hand_in(old_release, tmp_path / "second", "ann")  # handed in again, as before
    _hand_in(new_release, tmp_path / "second", "bo")
    assert main(["grade", str(tmp_path / "second"), "--course", str(course.root),
                 "--csv", str(tmp_path / "second.csv"), "--quiet"]) == 0
    assert _grades(course, "ann") == before
    assert _grades(course, "bo") == before
    with open(tmp_path / "second.csv", newline="") as f:  # the LMS's columns: the ids, as before
        columns = next(csv.reader(f))
    assert set(before) <= set(columns), columns
