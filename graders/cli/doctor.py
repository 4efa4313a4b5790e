"""``checkpoint-lab doctor [--repair]``: the course's Jupyter settings in this environment.

Any JupyterLab started in the course's environment (a plain ``jupyter lab`` in ``.venv``, Binder,
a hub) reads its settings from the environment's own folders (``sys.prefix``): the course's server
extension (a reopened lesson says "run this cell", not "model not found"), no news question,
Validate in the course's words (``graders/data/jupyter/env/``), and in a student's environment
nbgrader's instructor tools hidden (``graders/data/jupyter/student/``: Formgrader, Course List,
Create Assignment). ``pip install .`` copies these files as data files; an editable install
(``course.py``'s ``.venv``, ``pip install -e .``) copies none, so ``course.py`` and
``checkpoint-lab lab`` write them here themselves, and ``doctor`` reports what is missing or
different and ``--repair`` writes it. Writing is idempotent: a file already as shipped is left
alone. ``--instructor`` makes this an instructor's environment (the instructor tools show) and
``--student`` a student's again; the choice is kept in the environment
(``share/checkpoint-lab/role``) for later repairs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from graders.cli import UsageError

__all__ = ["ROLE_FILE", "Finding", "add_arguments", "examine", "repair", "role", "run"]

_DATA = Path(__file__).resolve().parents[1] / "data" / "jupyter"
#: Where the environment's role ("student" or "instructor") is kept, under sys.prefix.
ROLE_FILE = Path("share") / "checkpoint-lab" / "role"
_ROLES = ("student", "instructor")


@dataclass(frozen=True)
class Finding:
    """One settings file of the environment: where, and what is wrong with it ("" when right)."""

    path: Path
    problem: str
    wanted: bytes | None  # None: the file must not be there


def role(prefix: Path) -> str:
    """The environment's role: what ``--instructor`` or ``--student`` last chose; else student."""
    try:
        chosen = (prefix / ROLE_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return "student"
    return chosen if chosen in _ROLES else "student"


def _shipped(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def examine(prefix: Path, as_role: str | None = None) -> list[Finding]:
    """Each settings file the course puts into ``prefix`` for ``as_role``, with its problem."""
    as_role = as_role or role(prefix)
    found = []
    student = _shipped(_DATA / "student")
    for rel, data in {**_shipped(_DATA / "env"), **student}.items():
        path = prefix / rel
        wanted: bytes | None = data
        if rel in student and as_role == "instructor":
            wanted = None
        try:
            current = path.read_bytes()
        except FileNotFoundError:
            current = None
        except OSError as err:
            found.append(Finding(path, f"cannot be read ({err.strerror})", wanted))
            continue
        if current == wanted:
            problem = ""
        elif wanted is None:
            problem = "is there, though this is an instructor's environment"
        elif current is None:
            problem = "is missing"
        else:
            problem = "differs from the course's"
        found.append(Finding(path, problem, wanted))
    return found


def repair(prefix: Path, as_role: str | None = None) -> list[Finding]:
    """Write (or remove) what :func:`examine` found wrong; return what was changed."""
    as_role = as_role or role(prefix)
    changed = [f for f in examine(prefix, as_role) if f.problem]
    for finding in changed:
        if finding.wanted is None:
            finding.path.unlink(missing_ok=True)
        else:
            finding.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = finding.path.with_name(finding.path.name + ".checkpoint-lab-tmp")
            temporary.write_bytes(finding.wanted)
            temporary.replace(finding.path)
    if role(prefix) != as_role or not (prefix / ROLE_FILE).exists():
        (prefix / ROLE_FILE).parent.mkdir(parents=True, exist_ok=True)
        (prefix / ROLE_FILE).write_text(as_role + "\n", encoding="utf-8")
    return changed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repair", action="store_true",
                        help="write the missing or different files (else only report them)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--instructor", action="store_true",
                       help="an instructor's environment: Formgrader, Course List and Create "
                            "Assignment show (implies --repair)")
    which.add_argument("--student", action="store_true",
                       help="a student's environment (the default): nbgrader's instructor tools "
                            "are hidden (implies --repair)")
    parser.add_argument("--quiet", action="store_true", help="print nothing when all is well")
    parser.add_argument("--prefix", metavar="DIR", default=None,
                        help="the environment to look at (default: this Python's, sys.prefix)")


def run(args: argparse.Namespace) -> int:
    prefix = Path(args.prefix or sys.prefix)
    as_role = "instructor" if args.instructor else "student" if args.student else role(prefix)
    if args.repair or args.instructor or args.student:
        try:
            changed = repair(prefix, as_role)
        except OSError as err:
            raise UsageError(f"cannot write the course's Jupyter settings into {prefix} "
                             f"({err.strerror}: {err.filename}); nothing else was changed. "
                             "Run it as the user who owns that environment (sudo on a hub)"
                             ) from None
        for finding in changed:
            verb = "removed" if finding.wanted is None else "wrote"
            print(f"{verb} {finding.path} (it {finding.problem})")
        if changed or not args.quiet:
            print(f"The course's Jupyter settings in {prefix} are in place "
                  f"(a {as_role}'s environment).")
        return 0
    wrong = [f for f in examine(prefix, as_role) if f.problem]
    for finding in wrong:
        print(f"{finding.path} {finding.problem}")
    if wrong:
        print(f"{len(wrong)} of the course's Jupyter settings in {prefix} are not in place; "
              "`checkpoint-lab doctor --repair` puts them there.")
        return 1
    if not args.quiet:
        print(f"The course's Jupyter settings in {prefix} are in place (a {as_role}'s "
              "environment).")
    return 0
