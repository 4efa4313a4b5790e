"""The submissions folder: who handed in which notebook, what cannot be graded, and why.

:func:`find_submissions` reads a folder laid out as ``SUBMISSIONS/<student>/<notebook>.ipynb``
(or nbgrader's own ``<student>/<assignment>/<notebook>.ipynb``). A broken submission never
breaks the batch: a file that is not a notebook is left out (nbgrader then scores that notebook
0, as for a missing file) and noted. :func:`stage_submissions` files the gradable ones where
nbgrader's ``autograde`` reads them, ``submitted/<student>/<assignment>/``.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from graders.nbgrader_plumbing.course import Course

__all__ = ["LayoutError", "Submissions", "find_submissions", "handed_in_notebooks",
           "stage_submissions"]


class LayoutError(ValueError):
    """The submissions folder is not laid out as ``SUBMISSIONS/<student>/<notebook>.ipynb``."""


@dataclass
class Submissions:
    """What a submissions folder holds: per student, per notebook, the file; and what is wrong."""

    notebooks: dict[str, dict[str, Path]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)

    @property
    def students(self) -> list[str]:
        return sorted(set(self.notebooks) | set(self.notes))

    def note(self, student: str, text: str) -> None:
        self.notes.setdefault(student, []).append(text)


def _notebook_problem(path: Path) -> str | None:
    """Why ``path`` is not a notebook nbgrader can read (None when it is one)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return "it is not a notebook (not UTF-8 text)"
    except OSError as err:
        return f"it cannot be read ({err.strerror})"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return f"it is not a notebook (not JSON: line {err.lineno}: {err.msg})"
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return "it is not a notebook (its JSON has no list of cells)"
    try:
        nbformat.reads(text, as_version=4)
    except Exception as err:  # nbformat raises several kinds on a malformed notebook
        return f"nbformat cannot read it ({type(err).__name__}: {err})"
    return None


def find_submissions(folder: Path, course: Course) -> Submissions:
    """Read ``folder`` laid out as ``<student>/<notebook>.ipynb`` (or nbgrader's own
    ``<student>/<assignment>/<notebook>.ipynb``); raise LayoutError when it is laid out otherwise.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise LayoutError(f"no folder {folder}: give the folder that holds one folder per "
                          "student, SUBMISSIONS/<student>/<notebook>.ipynb")
    known = course.notebooks()
    loose = sorted(p.name for p in folder.glob("*.ipynb"))
    if loose:
        raise LayoutError(f"{folder} holds notebooks directly ({', '.join(loose[:3])}); put each "
                          "student's notebooks in a folder of their own: "
                          "SUBMISSIONS/<student>/<notebook>.ipynb")
    students = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not students:
        raise LayoutError(f"{folder} holds no student folders; lay it out as "
                          "SUBMISSIONS/<student>/<notebook>.ipynb")
    found = Submissions()
    for student_dir in students:
        student = student_dir.name
        inner = student_dir / course.assignment
        base = inner if inner.is_dir() and not list(student_dir.glob("*.ipynb")) else student_dir
        paths = sorted(base.glob("*.ipynb"))
        if not paths:
            found.note(student, f"no notebooks in {student_dir.name}/ (expected "
                       f"{', '.join(n + '.ipynb' for n in known)})")
            continue
        for path in paths:
            where = f"{student}/{path.name}"
            if path.stem not in known:
                found.note(student, f"{where} is not a notebook of {course.assignment} (expected "
                           f"{' or '.join(n + '.ipynb' for n in known)}); it was not graded")
                continue
            problem = _notebook_problem(path)
            if problem:
                found.note(student, f"{where}: {problem}; it scores 0")
                continue
            found.notebooks.setdefault(student, {})[path.stem] = path
    return found


def handed_in_notebooks(folder: Path, student: str, course: Course) -> set[str]:
    """The assignment's notebooks ``student`` handed in to ``folder`` (readable or not), by name.

    Both layouts count: ``<student>/<notebook>.ipynb`` and ``<student>/<assignment>/...``.
    """
    base = Path(folder) / student
    names = {p.stem for p in base.glob("*.ipynb")}
    names |= {p.stem for p in (base / course.assignment).glob("*.ipynb")}
    return names & set(course.notebooks())


def stage_submissions(course: Course, found: Submissions) -> None:
    """Copy the gradable notebooks into ``course/submitted/<student>/<assignment>/``."""
    for student, notebooks in found.notebooks.items():
        dest = course.submitted_dir(student)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for name, path in notebooks.items():
            shutil.copyfile(path, dest / f"{name}.ipynb")
