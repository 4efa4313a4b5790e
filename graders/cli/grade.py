"""``checkpoint-lab grade SUBMISSIONS --course DIR --csv FILE``: grade a folder of submissions."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``checkpoint-lab grade``."""
    parser.description = (
        "Grade a folder of submissions laid out as SUBMISSIONS/<student>/<notebook>.ipynb "
        "through nbgrader (autograde, then generate_feedback) into the course's gradebook, "
        "several students at once. Prints a table per student, writes FILE with a row per "
        "student and a column per test, and leaves the feedback HTML in DIR/feedback/.")
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
    parser.add_argument("--no-feedback", action="store_true",
                        help="skip nbgrader generate_feedback")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bar and no per-student tables")


def _handed_in(folder: Path, student: str, course) -> set[str]:
    """The assignment's notebooks that ``student`` handed in (readable or not), by file name."""
    base = folder / student
    names = {p.stem for p in base.glob("*.ipynb")}
    names |= {p.stem for p in (base / course.assignment).glob("*.ipynb")}
    return names & set(course.notebooks())


def run(args: argparse.Namespace) -> int:
    """Grade ``args.submissions``; exit 0 when every student was graded by nbgrader."""
    from tqdm import tqdm

    from graders.cli import UsageError
    from graders.nbgrader_plumbing.batch import (
        LayoutError,
        autograde_students,
        find_submissions,
        format_student,
        quiet_sqlalchemy,
        read_results,
        record_zero,
        stage_submissions,
        write_csv,
    )
    from graders.nbgrader_plumbing.course import open_course
    from graders.nbgrader_plumbing.source_notebook import BuildError
    from graders.sandbox.engine import MODE_ENV, grading_problem

    if args.no_sandbox:
        os.environ[MODE_ENV] = "off"  # the grading workers inherit it
    problem = grading_problem()
    if problem:
        raise UsageError(problem)
    quiet_sqlalchemy()
    tqdm.monitor_interval = 0  # no monitor thread: the grading workers are forked
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give at least 1")
    if not args.course.is_dir():
        raise UsageError(f"no course directory {args.course}; make one with "
                         f"`checkpoint-lab course {args.course}`")
    if args.csv.is_dir() or not args.csv.resolve().parent.is_dir():
        raise UsageError(f"--csv {args.csv}: give a file name in an existing folder")
    try:
        course = open_course(args.course)
        found = find_submissions(args.submissions, course)
    except (BuildError, LayoutError) as err:
        raise UsageError(str(err)) from err

    for student in found.students:
        for note in found.notes.get(student, []):
            print(f"warning: {note}", file=sys.stderr)
    stage_submissions(course, found)
    gradable = sorted(found.notebooks)
    notes = {s: list(n) for s, n in found.notes.items()}
    with tqdm(total=len(gradable), desc="grading", unit="student",
              disable=args.quiet or not gradable, file=sys.stderr) as bar:
        outcomes = autograde_students(
            course, gradable, jobs=args.jobs, feedback=not args.no_feedback,
            on_done=lambda outcome: bar.update(1))
    failed = []
    for student in found.students:
        outcome = outcomes.get(student)
        if outcome is None or not outcome["success"]:
            why = ("nothing to grade" if outcome is None
                   else f"nbgrader could not grade it ({outcome.get('error')})")
            notes.setdefault(student, []).append(f"{why}; recorded with 0 for every test")
            record_zero(course, student)
            if outcome is not None:
                failed.append(student)
        elif outcome.get("feedback_error"):
            notes.setdefault(student, []).append(
                f"no feedback HTML: generate_feedback failed ({outcome['feedback_error']})")
    handed_in = {s: _handed_in(args.submissions, s, course) for s in found.students}
    results = read_results(course, found.students, notes, handed_in)
    write_csv(args.csv, results)
    if not args.quiet:
        for result in results:
            print(format_student(result))
            print()
    students = f"{len(results)} student{'' if len(results) == 1 else 's'}"
    print(f"Graded {students} into {course.gradebook_path}; scores in {args.csv}; "
          f"feedback in {course.root / 'feedback'}/")
    for student in failed:
        print(f"error: nbgrader could not autograde {student}: {outcomes[student].get('error')}",
              file=sys.stderr)
    return 1 if failed else 0
