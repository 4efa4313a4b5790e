"""A grading batch that never writes what it reads and survives being killed.

:func:`open_batch` makes the hand-ins' copy (the folder of hand-ins copied whole) and a shadow
course (or, when a batch of the same folder was cut short, picks it up where it stopped);
:func:`plan_students` stages each student's submission in the shadow course (nbgrader's own files
kept) or keeps their earlier grade when their work cannot be read; :func:`grade_batch` autogrades
in the shadow and commits each student as they finish (`graders.nbgrader_plumbing.student_commit`);
:func:`close_batch` removes the work folder. The course's own files change only through commits.
:func:`batch_lock` keeps two batches of one course apart.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from graders.nbgrader_plumbing.copies import copy_hand_ins, merge_submission, shadow_course
from graders.nbgrader_plumbing.course import Course
from graders.nbgrader_plumbing.durable import point
from graders.nbgrader_plumbing.gradebook_rows import has_grade
from graders.nbgrader_plumbing.student_commit import Journal, commit_student
from graders.nbgrader_plumbing.submissions import notebook_for_grading

__all__ = ["WORK_DIR", "HAND_INS", "Batch", "BatchBusy", "batch_lock", "open_batch",
           "plan_students", "grade_batch", "close_batch"]

#: The course's folder for a batch's work (the hand-ins' copy, shadow course, journal), its lock.
WORK_DIR = ".checkpoint-lab-grading"
#: The hand-ins' copy's folder in a batch's work folder.
HAND_INS = "hand-ins"


class BatchBusy(RuntimeError):
    """Another ``checkpoint-lab grade`` holds the course (``str``: what to do)."""


@dataclass
class Batch:
    course: Course
    work: Path
    shadow: Course
    journal: Journal
    dry_run: bool
    resumed: bool = False
    #: the copy of the course's gradebook from before the batch (None with --dry-run)
    backup: Path | None = None

    @property
    def hand_ins(self) -> Path:
        """The hand-ins' copy: the folder of hand-ins as the batch copied it, all it reads."""
        return self.work / HAND_INS


@contextmanager
def batch_lock(course: Course, wait: float = 5.0):
    """Hold the course's grading lock for the block; BatchBusy when another batch holds it
    (after ``wait`` seconds: the workers of a killed batch take a moment to go)."""
    folder = course.root / WORK_DIR
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise BatchBusy(f"another `checkpoint-lab grade` is grading {course.root} "
                                    "now; wait for it to finish, then run this again") from None
                time.sleep(0.2)
        yield
    finally:
        os.close(fd)


def _discard(work: Path) -> None:
    if work.exists():
        trash = work.with_name(f"{work.name}.trash-{os.getpid()}")
        os.rename(work, trash)
        shutil.rmtree(trash, ignore_errors=True)


def _finish_commits(course: Course, work: Path, journal: Journal) -> None:
    """Commit the students a killed batch had begun committing (never left half)."""
    shadow = Course(work / "shadow", course.assignment)
    for student, entry in journal.students.items():
        if entry["state"] == "committing":
            commit_student(journal, course, shadow, student)


def open_batch(course: Course, source: Path, *, force: bool, dry_run: bool) -> Batch:
    """The batch grading ``source`` into ``course``: the one cut short, if it graded the same
    folder the same way, else a new one (a cut-short one's commits finished first)."""
    source = Path(source).resolve()
    if dry_run:
        work = Path(tempfile.mkdtemp(prefix="checkpoint-lab-dry-run-")) / "batch"
    else:
        work = course.root / WORK_DIR / "batch"
        journal = Journal.load(work / "journal.json")
        if journal and journal.data.get("source") == str(source) \
                and journal.data.get("force") == force and (work / HAND_INS).is_dir():
            return Batch(course, work, Course(work / "shadow", course.assignment), journal,
                         dry_run, resumed=True)
        if journal:
            _finish_commits(course, work, journal)
        _discard(work)
        for trash in work.parent.glob(f"{work.name}.trash-*"):  # a removal cut short
            shutil.rmtree(trash, ignore_errors=True)
    work.mkdir(parents=True)
    point("batch-start")
    copy_hand_ins(source, work / HAND_INS, skip=course.root / WORK_DIR)
    point("hand-ins-copied")
    shadow = shadow_course(course, work / "shadow")
    journal = Journal(work / "journal.json", {"source": str(source), "force": force,
                                              "planned": False, "students": {}})
    journal.save()
    point("batch-opened")
    return Batch(course, work, shadow, journal, dry_run)


def _stage(batch: Batch, student: str, notebooks: dict[str, Path]) -> None:
    """The student's submission in the shadow course: the course's ``submitted/`` files (kept)
    with the hand-in over them, only the gradable notebooks of the assignment among them."""
    staged = batch.shadow.submitted_dir(student)
    if staged.exists():
        shutil.rmtree(staged)
    staged.parent.mkdir(parents=True, exist_ok=True)
    merge_submission(batch.course.submitted_dir(student),
                     next(iter(notebooks.values())).parent, staged)
    for name in batch.course.notebooks():
        if name not in notebooks and (staged / f"{name}.ipynb").exists():
            (staged / f"{name}.ipynb").unlink()
    for name, path in notebooks.items():  # nbformat 4, without the outputs grading throws away
        (staged / f"{name}.ipynb").write_text(notebook_for_grading(path), encoding="utf-8")


def plan_students(batch: Batch, found, handed_in: dict[str, set[str]], force: bool) -> None:
    """Each student's entry in the journal: staged for grading, 0 (nothing gradable), or their
    earlier grade kept when their work could not be read (unless ``force``)."""
    from graders.nbgrader_plumbing.gradebook import record_zero

    if batch.journal.data.get("planned"):
        return
    course = batch.course
    for student in found.students:
        notes = list(found.notes.get(student, []))
        gradable = found.notebooks.get(student, {})
        unread = handed_in.get(student, set()) - set(gradable)
        if (unread or not gradable) and not force \
                and has_grade(course.gradebook_path, course.assignment, student):
            reason = "; ".join(n.removesuffix("; it scores 0") for n in notes) \
                or "nothing of it could be read"
            entry = {"state": "done", "what": "kept", "notes": [
                f"not graded: {reason}; earlier grade kept (give --force to grade it anyway)"]}
        elif not gradable:
            record_zero(batch.shadow, student)
            entry = {"state": "graded", "what": "rows",
                     "notes": notes + ["nothing to grade; recorded with 0 for every test"]}
        else:
            _stage(batch, student, gradable)
            entry = {"state": "pending", "what": "full", "notes": notes,
                     "originals": {name: str(path) for name, path in gradable.items()}}
        batch.journal.students[student] = entry
    batch.journal.data["planned"] = True
    batch.journal.save()
    point("planned")


def _graded(batch: Batch, outcome: dict) -> None:
    """Note ``outcome`` (nbgrader's, in the shadow) in the journal, then commit the student."""
    from graders.nbgrader_plumbing.gradebook import record_zero

    student = outcome["student"]
    entry = batch.journal.students[student]
    staged = batch.shadow.submitted_dir(student)
    for name, original in entry.get("originals", {}).items():  # the hand-in kept as it came
        shutil.copy2(original, staged / f"{name}.ipynb")
    if outcome["success"]:
        if outcome.get("feedback_error"):
            entry["notes"].append(f"no feedback HTML: generate_feedback failed "
                                  f"({outcome['feedback_error']})")
        entry.update(state="graded", what="full")
    else:
        why = (f"not graded: {outcome['error']}" if outcome.get("timed_out")
               else f"nbgrader could not grade it ({outcome.get('error')})")
        record_zero(batch.shadow, student)
        entry["notes"].append(f"{why}; recorded with 0 for every test")
        entry.update(state="graded", what="rows", failed=outcome.get("error") or "")
    batch.journal.save()
    point(f"graded:{student}")
    if not batch.dry_run:
        commit_student(batch.journal, batch.course, batch.shadow, student)


def grade_batch(batch: Batch, *, jobs, feedback: bool, timeout, on_done) -> None:
    """Autograde the pending students in the shadow course, committing each as they finish;
    first commit those a killed run had graded (or begun committing)."""
    from graders.nbgrader_plumbing.grading_pool import autograde_students

    if not batch.dry_run:
        for student, entry in batch.journal.students.items():
            if entry["state"] in ("graded", "committing"):
                commit_student(batch.journal, batch.course, batch.shadow, student)
    pending = sorted(s for s, e in batch.journal.students.items() if e["state"] == "pending")

    def done(outcome: dict) -> None:
        _graded(batch, outcome)
        on_done(outcome)

    autograde_students(batch.shadow, pending, jobs=jobs, feedback=feedback, timeout=timeout,
                       on_done=done)


def close_batch(batch: Batch) -> None:
    """Remove the batch's work folder (its hand-ins' copy, shadow course and journal), the
    grading workers' log kept in the course (`grading_worker.LOG_NAME`) when they wrote to it."""
    from graders.nbgrader_plumbing.grading_worker import LOG_NAME

    log = batch.shadow.root / LOG_NAME
    if not batch.dry_run and log.is_file() and log.stat().st_size:
        with open(batch.course.root / LOG_NAME, "ab") as kept:
            kept.write(log.read_bytes())
    _discard(batch.work)
    if batch.dry_run:
        shutil.rmtree(batch.work.parent, ignore_errors=True)
