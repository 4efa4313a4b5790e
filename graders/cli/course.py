"""``checkpoint-lab course DIR``: build a ready nbgrader course directory for Lesson 2."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``checkpoint-lab course``."""
    parser.description = (
        "Build a ready nbgrader course directory: nbgrader_config.py (tamper-proof grading "
        "configured), source/lesson2/ built from exercises/src/, release/lesson2/ from nbgrader's "
        "own generate_assignment, and the sqlite gradebook gradebook.db with the assignment. "
        "Run it again to rebuild; submissions and grades already in DIR are kept.")
    parser.add_argument("dir", metavar="DIR", type=Path, help="the course directory to build")
    parser.add_argument("--students", metavar="IDS", default="",
                        help="comma-separated student ids to add to the gradebook "
                        "(nbgrader's `nbgrader db student add` works too)")


def run(args: argparse.Namespace) -> int:
    """Build the course in ``args.dir``; print what is where."""
    from graders.cli import UsageError
    from graders.nbgrader_plumbing.course import build_course
    from graders.nbgrader_plumbing.settings import COURSE_ID, LAB_COMMAND
    from graders.nbgrader_plumbing.source_notebook import BuildError

    target: Path = args.dir
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} is a file, not a folder; give a folder for the course")
    if target.is_dir() and any(target.iterdir()) and not (target / "nbgrader_config.py").exists():
        raise UsageError(f"{target} already holds files and is not a course directory; give an "
                         "empty or new folder")
    try:
        course = build_course(target, students=args.students.split(","))
    except BuildError as err:
        raise UsageError(str(err).splitlines()[0]) from err
    notebooks = ", ".join(f"{n}.ipynb" for n in course.notebooks())
    students = [s.strip() for s in args.students.split(",") if s.strip()]
    print(f"Course ready in {course.root}")
    print(f"  config     {course.config_path}")
    print(f"  source     source/{course.assignment}/ ({notebooks})")
    print(f"  release    release/{course.assignment}/")
    lessons = sorted(course.lessons_dir.glob("*.ipynb"))
    if lessons:
        print(f"  lessons    lessons/ ({len(lessons)} notebooks, for each student's ~/lessons/: "
              f"they link to the exercises in ~/{course.assignment}/)")
    print(f"  exchange   {course.root / 'exchange'}/ (course id {COURSE_ID}: nbgrader's "
          "release_assignment and collect go through it)")
    print(f"  gradebook  {course.gradebook_path.name}")
    print("  students   " + (f"{', '.join(students)} (in the gradebook)" if students else
                             "none added (--students IDS, or `nbgrader db student add ID`)"))
    print("Grade submissions with: checkpoint-lab grade SUBMISSIONS "
          f"--course {course.root} --csv grades.csv")
    print(f"Open it in JupyterLab with: cd {course.root} && {LAB_COMMAND}")
    return 0
