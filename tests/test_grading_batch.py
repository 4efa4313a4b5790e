"""A grading batch's hand-ins' copy (`graders.nbgrader_plumbing.grading_batch`): the folder of
hand-ins copied whole, read in its place; a batch cut short is picked up only where its copy is
there to read (issue 31 renamed its folder from ``snapshot`` to ``hand-ins``)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from graders.nbgrader_plumbing.course import Course
from graders.nbgrader_plumbing.grading_batch import HAND_INS, WORK_DIR, open_batch
from graders.nbgrader_plumbing.student_commit import Journal
from tests.fixtures.notebooks.class_cycle import hash_tree


def _course(root: Path) -> Course:
    """The least a batch copies of a course: its config, source notebooks and gradebook."""
    course = Course(root.resolve())
    course.source_dir.mkdir(parents=True)
    (course.source_dir / "x.ipynb").write_text("{}", encoding="utf-8")
    course.config_path.write_text("c = get_config()\n", encoding="utf-8")
    sqlite3.connect(course.gradebook_path).close()
    return course


def _hand_ins(folder: Path) -> Path:
    (folder / "alice").mkdir(parents=True)
    (folder / "alice" / "02_two_latent_failures.ipynb").write_bytes(b'{"cells": []}\n\xff')
    (folder / "alice" / "timestamp.txt").write_text("2026-01-01 00:00:00", encoding="utf-8")
    os.symlink("../alice", folder / "bob")  # kept as a link: the reader refuses links
    return folder


def test_a_batch_reads_the_hand_ins_copy_made_byte_for_byte(tmp_path):
    course, source = _course(tmp_path / "course"), _hand_ins(tmp_path / "in")
    batch = open_batch(course, source, force=False, dry_run=False)
    assert batch.hand_ins == batch.work / HAND_INS and not batch.resumed
    assert hash_tree(batch.hand_ins) == hash_tree(source)
    assert os.readlink(batch.hand_ins / "bob") == "../alice"
    assert sorted(os.listdir(batch.work)) == [HAND_INS, "journal.json", "shadow"]


def test_a_batch_cut_short_is_picked_up_with_its_copy(tmp_path):
    course, source = _course(tmp_path / "course"), _hand_ins(tmp_path / "in")
    first = open_batch(course, source, force=False, dry_run=False)
    again = open_batch(course, source, force=False, dry_run=False)
    assert again.resumed and again.hand_ins == first.hand_ins


def test_a_batch_of_an_earlier_release_without_the_copy_is_started_anew(tmp_path):
    """An earlier release kept its copy in ``snapshot``: its cut-short batch is not resumed
    with nothing to read, but started again (its commits finished first; here there are none)."""
    course, source = _course(tmp_path / "course"), _hand_ins(tmp_path / "in")
    work = course.root / WORK_DIR / "batch"
    (work / "snapshot" / "alice").mkdir(parents=True)
    Journal(work / "journal.json", {"source": str(source.resolve()), "force": False,
                                    "planned": False, "students": {}}).save()
    batch = open_batch(course, source, force=False, dry_run=False)
    assert not batch.resumed
    assert hash_tree(batch.hand_ins) == hash_tree(source)
    assert not (work / "snapshot").exists()
    assert json.loads((work / "journal.json").read_text())["source"] == str(source.resolve())
