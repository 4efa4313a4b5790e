"""``checkpoint-lab grade SUBMISSIONS --course DIR --csv FILE``: grade a folder of submissions."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from pathlib import Path

__all__ = ["add_arguments", "run", "NOT_FOR_STUDENTS", "not_for_students"]

#: What a checkout holds that no student may read: the reference solutions, the mark schemes of
#: the written answers (``exercises/src``), the tests (their fixtures include passing
#: submissions) and git's history, which holds all three (the student image's ``.dockerignore``
#: leaves out the same).
NOT_FOR_STUDENTS = ("solutions", "exercises/src", "tests", ".git")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``checkpoint-lab grade``."""
    parser.description = (
        "Grade a folder of submissions laid out as SUBMISSIONS/<student>/<notebook>.ipynb "
        "through nbgrader (autograde, then generate_feedback) into the course's gradebook, "
        "several students at once. Prints a summary of the class (per check, how many passed; "
        "who earned nothing, and why), then a table per student, writes FILE with a row per "
        "student and a column per test, and leaves the feedback HTML in DIR/feedback/. "
        "SUBMISSIONS is only read (copied first; it may be DIR/submitted/); each student's "
        "results go into the course at once, so a run killed at any moment loses nothing and "
        "the same command run again finishes it. The gradebook is backed up first, in "
        "DIR/gradebook-backups/.")
    parser.add_argument("submissions", metavar="SUBMISSIONS", type=Path,
                        help="the folder with one folder per student")
    parser.add_argument("--course", metavar="DIR", type=Path, required=True,
                        help="the course directory (made by `checkpoint-lab course DIR`)")
    parser.add_argument("--csv", metavar="FILE", type=Path, required=True,
                        help="where to write the scores (CSV)")
    parser.add_argument("--jobs", "-j", metavar="N", type=int, default=None,
                        help="students graded at once (default: one more than the cores, "
                        f"{(os.cpu_count() or 1) + 1})")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run each submission traced but NOT sandboxed (it could read and "
                        "write what you can): only for code you trust, where bubblewrap is "
                        "missing")
    parser.add_argument("--without-landlock", action="store_true",
                        help="where only the uid tier can run (root in a container) and the "
                        "kernel has no Landlock, grade all the same: "
                        f"{_gives_up()}")
    parser.add_argument("--no-feedback", action="store_true",
                        help="skip nbgrader generate_feedback")
    parser.add_argument("--student-timeout", metavar="SECONDS", type=float, default=None,
                        help="seconds one student's grading and feedback may take before it is "
                        "stopped and recorded as 0 with a note (default: 300)")
    parser.add_argument("--force", action="store_true",
                        help="grade a student whose work cannot be read even when they have a "
                        "grade (it becomes 0 for what could not be read); without it the "
                        "earlier grade is kept")
    parser.add_argument("--dry-run", action="store_true",
                        help="grade and print the table and write the CSV, but write nothing "
                        "to the course (gradebook, submissions, feedback)")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bar, no class summary and no per-student tables")


def _gives_up() -> str:
    from graders.sandbox.box import WITHOUT_LANDLOCK_GIVES_UP

    return WITHOUT_LANDLOCK_GIVES_UP.replace("%", "%%")


def run(args: argparse.Namespace) -> int:
    """Grade ``args.submissions``; exit 0 when every student was graded by nbgrader."""
    from graders.cli import UsageError
    from graders.nbgrader_plumbing.durable import MAIN_PID_ENV
    from graders.nbgrader_plumbing.grading_batch import BatchBusy, batch_lock, close_batch

    _check_sandbox(args)  # first: where nothing can be graded, that is the one thing to say
    _sweep(args)
    _check_arguments(args)
    course = _open_course(args)
    closing = _close_to_submissions(args)
    os.environ[MAIN_PID_ENV] = str(os.getpid())  # the grading workers inherit it
    try:
        with batch_lock(course) if not args.dry_run else _no_lock():
            batch, found, handed_in = _open_batch(args, course)
            _autograde(args, batch)
            if not args.no_feedback and not args.dry_run:
                _refused_feedback(course, found, batch)
            results, failed = _write_scores(args, batch, found, handed_in)
            close_batch(batch)
    except BatchBusy as err:
        raise UsageError(str(err)) from err
    finally:
        if closing is not None:
            closing.open_again()
    _report(args, batch, results, failed)
    return 1 if failed else 0


@contextmanager
def _no_lock():
    yield


def _check_arguments(args: argparse.Namespace) -> None:
    """Refuse (UsageError) bad arguments: --jobs, --student-timeout, --course or --csv."""
    from graders.cli import UsageError

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give at least 1")
    if args.student_timeout is not None and not args.student_timeout > 0:
        raise UsageError(f"--student-timeout {args.student_timeout:g}: give a number of seconds")
    if not args.course.is_dir():
        raise UsageError(f"no course directory {args.course}; make one with "
                         f"`checkpoint-lab course {args.course}`")
    if args.csv.is_dir() or not args.csv.resolve().parent.is_dir():
        raise UsageError(f"--csv {args.csv}: give a file name in an existing folder")


def _check_sandbox(args: argparse.Namespace) -> None:
    """Refuse (UsageError) where no sandbox can confine the submissions; say which tier."""
    from graders.cli import UsageError
    from graders.grading.observers import MODE_ENV, grading_problem

    if args.no_sandbox:
        os.environ[MODE_ENV] = "off"  # the grading workers inherit it
    if args.without_landlock:
        from graders.sandbox.box import WITHOUT_LANDLOCK_ENV

        os.environ[WITHOUT_LANDLOCK_ENV] = "1"
    problem = grading_problem()
    if problem:
        raise UsageError(problem)
    if args.no_sandbox:
        print("sandbox: none (--no-sandbox: traced, not confined; trusted code only)")
    else:
        from graders.sandbox.box import tier

        print(tier().describe())


def _sweep(args: argparse.Namespace) -> None:
    """Remove what grading processes killed from outside left (their run folders; in the uid
    tier, what their sandbox uids made), never what a live one holds; say so in one line."""
    from graders.sandbox.sweep import sweep_left_behind

    removed = sweep_left_behind()
    if removed and not args.quiet:
        print(f"cleared {len(removed)} item(s) of residue of grading killed before it ended: "
              + ", ".join(removed[:3]) + (" ..." if len(removed) > 3 else ""))


def not_for_students(root: Path | None = None) -> list[Path]:
    """What a submission must not read of the folder that holds the course's packages
    (``root``; by default this one's: a checkout, or an environment's ``site-packages``): a
    checkout's :data:`NOT_FOR_STUDENTS`, and the files of the packages that only hidden checks
    use (the site leaves them out too: `graders.site.course_wheel.WITHHELD`). Those there."""
    from graders.site.course_wheel import WITHHELD

    root = Path(__file__).resolve().parents[2] if root is None else Path(root)
    return [root / name for name in (*NOT_FOR_STUDENTS, *WITHHELD)
            if (root / name).exists()]


def _close_to_submissions(args: argparse.Namespace):
    """In the uid tier, the course, the submissions, this user's home and what no student may
    read of the course's own files (:func:`not_for_students`) closed to other users (a
    submission runs as one), by plain permissions, with Landlock or without, until the batch
    ends; the :class:`Closing` that puts them back."""
    from graders.sandbox.box import tier
    from graders.sandbox.uid_closing import Closing

    chosen = tier() if not args.no_sandbox else None
    if getattr(chosen, "name", None) != "uid":
        return None
    from graders.cli import UsageError

    try:
        closing = Closing()
    except OSError as err:
        raise UsageError(f"cannot keep a journal of the folders closed while grading: {err}") \
            from err
    closed = closing.close([args.course, args.submissions, Path.home(), *not_for_students()])
    if closed:
        print(f"closed to other users while grading (chmod o-rwx, put back when it ends), as "
              f"submissions run as other users here: {', '.join(closed)}", flush=True)
    return closing


def _refused_feedback(course, found, batch) -> None:
    """A feedback page for each notebook that was not read, saying why: for a student graded
    in this batch (one whose earlier grade was kept keeps their feedback too), beside the
    ``timestamp.txt`` nbgrader's ``release_feedback`` needs."""
    import shutil

    from graders.nbgrader_plumbing.refused import write_refused_feedback

    for student, notebooks in found.refused.items():
        if batch.journal.students.get(student, {}).get("what") == "kept":
            continue
        stamp = course.submitted_dir(student) / "timestamp.txt"
        folder = course.feedback_dir(student)
        if not (folder / "timestamp.txt").exists():
            folder.mkdir(parents=True, exist_ok=True)
            if stamp.is_file():
                shutil.copy2(stamp, folder / "timestamp.txt")
            else:  # a hand-in from a plain folder: the time it was graded, as nbgrader writes it
                import datetime

                now = datetime.datetime.now(datetime.UTC)
                (folder / "timestamp.txt").write_text(now.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
        for notebook, why in notebooks.items():
            write_refused_feedback(folder, notebook, why)


def _open_course(args: argparse.Namespace):
    """The course; UsageError when it is not one, or when SUBMISSIONS is the course itself."""
    from graders.cli import UsageError
    from graders.nbgrader_plumbing.course import open_course
    from graders.nbgrader_plumbing.grading_batch import WORK_DIR
    from graders.nbgrader_plumbing.source_notebook import BuildError

    try:
        course = open_course(args.course)
    except BuildError as err:
        raise UsageError(str(err)) from err
    source = args.submissions.resolve()
    if source == course.root or (course.root / WORK_DIR) in (source, *source.parents):
        raise UsageError(f"{args.submissions} is the course directory (or its grading work "
                         f"folder), not a folder of hand-ins; give {course.root / 'submitted'} "
                         "or a folder laid out as SUBMISSIONS/<student>/<notebook>.ipynb")
    return course


def _open_batch(args: argparse.Namespace, course):
    """The batch (the hand-ins' copy of SUBMISSIONS, a shadow course), its students planned: a
    backup of the gradebook first, each warning printed; (batch, found, handed-in notebooks)."""
    from graders.cli import UsageError
    from graders.nbgrader_plumbing.grading_batch import open_batch, plan_students
    from graders.nbgrader_plumbing.submissions import (
        LayoutError,
        find_submissions,
        handed_in_notebooks,
    )
    from graders.text import printable

    if not args.submissions.is_dir():
        raise UsageError(str(LayoutError(
            f"no folder {args.submissions}: give the folder that holds one folder per student, "
            "SUBMISSIONS/<student>/<notebook>.ipynb")))
    backup = None if args.dry_run else _backup(course)
    batch = open_batch(course, args.submissions, force=args.force, dry_run=args.dry_run)
    batch.backup = backup
    if batch.resumed:
        print(f"resuming the batch cut short in {batch.work} (same SUBMISSIONS)")
    try:
        found = find_submissions(batch.hand_ins, course)
    except LayoutError as err:
        from graders.nbgrader_plumbing.grading_batch import close_batch

        close_batch(batch)
        raise UsageError(str(err).replace(str(batch.hand_ins), str(args.submissions))) from err
    handed_in = {s: handed_in_notebooks(batch.hand_ins, s, course) for s in found.students}
    plan_students(batch, found, handed_in, args.force)
    for student in found.students:
        for note in batch.journal.students.get(student, {}).get("notes", []):
            print(f"warning: {printable(note)}", file=sys.stderr)
    return batch, found, handed_in


def _backup(course) -> Path:
    """A copy of the course's gradebook from before the batch, in ``gradebook-backups/``."""
    import time

    from graders.nbgrader_plumbing.copies import backup_gradebook

    folder = course.root / "gradebook-backups"
    folder.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    dest = folder / f"gradebook-{stamp}-{os.getpid()}.db"
    backup_gradebook(course.gradebook_path, dest)
    return dest


def _autograde(args: argparse.Namespace, batch) -> None:
    """Autograde the batch's students in its shadow course, committing each, with a progress
    bar."""
    from tqdm import tqdm

    from graders.nbgrader_plumbing.grading_batch import grade_batch
    from graders.nbgrader_plumbing.grading_worker import STUDENT_TIMEOUT, quiet_sqlalchemy

    quiet_sqlalchemy()
    tqdm.monitor_interval = 0  # no monitor thread: the grading workers are forked
    pending = [s for s, e in batch.journal.students.items() if e["state"] == "pending"]
    with tqdm(total=len(pending), desc="grading", unit="student",
              disable=args.quiet or not pending, file=sys.stderr) as bar:
        timeout = STUDENT_TIMEOUT if args.student_timeout is None else args.student_timeout
        grade_batch(batch, jobs=args.jobs, feedback=not args.no_feedback, timeout=timeout,
                    on_done=lambda outcome: bar.update(1))


def _write_scores(args: argparse.Namespace, batch, found, handed_in):
    """Read every student's scores (from the course's gradebook; with --dry-run, the shadow's)
    and write the CSV; (the results, the students nbgrader could not grade)."""
    from graders.nbgrader_plumbing.durable import write_durably
    from graders.nbgrader_plumbing.gradebook import read_results
    from graders.nbgrader_plumbing.score_report import write_csv

    entries = batch.journal.students
    notes = {s: entries.get(s, {}).get("notes", []) for s in found.students}
    failed = {s: entries[s]["failed"] for s in found.students if "failed" in entries.get(s, {})}
    results = read_results(batch.shadow if batch.dry_run else batch.course, found.students,
                           notes, handed_in, found.refused)
    part = batch.work / "scores.csv"
    write_csv(part, results)
    write_durably(args.csv.resolve(), part.read_bytes())
    return results, failed


def _report(args: argparse.Namespace, batch, results, failed: dict[str, str]) -> None:
    """The class summary and each student's table (unless --quiet), where everything went, and
    each failure."""
    from graders.nbgrader_plumbing.score_report import format_class, format_student
    from graders.text import plural, printable

    course = batch.course
    if not args.quiet:
        print(format_class(results))
        print()
        for result in results:
            print(format_student(result))
            print()
    if args.dry_run:
        print(f"Dry run: graded {plural(len(results), 'student')}; scores in {args.csv}; "
              f"nothing written to {course.root} (gradebook, submissions, feedback)")
    else:
        print(f"Graded {plural(len(results), 'student')} into {course.gradebook_path}; scores "
              f"in {args.csv}; feedback in {course.root / 'feedback'}/; the gradebook from "
              f"before this run is kept in {batch.backup}")
    for student, error in failed.items():
        print(printable(f"error: nbgrader could not autograde {student}: {error}"),
              file=sys.stderr)
