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
        "several students at once. Prints a summary of the class (per check, how many passed; "
        "who earned nothing, and why), then a table per student, writes FILE with a row per "
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
    parser.add_argument("--without-landlock", action="store_true",
                        help="where only the uid tier can run (root in a container) and the "
                        "kernel has no Landlock, grade all the same: "
                        f"{_gives_up()}")
    parser.add_argument("--no-feedback", action="store_true",
                        help="skip nbgrader generate_feedback")
    parser.add_argument("--student-timeout", metavar="SECONDS", type=float, default=None,
                        help="seconds one student's grading and feedback may take before it is "
                        "stopped and recorded as 0 with a note (default: 300)")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bar, no class summary and no per-student tables")


def _gives_up() -> str:
    from graders.sandbox.box import WITHOUT_LANDLOCK_GIVES_UP

    return WITHOUT_LANDLOCK_GIVES_UP.replace("%", "%%")


def run(args: argparse.Namespace) -> int:
    """Grade ``args.submissions``; exit 0 when every student was graded by nbgrader."""
    from graders.text import printable

    _check_arguments(args)
    course, found = _open_course_and_submissions(args)
    for student in found.students:
        for note in found.notes.get(student, []):
            print(f"warning: {printable(note)}", file=sys.stderr)
    outcomes = _autograde(args, course, found)
    if not args.no_feedback:
        _refused_feedback(course, found)
    notes, failed = _record_what_failed(course, found, outcomes)
    results = _write_scores(args, course, found, notes)
    _report(args, course, results, failed, outcomes)
    return 1 if failed else 0


def _check_arguments(args: argparse.Namespace) -> None:
    """Refuse (UsageError) what cannot be graded: no sandbox, bad --jobs, --course or --csv."""
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
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give at least 1")
    if args.student_timeout is not None and not args.student_timeout > 0:
        raise UsageError(f"--student-timeout {args.student_timeout:g}: give a number of seconds")
    if not args.course.is_dir():
        raise UsageError(f"no course directory {args.course}; make one with "
                         f"`checkpoint-lab course {args.course}`")
    if args.csv.is_dir() or not args.csv.resolve().parent.is_dir():
        raise UsageError(f"--csv {args.csv}: give a file name in an existing folder")
    _close_to_submissions(args)


def _close_to_submissions(args: argparse.Namespace) -> None:
    """In the uid tier, the course, the submissions, this user's home and the checkout's
    solutions closed to other users (a submission runs as one), by plain permissions, with
    Landlock or without."""
    from graders.sandbox.box import tier
    from graders.sandbox.uid_walls import close_to_others

    chosen = tier() if not args.no_sandbox else None
    if getattr(chosen, "name", None) != "uid":
        return
    solutions = Path(__file__).resolve().parents[2] / "solutions"  # a checkout's references
    closed = close_to_others([args.course, args.submissions, Path.home(), solutions])
    if closed:
        print(f"closed to other users (chmod o-rwx), as submissions run as other users here: "
              f"{', '.join(closed)}")


def _open_course_and_submissions(args: argparse.Namespace):
    """The course and what its submissions folder holds; UsageError when either is wrong."""
    from graders.cli import UsageError
    from graders.nbgrader_plumbing.course import open_course
    from graders.nbgrader_plumbing.source_notebook import BuildError
    from graders.nbgrader_plumbing.submissions import LayoutError, find_submissions

    try:
        course = open_course(args.course)
        return course, find_submissions(args.submissions, course)
    except (BuildError, LayoutError) as err:
        raise UsageError(str(err)) from err


def _autograde(args: argparse.Namespace, course, found) -> dict[str, dict]:
    """File the gradable notebooks for nbgrader and autograde them, with a progress bar."""
    from tqdm import tqdm

    from graders.nbgrader_plumbing.grading_pool import autograde_students
    from graders.nbgrader_plumbing.grading_worker import STUDENT_TIMEOUT, quiet_sqlalchemy
    from graders.nbgrader_plumbing.submissions import stage_submissions

    quiet_sqlalchemy()
    tqdm.monitor_interval = 0  # no monitor thread: the grading workers are forked
    stage_submissions(course, found)
    gradable = sorted(found.notebooks)
    with tqdm(total=len(gradable), desc="grading", unit="student",
              disable=args.quiet or not gradable, file=sys.stderr) as bar:
        timeout = STUDENT_TIMEOUT if args.student_timeout is None else args.student_timeout
        return autograde_students(course, gradable, jobs=args.jobs,
                                  feedback=not args.no_feedback, timeout=timeout,
                                  on_done=lambda outcome: bar.update(1))


def _refused_feedback(course, found) -> None:
    """A feedback page for each notebook that was not read, saying why."""
    from graders.nbgrader_plumbing.refused import write_refused_feedback

    for student, notebooks in found.refused.items():
        for notebook, why in notebooks.items():
            write_refused_feedback(course.feedback_dir(student), notebook, why)


def _record_what_failed(course, found, outcomes: dict[str, dict]):
    """Zeros for each student nbgrader did not grade, and a note for them and for missing
    feedback; return the notes (student -> lines) and the students whose autograde failed."""
    from graders.nbgrader_plumbing.gradebook import record_zero

    notes = {s: list(n) for s, n in found.notes.items()}
    failed = []
    for student in found.students:
        outcome = outcomes.get(student)
        if outcome is None or not outcome["success"]:
            why = ("nothing to grade" if outcome is None
                   else f"not graded: {outcome['error']}" if outcome.get("timed_out")
                   else f"nbgrader could not grade it ({outcome.get('error')})")
            notes.setdefault(student, []).append(f"{why}; recorded with 0 for every test")
            record_zero(course, student)
            if outcome is not None:
                failed.append(student)
        elif outcome.get("feedback_error"):
            notes.setdefault(student, []).append(
                f"no feedback HTML: generate_feedback failed ({outcome['feedback_error']})")
    return notes, failed


def _write_scores(args: argparse.Namespace, course, found, notes: dict[str, list[str]]):
    """Read every student's scores from the gradebook and write the CSV; return the results."""
    from graders.nbgrader_plumbing.gradebook import read_results
    from graders.nbgrader_plumbing.score_report import write_csv
    from graders.nbgrader_plumbing.submissions import handed_in_notebooks

    handed_in = {s: handed_in_notebooks(args.submissions, s, course) for s in found.students}
    results = read_results(course, found.students, notes, handed_in, found.refused)
    write_csv(args.csv, results)
    return results


def _report(args: argparse.Namespace, course, results, failed: list[str],
            outcomes: dict[str, dict]) -> None:
    """The class summary and each student's table (unless --quiet), where everything went, and
    each failure."""
    from graders.nbgrader_plumbing.score_report import format_class, format_student
    from graders.text import plural, printable

    if not args.quiet:
        print(format_class(results))
        print()
        for result in results:
            print(format_student(result))
            print()
    print(f"Graded {plural(len(results), 'student')} into {course.gradebook_path}; scores in "
          f"{args.csv}; feedback in {course.root / 'feedback'}/")
    for student in failed:
        print(printable(f"error: nbgrader could not autograde {student}: "
                        f"{outcomes[student].get('error')}"), file=sys.stderr)
