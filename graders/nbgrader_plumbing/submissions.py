"""The submissions folder: who handed in which notebook, what cannot be graded, and why.

:func:`find_submissions` reads a folder laid out as ``SUBMISSIONS/<student>/<notebook>.ipynb`` (or
nbgrader's own ``<student>/<assignment>/<notebook>.ipynb``). A broken submission never breaks the
batch: a file that is not a notebook, or larger than a notebook of the course may be
(`graders.checks.answer_cells.MAX_NOTEBOOK_BYTES` of sources, ``MAX_CELLS``, ``MAX_FILE_BYTES`` in
all), is left out (nbgrader then scores that notebook 0, as for a missing file) and noted. Only
regular files and folders are read: a symbolic link (which could hand one student another's
notebook) is refused and noted, and never followed. Grading reads the hand-ins' copy (the
folder copied whole), never the folder itself (`graders.nbgrader_plumbing.grading_batch`), and
hands nbgrader each gradable notebook as nbformat 4 without its stored outputs
(:func:`notebook_for_grading`; grading throws them away, and a notebook of an older format is
read as version 4).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from graders.checks.answer_cells import MAX_FILE_BYTES, notebook_problem
from graders.nbgrader_plumbing.course import Course

__all__ = ["LayoutError", "Submissions", "find_submissions", "handed_in_notebooks",
           "notebook_for_grading", "read_regular"]


class LayoutError(ValueError):
    """The submissions folder is not laid out as ``SUBMISSIONS/<student>/<notebook>.ipynb``."""


class Refused(OSError):
    """A file that is not read: a link, not a regular file, or too large (``str``: why)."""


@dataclass
class Submissions:
    """What a submissions folder holds: per student, per notebook, the file; and what is wrong."""

    notebooks: dict[str, dict[str, Path]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    #: student -> notebook -> why it was not read (it scores 0, and says why)
    refused: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def students(self) -> list[str]:
        return sorted(set(self.notebooks) | set(self.notes))

    def note(self, student: str, text: str) -> None:
        self.notes.setdefault(student, []).append(text)


def _kind(path: Path) -> str | None:
    """``"file"``, ``"dir"``, ``"link"``, ``"other"``, or None when nothing is there (never
    following a link)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        return "link"
    return "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else "other"


def read_regular(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes, opened without following
    a link or waiting on a FIFO; raises `Refused` (saying why) for anything else."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if _kind(path) == "link":
            raise Refused("it is a symbolic link, and links are not followed") from err
        raise Refused(f"it cannot be read ({err.strerror})") from err
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Refused("it is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise Refused(f"it is larger than {limit >> 20} MiB, more than a notebook of the course "
                      "may be")
    return data


def _notebook_problem(path: Path) -> str | None:
    """Why ``path`` is not a notebook nbgrader can read (None when it is one)."""
    try:
        text = read_regular(path).decode("utf-8")
    except Refused as err:
        return str(err)
    except UnicodeDecodeError:
        return "it is not a notebook (not UTF-8 text)"
    _nb, problem = notebook_problem(text)
    if problem:
        return problem
    try:
        nbformat.reads(text, as_version=4)
    except Exception as err:  # nbformat raises several kinds on a malformed notebook
        return f"nbformat cannot read it ({type(err).__name__}: {err})"
    return None


def _without_outputs(data: bytes) -> str:
    """The notebook ``data`` as nbformat 4 text, every code cell's stored outputs dropped."""
    nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            cell.outputs = []
            cell.execution_count = None
    return nbformat.writes(nb)


def _entries(folder: Path) -> list[Path]:
    """The entries of ``folder`` (a real folder, never a link), hidden ones left out."""
    if _kind(folder) != "dir":
        return []
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


def _notebooks_of(student_dir: Path, assignment: str) -> tuple[Path, list[Path]]:
    """(the folder read, its ``*.ipynb`` entries): ``<student>/`` or ``<student>/<assignment>/``."""
    inner = student_dir / assignment
    direct = [p for p in _entries(student_dir) if p.suffix == ".ipynb"]
    base = inner if _kind(inner) == "dir" and not direct else student_dir
    return base, [p for p in _entries(base) if p.suffix == ".ipynb"]


def find_submissions(folder: Path, course: Course) -> Submissions:
    """Read ``folder`` laid out as ``<student>/<notebook>.ipynb`` (or nbgrader's own
    ``<student>/<assignment>/<notebook>.ipynb``); raise LayoutError when it is laid out otherwise.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise LayoutError(f"no folder {folder}: give the folder that holds one folder per "
                          "student, SUBMISSIONS/<student>/<notebook>.ipynb")
    known = course.notebooks()
    entries = _entries(folder.resolve())
    loose = [p.name for p in entries if p.suffix == ".ipynb" and _kind(p) != "dir"]
    if loose:
        raise LayoutError(f"{folder} holds notebooks directly ({', '.join(loose[:3])}); put each "
                          "student's notebooks in a folder of their own: "
                          "SUBMISSIONS/<student>/<notebook>.ipynb")
    students = [p for p in entries if _kind(p) in ("dir", "link")]
    if not students:
        raise LayoutError(f"{folder} holds no student folders; lay it out as "
                          "SUBMISSIONS/<student>/<notebook>.ipynb")
    found = Submissions()
    for student_dir in students:
        _find_notebooks(found, student_dir, course, known)
    return found


def _find_notebooks(found: Submissions, student_dir: Path, course: Course,
                    known: list[str]) -> None:
    student = student_dir.name
    if _kind(student_dir) == "link":
        found.note(student, f"{student}/ is a symbolic link: links are not followed (they could "
                   "hand one student another's work), so nothing of it was graded")
        return
    base, paths = _notebooks_of(student_dir, course.assignment)
    if not paths:
        found.note(student, f"no notebooks in {student}/ (expected "
                   f"{', '.join(n + '.ipynb' for n in known)})")
        return
    for path in paths:
        where = f"{student}/{path.relative_to(student_dir).as_posix()}"
        if path.stem not in known:
            found.note(student, f"{where} is not a notebook of {course.assignment} (expected "
                       f"{' or '.join(n + '.ipynb' for n in known)}); it was not graded")
            continue
        problem = _notebook_problem(path)
        if problem:
            found.note(student, f"{where}: {problem}; it scores 0")
            found.refused.setdefault(student, {})[path.stem] = problem
            continue
        found.notebooks.setdefault(student, {})[path.stem] = path


def handed_in_notebooks(folder: Path, student: str, course: Course) -> set[str]:
    """The assignment's notebooks ``student`` handed in to ``folder`` (readable or not, a link
    included: it is noted, and scores 0), by name; both layouts count."""
    student_dir = Path(folder).resolve() / student
    if _kind(student_dir) != "dir":
        return set()
    names = {p.stem for p in _entries(student_dir) if p.suffix == ".ipynb"}
    names |= {p.stem for p in _entries(student_dir / course.assignment) if p.suffix == ".ipynb"}
    return names & set(course.notebooks())


def notebook_for_grading(path: Path) -> str:
    """The notebook at ``path`` (a regular file) as nbgrader's autograde gets it: nbformat 4,
    without stored outputs. Raises `Refused` when it is not a regular file."""
    return _without_outputs(read_regular(path))
