"""The ``checkpoint-lab`` command: one entry point, one module per subcommand.

Each subcommand lives in its own module, which provides ``add_arguments(parser)`` and
``run(args) -> int``. The module is imported only when its subcommand runs, so ``--help``
stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import PackageNotFoundError, version

__all__ = ["main", "SUBCOMMANDS"]

#: name -> (module, one-line help). Modules are imported lazily.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "lab": ("graders.cli.lab", "open the course in JupyterLab, in your own workspace"),
    "reset": ("graders.cli.lab", "put one notebook in your workspace back to its released state"),
    "check": ("graders.cli.check", "self-check an exercise notebook from the terminal"),
    "solutions": ("graders.cli.solutions",
                  "copy the reference solutions into your workspace"),
    "course": ("graders.cli.course", "build a ready nbgrader course directory"),
    "grade": ("graders.cli.grade", "grade a folder of submissions through nbgrader"),
    "crash": ("graders.cli.crash", "run the crash matrix on a Python file and print the verdicts"),
    "dev": ("graders.cli.dev", "for maintainers: `dev check` checks every exercise both ways, "
            "`dev golden` every fixture's results against tests/golden/, `dev bench` runs "
            "every benchmark"),
    "gradescope": ("graders.cli.gradescope", "write an autograder zip for Gradescope"),
    "site": ("graders.cli.site", "build the course as a static site that runs in a browser tab"),
    "doctor": ("graders.cli.doctor",
               "check (--repair: write) the course's Jupyter settings in this environment"),
}


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


def _version() -> str:
    try:
        return version("checkpoint-lab")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="checkpoint-lab",
        description="Checkpoint Lab: a course on writing an agent loop's state to disk "
        "so that a long task survives a crash.",
    )
    parser.add_argument("--version", action="version", version=f"checkpoint-lab {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(_module=module_name)
        if name in argv[:1]:
            importlib.import_module(module_name).add_arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``checkpoint-lab`` with ``argv`` (default: the process's arguments)."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    if not argv:
        parser.print_help()
        return 2
    args = parser.parse_args(argv)
    module = importlib.import_module(args._module)
    try:
        return int(module.run(args) or 0)
    except UsageError as err:
        print(f"checkpoint-lab {args.command}: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("checkpoint-lab: interrupted", file=sys.stderr)
        return 130

