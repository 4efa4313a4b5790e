"""Grade a folder of submissions through nbgrader, on all cores, into a course's gradebook.

nbgrader's ``autograde`` is serial (nbgrader issue #174). Here each student is one task for a
pool of worker processes, and each worker runs nbgrader's own ``Autograde`` and
``GenerateFeedback`` (through ``NbGraderAPI``) for one student at a time. The sqlite gradebook
stays consistent: nbgrader's transactions are short, the course's ``db_url`` gives sqlite a long
busy timeout, and a student whose autograde still fails on a locked database is graded again.

A broken submission never breaks the batch: a file that is not a notebook is left out (nbgrader
then scores that notebook 0, as for a missing file) and reported; a student with nothing
gradable, or whose autograde fails, is recorded in the gradebook with zero for every autograded
test and a note saying why.
"""

from __future__ import annotations

import concurrent.futures
import csv
import json
import multiprocessing
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from graders.nbgrader_plumbing.cells import autograded_test_cells
from graders.nbgrader_plumbing.course import Course, nbgrader_api

__all__ = [
    "LayoutError",
    "Submissions",
    "TestScore",
    "StudentResult",
    "find_submissions",
    "stage_submissions",
    "autograde_students",
    "default_jobs",
    "record_zero",
    "quiet_sqlalchemy",
    "read_results",
    "write_csv",
    "format_student",
]

_DB_RETRIES = 3


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


def stage_submissions(course: Course, found: Submissions) -> None:
    """Copy the gradable notebooks into ``course/submitted/<student>/<assignment>/``."""
    for student, notebooks in found.notebooks.items():
        dest = course.submitted_dir(student)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for name, path in notebooks.items():
            shutil.copyfile(path, dest / f"{name}.ipynb")


# --- the worker processes ---------------------------------------------------------------------

_API = None


LOG_NAME = "checkpoint-lab-grade.log"


def quiet_sqlalchemy() -> None:
    """Silence SQLAlchemy's SAWarnings that nbgrader's own autograde triggers for new students."""
    import warnings

    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings("ignore", category=SAWarning)


def _worker_init(root: str) -> None:
    global _API
    # The kernels' own chatter (and anything else on fds 1 and 2) goes to the course's log, so
    # that the progress bar stays readable; nbgrader's log comes back with each outcome.
    log = os.open(Path(root) / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    quiet_sqlalchemy()
    _API = nbgrader_api(Path(root))


def _last_error(result: dict) -> str:
    lines = [line for line in (result.get("log") or "").splitlines() if "[ERROR]" in line]
    error = (result.get("error") or "").strip().splitlines()
    return (error[-1] if error else lines[-1] if lines else "unknown error").strip()


def _grade_one(student: str, assignment: str, feedback: bool) -> dict:
    started = time.monotonic()
    outcome: dict = {"student": student, "success": False, "tries": 0}
    for _ in range(_DB_RETRIES):
        outcome["tries"] += 1
        result = _API.autograde(assignment, student, force=True, create=True)
        log = (result.get("log") or "") + (result.get("error") or "")
        outcome.update(success=bool(result.get("success")), log=log, error=_last_error(result))
        if outcome["success"] or "database" not in log.lower():
            break
        time.sleep(0.2)
    if outcome["success"] and feedback:
        fb = _API.generate_feedback(assignment, student, force=True)
        outcome["feedback_ok"] = bool(fb.get("success"))
        if not fb.get("success"):
            outcome["feedback_error"] = _last_error(fb)
    outcome["seconds"] = time.monotonic() - started
    return outcome


def default_jobs() -> int:
    """Students graded at once by default: one more than the cores.

    A worker spends part of each autograde waiting on its kernel; one extra worker fills those
    gaps (measured on 2 cores: 3 workers grade 10 submissions 12-20 % faster than 2, 4 no faster).
    """
    return (os.cpu_count() or 1) + 1


def _pool(course: Course, jobs: int):
    # fork where there is one (POSIX): workers start at once and need no importable __main__.
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    return concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context,
                                                  initializer=_worker_init,
                                                  initargs=(str(course.root),))


def _run_pool(course: Course, students: list[str], jobs: int, feedback: bool,
              done: Callable[[dict], None]) -> list[str]:
    """Grade ``students`` in one pool; return those whose worker died (the pool broke)."""
    lost: list[str] = []
    with _pool(course, jobs) as pool:
        futures = {pool.submit(_grade_one, s, course.assignment, feedback): s for s in students}
        for future in concurrent.futures.as_completed(futures):
            student = futures[future]
            try:
                outcome = future.result()
            except concurrent.futures.process.BrokenProcessPool:
                lost.append(student)
                continue
            except Exception as err:  # noqa: BLE001 - that student's failure only
                outcome = {"student": student, "success": False,
                           "error": f"the grading process failed ({type(err).__name__}: {err})"}
            done(outcome)
    return lost


def autograde_students(course: Course, students: list[str], *, jobs: int | None = None,
                       feedback: bool = True,
                       on_done: Callable[[dict], None] | None = None) -> dict[str, dict]:
    """Autograde (and write feedback for) ``students`` in parallel; return student -> outcome.

    Each outcome holds ``success``, ``error`` (the last error line, when it failed), ``log`` and
    ``seconds``. ``on_done`` is called with each outcome as it finishes (for a progress bar).

    A grading process that dies (a fault of the grader: the submissions run in the sandbox, out
    of its reach) costs no other student: those its pool had not finished are graded in a fresh
    pool, then any still lost each in a pool of its own, and a student whose own grading dies
    fails with a note saying so.
    """
    jobs = max(1, min(jobs or default_jobs(), len(students) or 1))
    outcomes: dict[str, dict] = {}
    if not students:
        return outcomes

    def done(outcome: dict) -> None:
        outcomes[outcome["student"]] = outcome
        if on_done:
            on_done(outcome)

    lost = _run_pool(course, list(students), jobs, feedback, done)
    if lost:  # the students the broken pool never finished, in a fresh pool
        lost = _run_pool(course, lost, jobs, feedback, done)
    for student in lost:  # still lost: each alone, so a death is that student's only
        if _run_pool(course, [student], 1, feedback, done):
            done({"student": student, "success": False, "tries": 2,
                  "error": "the grading process died twice while grading this student (a fault "
                           "of the grader, logged in " + LOG_NAME + ")"})
    return outcomes


# --- reading the gradebook --------------------------------------------------------------------


@dataclass
class TestScore:
    """One autograded test of one student, as the gradebook has it."""

    notebook: str
    test: str
    score: float | None
    max_score: float
    message: str = ""
    #: False when the student did not hand this notebook in (its tests then score 0)
    submitted: bool = True


@dataclass
class StudentResult:
    """A student's autograded scores and notes (what was wrong with the submission)."""

    student: str
    tests: list[TestScore]
    notes: list[str]

    @property
    def score(self) -> float:
        return sum(t.score or 0.0 for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)


def _source_tests(course: Course) -> dict[str, list[str]]:
    tests = {}
    for name in course.notebooks():
        nb = nbformat.read(course.source_dir / f"{name}.ipynb", as_version=4)
        tests[name] = [c.metadata["nbgrader"]["grade_id"] for c in autograded_test_cells(nb)]
    return tests


def _messages(course: Course, student: str, notebook: str) -> dict[str, str]:
    """Each test's reason, from the autograded notebook: the text under its verdict's heading,
    "<title>: not passed (0/3 points)", unwrapped into one paragraph."""
    path = course.autograded_dir(student) / f"{notebook}.ipynb"
    if not path.is_file():
        return {}
    nb = nbformat.read(path, as_version=4)
    messages = {}
    for cell in autograded_test_cells(nb):
        texts = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                texts.append("\n".join(output.get("traceback") or [output.get("evalue", "")]))
            elif output.get("output_type") == "stream":
                texts.append(output.get("text", ""))
        lines = "\n".join(texts).strip().splitlines()
        heads = [i for i, line in enumerate(lines) if line.endswith(" points)")]
        start = heads[0] + 1 if heads else 0
        messages[cell.metadata["nbgrader"]["grade_id"]] = " ".join(
            line.strip() for line in lines[start:] if line.strip())
    return messages


def _handed_in(course: Course, student: str) -> set[str]:
    folder = course.submitted_dir(student)
    return {p.stem for p in folder.glob("*.ipynb")} if folder.is_dir() else set()


def record_zero(course: Course, student: str) -> None:
    """Record ``student``'s submission with 0 for every autograded test (nothing gradable)."""
    from nbgrader.api import Gradebook

    tests = _source_tests(course)
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_student(student)
        gb.update_or_create_submission(course.assignment, student)
        for notebook, ids in tests.items():
            sub = gb.find_submission_notebook(notebook, course.assignment, student)
            for grade in sub.grades:
                if grade.name in ids:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
        gb.db.commit()


def read_results(course: Course, students: list[str],
                 notes: dict[str, list[str]] | None = None,
                 submitted: dict[str, set[str]] | None = None) -> list[StudentResult]:
    """The autograded scores of ``students`` from the course's gradebook, with each test's reason.

    ``submitted`` names, per student, the notebooks they handed in (default: the notebooks in
    their ``submitted/`` folder); the tests of any other notebook are marked not submitted, and
    the student's notes say so.
    """
    from nbgrader.api import Gradebook, MissingEntry

    tests = _source_tests(course)
    results = []
    with Gradebook(course.db_url) as gb:
        for student in students:
            handed_in = (set(submitted.get(student, ())) if submitted is not None
                         else _handed_in(course, student))
            scores = []
            student_notes = list((notes or {}).get(student, []))
            for notebook, ids in tests.items():
                if notebook not in handed_in:
                    student_notes.append(f"{notebook}.ipynb was not submitted: its tests "
                                         "score 0")
                messages = _messages(course, student, notebook)
                try:
                    sub = gb.find_submission_notebook(notebook, course.assignment, student)
                    by_name = {g.name: g for g in sub.grades}
                except MissingEntry:
                    by_name = {}
                for test in ids:
                    grade = by_name.get(test)
                    scores.append(TestScore(
                        notebook, test, None if grade is None else grade.score,
                        0.0 if grade is None else float(grade.max_score),
                        messages.get(test, "") if notebook in handed_in else "",
                        submitted=notebook in handed_in))
            results.append(StudentResult(student, scores, student_notes))
    return results


def write_csv(path: Path, results: list[StudentResult]) -> None:
    """One row per student: the student id (twice: ``student``, and ``SIS User ID`` for an LMS
    gradebook import such as Canvas's), one column per autograded test, then the totals (points
    and percent) and notes."""
    tests = [t.test for t in results[0].tests] if results else []
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "SIS User ID", *tests, "autograded_score", "autograded_max",
                         "autograded_percent", "notes"])
        for result in results:
            by_test = {t.test: t for t in result.tests}
            writer.writerow([
                result.student, result.student,
                *("" if by_test[t].score is None else f"{by_test[t].score:g}" for t in tests),
                f"{result.score:g}", f"{result.max_score:g}", _percent(result),
                " | ".join(result.notes)])


def _percent(result: StudentResult) -> str:
    """The autograded total as a percentage of its maximum, two decimals at most."""
    if not result.max_score:
        return ""
    return f"{round(100 * result.score / result.max_score, 2):g}"


def format_student(result: StudentResult, width: int | None = None) -> str:
    """A student's scores as a text table: each test, its points, its status, and under a test
    that was not passed the whole reason, wrapped to ``width`` (default: the terminal's); then
    the notes."""
    import shutil
    import textwrap

    width = width or max(60, min(120, shutil.get_terminal_size((100, 24)).columns))
    name_w = max([len(t.test) for t in result.tests] + [4])
    lines = [f"{result.student}: {result.score:g}/{result.max_score:g} autograded points"]
    for t in result.tests:
        score = "-" if t.score is None else f"{t.score:g}"
        status = ("not submitted" if not t.submitted
                  else "passed" if t.score is not None and t.score >= t.max_score > 0
                  else "partly" if t.score else "not passed")
        lines.append(f"  {t.test:<{name_w}}  {score:>4}/{t.max_score:<3g} {status}")
        if status != "passed" and t.message:
            lines.extend(textwrap.wrap(t.message, width, initial_indent=" " * 6,
                                       subsequent_indent=" " * 6, break_on_hyphens=False))
    for note in result.notes:
        lines.extend(textwrap.wrap(note, width, initial_indent="  note: ",
                                   subsequent_indent=" " * 8, break_on_hyphens=False))
    return "\n".join(lines)
