"""``checkpoint-lab solutions [LEVEL]``: copy the reference solutions into the workspace
(:mod:`graders.workspace.solutions` does the copying), asking first while the checks fail."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graders.workspace.solutions import LEVELS, copy_solutions, not_passing, solution_files

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``checkpoint-lab solutions``."""
    parser.description = (
        "Copy the reference solutions (code and model written answers) into your workspace's "
        "solutions/ folder, where JupyterLab's file browser shows them. Try the exercise first: "
        "finding the failures yourself is the point. A copy you already have is kept.")
    parser.add_argument("level", metavar="LEVEL", nargs="?", type=int, choices=LEVELS,
                        help="1 to 4: one level's solutions only (default: every level)")
    parser.add_argument("--workspace", metavar="DIR", default=None,
                        help="your working folder (default: the one JupyterLab serves, else "
                        "workspace/ in the course's folder)")
    parser.add_argument("--anyway", action="store_true",
                        help="copy them even though your checks do not pass yet (without it, "
                        "you are asked first)")


def _confirmed(args: argparse.Namespace, ws: Path) -> bool:
    """Whether to copy: the checks pass, --anyway, or the student says yes when asked."""
    if args.anyway:
        return True
    why = not_passing(ws, args.level)
    if not why:
        return True
    which = f"Level {args.level}'s" if args.level else "every level's"
    print("The notebooks say to look at the solutions once your checks pass, and they do not "
          "yet:")
    for line in why:
        print(f"  {line}")
    print("Finding the failures yourself is the exercise; `hint()` in the notebook gives the "
          "next step.")
    if not sys.stdin.isatty():
        print(f"Nothing copied. To copy {which} solutions anyway: checkpoint-lab solutions "
              f"{args.level or ''} --anyway".replace("  ", " "))
        return False
    try:
        answer = input(f"Copy {which} solutions anyway? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        print("Nothing copied.")
        return False
    return True


def run(args: argparse.Namespace) -> int:
    """Copy the solutions (asking first while the checks do not pass); print where they are."""
    from graders.cli import UsageError
    from graders.workspace.notebooks import WorkspaceError
    from graders.workspace.student_files import workspace_path

    try:
        solution_files(args.level)  # first: on a hub there are none, whatever the workspace
    except FileNotFoundError as err:
        raise UsageError(str(err)) from None
    ws = workspace_path(args.workspace)
    if not ws.is_dir():
        raise UsageError(f"there is no workspace {ws}; open the course once with `python3 "
                         "course.py lab` (it makes it), or give --workspace DIR")
    if not _confirmed(args, ws):
        return 1
    try:
        copied = copy_solutions(ws, args.level)
    except (WorkspaceError, FileNotFoundError, OSError) as err:
        raise UsageError(str(err)) from None
    print(f"The solutions are in {copied.folder} (solutions/ in JupyterLab's file browser):")
    for path in copied.files:
        print(f"  {path.name}" + (" (your copy, kept)" if path in copied.kept else ""))
    return 0
