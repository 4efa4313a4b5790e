"""A ready nbgrader course directory for Lesson 2, with tamper-proof grading configured.

:func:`build_course` writes ``nbgrader_config.py``, the source notebooks in
``source/lesson2/`` (built from the authored exercises by
:mod:`graders.nbgrader_plumbing.source_notebook`), runs nbgrader's own ``generate_assignment``
(the release lands in ``release/lesson2/``, the assignment in the sqlite gradebook
``gradebook.db``), writes the lessons as a hub's students get them (``lessons/``: the kernel's
``language_info`` and links to ``../lesson2/``, :func:`write_hub_lessons`), and adds students.
After that nbgrader's own
``generate_assignment``, ``autograde``, ``generate_feedback`` and ``export`` work in the directory
as usual.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import nbformat

from graders.nbgrader_plumbing.settings import write_course_settings
from graders.nbgrader_plumbing.source_notebook import (
    ASSIGNMENT,
    ROOT,
    SOURCES_DIR,
    BuildError,
    authored_sources,
    build_source_notebook,
)

__all__ = [
    "Course",
    "write_hub_lessons",
    "CONFIG_NAME",
    "CELL_TIMEOUT",
    "config_text",
    "self_check_cells",
    "build_course",
    "open_course",
    "load_config",
    "nbgrader_api",
    "add_students",
]

CONFIG_NAME = "nbgrader_config.py"
#: Seconds one notebook cell may run in the student's kernel at autograde time.
CELL_TIMEOUT = 10

_NB = "nbgrader.preprocessors."
_OURS = "graders.nbgrader_plumbing.preprocessors."

_CONFIG = '''\
"""nbgrader configuration for Checkpoint Lab, Lesson 2 (written by `checkpoint-lab course`).

No student code runs in a kernel here: StartVerdicts takes the code of the answer cells and
grades it in the sandbox (one run per scenario, watched from outside), RunNothing takes
Execute's place, WriteVerdicts writes each verdict into its test cell's outputs, and nbgrader's
own SaveAutoGrades scores those. Preprocessors are named
as strings so that a missing `graders` package fails loudly instead of silently falling back to
nbgrader's defaults.
"""

import os

c = get_config()  # noqa: F821 (traitlets provides get_config)

_here = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.root = _here
# A generous sqlite busy timeout: `checkpoint-lab grade` runs several autogrades at once.
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(_here, "gradebook.db") + "?timeout=120"

c.GenerateAssignment.preprocessors = {generate}

c.Autograde.sanitize_preprocessors = {sanitize}
c.Autograde.autograde_preprocessors = {autograde}

# Cells that share a grade_id (JupyterLab's Split Cell) are joined in notebook order
# (JoinSplitCells), where nbgrader's DeduplicateIds would refuse the notebook.
# A deleted test cell is put back (RestoreTestCells, an OverwriteCells that does not trip over
# nbgrader 0.9.6's KeyError) and graded on the student's code.
c.OverwriteCells.add_missing_cells = True
# No notebook cell runs at autograde (RunNothing): the student's code runs only in the sandbox.
# Cells that only show in-kernel results (the self-check table) say so.
c.RunNothing.not_run_at_grading = {not_run}
# Were Execute ever put back: one cell may run {timeout} s, then it is interrupted.
c.Execute.timeout = {timeout}
c.Execute.interrupt_on_timeout = True
'''


def _names(prefix_names: list[str]) -> str:
    return "[\n" + "".join(f"    {name!r},\n" for name in prefix_names) + "]"


def config_text(cell_timeout: int = CELL_TIMEOUT, not_run_at_grading: Iterable[str] = ()) -> str:
    """The text of the course's ``nbgrader_config.py``."""
    generate = [_NB + "IncludeHeaderFooter", _NB + "InstantiateTests", _NB + "LockCells",
                _OURS + "ReleaseStarter", _NB + "ClearOutput", _NB + "CheckCellMetadata",
                _NB + "ComputeChecksums", _NB + "SaveCells", _NB + "ClearHiddenTests",
                _NB + "ClearMarkScheme", _NB + "ComputeChecksums", _NB + "CheckCellMetadata",
                _OURS + "KernelLanguageInfo"]
    sanitize = [_NB + "ClearOutput", _OURS + "JoinSplitCells", _NB + "DeduplicateIds",
                _NB + "OverwriteKernelspec",
                _OURS + "RestoreTestCells", _NB + "CheckCellMetadata"]
    autograde = [_OURS + "StartVerdicts", _OURS + "RunNothing", _NB + "IgnorePattern",
                 "nbconvert.preprocessors.ClearMetadataPreprocessor", _NB + "LimitOutput",
                 _OURS + "WriteVerdicts", _NB + "SaveAutoGrades", _NB + "AssignLatePenalties",
                 _NB + "CheckCellMetadata"]
    return _CONFIG.format(generate=_names(generate), sanitize=_names(sanitize),
                          autograde=_names(autograde), timeout=int(cell_timeout),
                          not_run=sorted(not_run_at_grading))


@dataclass(frozen=True)
class Course:
    """An nbgrader course directory for Lesson 2."""

    root: Path
    assignment: str = ASSIGNMENT

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    @property
    def gradebook_path(self) -> Path:
        return self.root / "gradebook.db"

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.gradebook_path}?timeout=120"

    @property
    def source_dir(self) -> Path:
        return self.root / "source" / self.assignment

    @property
    def release_dir(self) -> Path:
        return self.root / "release" / self.assignment

    @property
    def lessons_dir(self) -> Path:
        """The lessons as a hub's students get them, copied into each home's ``lessons/``."""
        return self.root / "lessons"

    def submitted_dir(self, student: str) -> Path:
        return self.root / "submitted" / student / self.assignment

    def autograded_dir(self, student: str) -> Path:
        return self.root / "autograded" / student / self.assignment

    def feedback_dir(self, student: str) -> Path:
        return self.root / "feedback" / student / self.assignment

    def notebooks(self) -> list[str]:
        """The assignment's notebook names (without ``.ipynb``), from its source folder."""
        return sorted(p.stem for p in self.source_dir.glob("*.ipynb"))


def load_config(root: Path):
    """Load ``root/nbgrader_config.py`` as traitlets config; raise BuildError if it is broken."""
    from traitlets.config.loader import ConfigFileNotFound, PyFileConfigLoader

    try:
        return PyFileConfigLoader(CONFIG_NAME, path=str(root)).load_config()
    except ConfigFileNotFound as err:
        raise BuildError(f"{root} has no {CONFIG_NAME}: not a course directory "
                         "(make one with `checkpoint-lab course DIR`)") from err
    except Exception as err:
        raise BuildError(f"{root / CONFIG_NAME} does not load ({type(err).__name__}: {err})") \
            from err


def _put_venv_scripts_on_path() -> None:
    # nbgrader runs the `alembic` script when it creates a gradebook; it lives beside python.
    scripts = str(Path(sys.executable).parent)
    if shutil.which("alembic") is None and scripts not in os.environ.get("PATH", "").split(
            os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


def nbgrader_api(root: Path):
    """nbgrader's own ``NbGraderAPI`` for the course in ``root``, with its config loaded."""
    _put_venv_scripts_on_path()
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    config = load_config(root)
    coursedir = CourseDirectory(config=config, root=str(root))
    return NbGraderAPI(coursedir=coursedir, config=config)


def open_course(root: Path) -> Course:
    """The course already built in ``root``; BuildError when ``root`` is not one."""
    root = Path(root).resolve()
    course = Course(root)
    if not course.config_path.is_file() or not course.source_dir.is_dir():
        raise BuildError(f"{root} is not a Checkpoint Lab course directory (no {CONFIG_NAME} "
                         f"or source/{ASSIGNMENT}/); make one with `checkpoint-lab course DIR`")
    load_config(root)
    return course


def add_students(course: Course, students: Iterable[str]) -> list[str]:
    """Add students (ids) to the course's gradebook; return the ids added or already there."""
    from nbgrader.api import Gradebook

    _put_venv_scripts_on_path()
    ids = [s.strip() for s in students if s.strip()]
    with Gradebook(course.db_url) as gb:
        for student in ids:
            gb.update_or_create_student(student)
    return ids


def self_check_cells(notebooks: Iterable) -> list[str]:
    """grade_ids of the locked code cells that call ``self_check(`` (in-kernel results only)."""
    ids = []
    for nb in notebooks:
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and not meta.get("grade") and "self_check(" in cell.source:
                ids.append(meta["grade_id"])
    return ids


def build_course(root: Path, *, sources: list[Path] | None = None, repo: Path = ROOT,
                 students: Iterable[str] = (), cell_timeout: int = CELL_TIMEOUT) -> Course:
    """Build (or rebuild) the Lesson 2 course in ``root`` and return it.

    ``sources`` are the authored exercise files (default: ``exercises/src/NN_*.py``), their
    ``solution_from`` / ``starter_from`` paths relative to ``repo``. Existing
    submissions, autograded notebooks and grades in ``root`` are kept; the config, the source
    notebooks and the release are rewritten. ``cell_timeout`` is how long one cell may run in
    the student's kernel at autograde time, in seconds.
    """
    sources = authored_sources(SOURCES_DIR) if sources is None else list(sources)
    if not sources:
        raise BuildError(f"no authored exercises (NN_name.py) in {SOURCES_DIR}")
    course = Course(Path(root).resolve())
    course.root.mkdir(parents=True, exist_ok=True)
    notebooks = {Path(s).stem: build_source_notebook(Path(s), repo) for s in sources}
    course.config_path.write_text(
        config_text(cell_timeout, self_check_cells(notebooks.values())), encoding="utf-8")
    write_course_settings(course.root)  # exchange, feedback, JupyterLab
    if course.source_dir.exists():
        shutil.rmtree(course.source_dir)
    course.source_dir.mkdir(parents=True)
    for name, nb in notebooks.items():
        nbformat.write(nb, course.source_dir / f"{name}.ipynb")

    api = nbgrader_api(course.root)
    result = api.generate_assignment(course.assignment, force=True, create=True)
    if not result.get("success"):
        raise BuildError("nbgrader generate_assignment failed:\n"
                         + (result.get("log") or "") + (result.get("error") or ""))
    missing = [n for n in notebooks if not (course.release_dir / f"{n}.ipynb").is_file()]
    if missing:
        raise BuildError(f"nbgrader generate_assignment released no {', '.join(missing)}:\n"
                         + (result.get("log") or ""))
    write_hub_lessons(course, repo)
    add_students(course, students)
    return course


def write_hub_lessons(course: Course, repo: Path = ROOT) -> list[Path]:
    """Write ``repo``'s lessons into ``course.lessons_dir`` as a hub's students get them: beside
    the ``lesson2/`` that nbgrader's fetch makes in their homes, with this environment's kernel
    ``language_info`` (so that JupyterLab does not mark them modified on open). Returns them."""
    from graders.workspace.notebooks import delivered_bytes

    lessons = sorted((Path(repo) / "lessons").glob("*.ipynb"))
    if lessons:
        course.lessons_dir.mkdir(exist_ok=True)
    written = []
    for lesson in lessons:
        target = course.lessons_dir / lesson.name
        target.write_bytes(delivered_bytes(lesson, exercises=course.assignment))
        written.append(target)
    return written
