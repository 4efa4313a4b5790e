"""The batch's journal, and one student's results committed from the shadow course.

The journal (``journal.json`` in the batch's work folder, written durably) says, per student,
where the batch is: ``pending`` (staged, not graded yet), ``graded`` (in the shadow course),
``committing`` (its folders being swapped in, with the inode of each new folder noted),
``done``. :func:`commit_student` swaps the student's new ``submitted/``, ``autograded/`` and
``feedback/`` folders in (each whole, with one exchange) and then copies their gradebook rows in
one transaction; killed at any moment and run again, it finishes what it started.
"""

from __future__ import annotations

import json
from pathlib import Path

from graders.nbgrader_plumbing.course import Course
from graders.nbgrader_plumbing.durable import (
    fsync_tree,
    inode_of,
    point,
    read_json,
    swap_in,
    write_durably,
)
from graders.nbgrader_plumbing.gradebook_rows import copy_student_rows

__all__ = ["Journal", "commit_student", "FOLDERS"]

#: The per-student folders a grade writes: ``<kind>/<student>/<assignment>/``.
FOLDERS = ("submitted", "autograded", "feedback")


class Journal:
    """The batch's journal: its source, and each student's state (a dict, saved durably)."""

    def __init__(self, path: Path, data: dict):
        self.path = Path(path)
        self.data = data

    @classmethod
    def load(cls, path: Path) -> Journal | None:
        data = read_json(path)
        return cls(path, data) if data and isinstance(data.get("students"), dict) else None

    @property
    def students(self) -> dict[str, dict]:
        return self.data["students"]

    def save(self) -> None:
        write_durably(self.path, json.dumps(self.data, indent=1).encode("utf-8"))


def _folder(root: Path, kind: str, student: str, assignment: str) -> Path:
    return root / kind / student / assignment


def commit_student(journal: Journal, course: Course, shadow: Course, student: str) -> None:
    """Commit ``student``'s graded results from ``shadow`` into ``course`` (see the module)."""
    entry = journal.students[student]
    if entry["state"] == "graded":
        inodes = {}
        if entry["what"] == "full":
            for kind in FOLDERS:
                staged = _folder(shadow.root, kind, student, course.assignment)
                node = inode_of(staged)
                if node is not None:
                    fsync_tree(staged)
                    inodes[kind] = node
        entry.update(state="committing", inodes=inodes)
        journal.save()
        point(f"committing:{student}")
    if entry["state"] != "committing":
        return
    work = journal.path.parent
    for kind, node in entry["inodes"].items():
        swap_in(_folder(shadow.root, kind, student, course.assignment),
                _folder(course.root, kind, student, course.assignment), node,
                work / "old" / kind / student)
        point(f"swapped-{kind}:{student}")
    copy_student_rows(shadow.gradebook_path, course.gradebook_path, course.assignment, student)
    point(f"gradebook-committed:{student}")
    entry["state"] = "done"
    journal.save()
    point(f"done:{student}")
