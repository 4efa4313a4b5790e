"""``checkpoint-lab gradescope --course DIR -o FILE``: an autograder zip for Gradescope."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``checkpoint-lab gradescope``."""
    parser.description = (
        "Write an autograder for Gradescope (a zip with setup.sh and run_autograder, in "
        "Gradescope's documented format) that grades a student's notebooks exactly as "
        "`checkpoint-lab grade` does, in the sandbox, and leaves the written answers to be "
        "marked by hand. Upload FILE as the programming assignment's autograder.")
    parser.add_argument("--course", metavar="DIR", type=Path, required=True,
                        help="the course directory (made by `checkpoint-lab course DIR`)")
    parser.add_argument("-o", "--output", metavar="FILE", type=Path,
                        default=Path("autograder.zip"),
                        help="where to write the zip (default: autograder.zip)")
    parser.add_argument("--without-landlock", action="store_true",
                        help="where Gradescope's kernel has no Landlock, grade in the uid tier "
                        "all the same (without it, every check reads 'Not graded' there, saying "
                        "why): one student per container and /autograder closed (0700), "
                        f"{_gives_up()}")


def _gives_up() -> str:
    from graders.sandbox.box import WITHOUT_LANDLOCK_GIVES_UP

    return WITHOUT_LANDLOCK_GIVES_UP.replace("%", "%%")


def run(args: argparse.Namespace) -> int:
    """Build the zip; print what it grades."""
    from graders.cli import UsageError
    from graders.gradescope.autograder_zip import build_autograder
    from graders.nbgrader_plumbing.course import BuildError, open_course

    if not args.output.parent.is_dir():
        raise UsageError(f"-o {args.output}: give a file name in an existing folder")
    try:
        course = open_course(args.course)
        manifest = build_autograder(course.source_dir, args.output,
                                    without_landlock=args.without_landlock)
    except (BuildError, ValueError) as err:
        raise UsageError(str(err)) from err
    from graders.checks import checks_for

    exercises = manifest["exercises"]
    auto = sum(c.points for e in exercises for c in checks_for(e["exercise"]))
    written = ", ".join(f"{w['grade_id']} {w['points']:g}" for e in exercises
                        for w in e["written"])
    names = ", ".join(e["notebook"] for e in exercises)
    print(f"Wrote {args.output}: grades {names}. Upload it as the autograder of a Gradescope "
          f"programming assignment worth {auto:g} autograded points; add the written answers "
          f"as manually graded questions of its outline ({written} points).")
    return 0
