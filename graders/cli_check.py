"""``checkpoint-lab check NOTEBOOK``: a student's self-check from the terminal.

Reads the answer cells of an exercise notebook, runs that notebook's visible checks on them in
fresh processes (as grading does), and prints the same table and messages the notebook's
self-check cell shows. Exit status 0 only when every visible check passes, 1 when one fails
(unlike ``nbgrader validate``, which exits 0 either way), 2 for bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graders.cli import UsageError

__all__ = ["add_arguments", "run", "check_notebook"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``check`` subcommand's arguments."""
    parser.add_argument("notebook", metavar="NOTEBOOK",
                        help="an exercise notebook, e.g. 02_two_latent_failures.ipynb")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="seconds one crash point's run may take before it counts as a hang "
                        "(default: the harness's)")


def check_notebook(path: Path, *, timeout: float | None = None):
    """Run the visible checks of the exercise notebook at ``path``; a `ResultTable`.

    Raises `graders.cli.UsageError` when ``path`` is not one of the exercise notebooks.
    """
    from graders.checks import (
        NOTEBOOKS,
        NotebookError,
        checks_for,
        grade_submission,
        notebook_of,
        read_notebook,
        submission_from_notebook,
    )
    from graders.selfcheck import ResultTable

    if not path.exists():
        raise UsageError(f"there is no file {path}; give the path of an exercise notebook, "
                         "e.g. exercises/02_two_latent_failures.ipynb")
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give the path of one exercise notebook (.ipynb) "
                         "inside it")
    try:
        nb = read_notebook(path)
    except NotebookError as exc:
        raise UsageError(f"{exc}; give the .ipynb file of an exercise notebook") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path} ({exc.strerror})") from None
    notebook = notebook_of(nb)
    if notebook is None:
        names = ", ".join(f"{n}.ipynb" for n in NOTEBOOKS)
        raise UsageError(f"{path} is not one of the Checkpoint Lab exercise notebooks ({names}): "
                         "none of its cells is an exercise cell")
    source = submission_from_notebook(nb, notebook)
    results = grade_submission(source, notebook, include_hidden=False, timeout=timeout)
    hidden = [c for c in checks_for(notebook) if c.hidden]
    return ResultTable(results.values(), hidden=hidden,
                       title=f"Self-check of {path.name}: {NOTEBOOKS[notebook]}")


def run(args: argparse.Namespace) -> int:
    """Print the self-check table; 0 when every visible check passes, else 1."""
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout must be a positive number of seconds, not {args.timeout:g}")
    table = check_notebook(Path(args.notebook), timeout=args.timeout)
    print(table)
    return 0 if table.passed else 1
