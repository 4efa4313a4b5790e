"""``checkpoint-lab check NOTEBOOK``: a student's self-check from the terminal.

Reads the answer cells of an exercise notebook, runs that notebook's visible checks on them in
fresh processes (as grading does), and prints the same table and messages the notebook's
self-check cell shows (what they found held back, as there, until the notebook holds the
student's own answer: `graders.checks.gate`), then says which written answers are still empty.
Exit status 0 only when every visible check passes, 1 when one fails (unlike ``nbgrader
validate``, which exits 0 either way), 2 for bad input, and 3 when none failed but some could not
run on this machine (each says why and how to get it checked; its points are pending, not lost).

Where this machine cannot run grading's sandbox, the checks run on the best observer it has
(strace alone, else the in-process recorder: :func:`graders.grading.observers.observer`) and the
table says so in one line.

``NOTEBOOK`` is a path, or just the notebook's name (``02_two_latent_failures``, with or without
``.ipynb``): a name that is not a file here is looked up in the student's workspace
(`graders.workspace.student_files`), so the command works from the course's folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graders.cli import UsageError
from graders.nbgrader_plumbing.checksum import cell_checksum

__all__ = ["add_arguments", "run", "check_notebook", "empty_written_answers", "resolve_notebook",
           "NOT_CHECKED_STATUS"]

#: The exit status when no visible check failed but some could not run here.
NOT_CHECKED_STATUS = 3

_PLACEHOLDER = "YOUR ANSWER HERE"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``check`` subcommand's arguments."""
    parser.add_argument("notebook", metavar="NOTEBOOK",
                        help="your exercise notebook: its name (02_two_latent_failures), looked "
                        "up in your workspace, or the path of your copy")
    parser.add_argument("--workspace", metavar="DIR", default=None,
                        help="your working folder (default: the one JupyterLab serves, else "
                        "workspace/ in the course's folder)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="seconds one crash point's run may take before it counts as a hang "
                        "(default: the harness's)")


def _shown(path: Path) -> str:
    """``path`` relative to the current folder when it is below it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path.resolve())


def resolve_notebook(text: str, workspace: str | Path | None = None) -> Path:
    """The file ``checkpoint-lab check TEXT`` means: the path itself when it exists, else the
    student's copy of the exercise named ``TEXT`` in their workspace. UsageError otherwise."""
    from graders.checks import NOTEBOOKS
    from graders.nbgrader_plumbing.source_notebook import ASSIGNMENT
    from graders.workspace.student_files import exercise_copy, notebook_name, workspace_path

    path = Path(text).expanduser()
    if path.exists():
        return path
    name = notebook_name(text)
    ws = workspace_path(workspace)
    names = ", ".join(NOTEBOOKS)
    if name is None:
        example = _shown(exercise_copy("02_two_latent_failures", ws))
        raise UsageError(f"there is no file {text}; give the path of your copy of an exercise "
                         f"notebook (e.g. {example}) or just its name ({names})")
    if name not in NOTEBOOKS:
        raise UsageError(f"there is no file {text} and no exercise called {name}; the exercises "
                         f"are {names}")
    copy = exercise_copy(name, ws)
    # the workspace's copy, then the one nbgrader's fetch makes (lesson2/ here or in the home
    # folder, as on a hub), then the notebook itself in this folder
    file = f"{name}.ipynb"
    fetched = [Path.cwd() / ASSIGNMENT / file, Path.home() / ASSIGNMENT / file, Path.cwd() / file]
    for candidate in (copy, *fetched):
        if candidate.exists():
            return candidate
    raise UsageError(f"there is no file {text} here, no {ASSIGNMENT}/{name}.ipynb (the folder "
                     f"the Assignments tab fetches into), and your workspace {ws} has no "
                     f"{copy.relative_to(ws)} yet; give the path of your copy (on a hub: "
                     f"checkpoint-lab check ~/{ASSIGNMENT}/{name}.ipynb), or open the course "
                     "once with `python3 course.py lab` (it makes your copy)")


def empty_written_answers(nb) -> list[tuple[str, float]]:
    """The written answers of ``nb`` still left as released or empty: (grade_id, points)."""
    empty = []
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "markdown" or not (meta.get("solution") and meta.get("grade")):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        unchanged = False
        if "checksum" in meta:
            try:
                unchanged = cell_checksum(cell) == meta["checksum"]
            except Exception:  # noqa: BLE001 - a damaged cell: judge it by its text alone
                unchanged = False
        if unchanged or source.strip() in ("", _PLACEHOLDER):
            empty.append((meta.get("grade_id", "?"), float(meta.get("points", 0))))
    return empty


def _named(nb, grade_id: str) -> str:
    """A written answer as a student finds it: by its question (an id may name the answer)."""
    from graders.checks.gate import question_of

    question = question_of(nb, grade_id)
    return f'to "{question}"' if question else grade_id


def check_notebook(path: Path, *, timeout: float | None = None):
    """Run the visible checks of the exercise notebook at ``path``; a `ResultTable`.

    Its notes name the written answers that are still empty. Raises `graders.cli.UsageError`
    when ``path`` is not one of the exercise notebooks.
    """
    from graders.checks import NOTEBOOKS, NotebookError, checks_for
    from graders.checks.selfcheck import NotAnExercise, ResultTable, check_saved_notebook

    if path.is_dir():
        raise UsageError(f"{path} is a folder; give the path of one exercise notebook (.ipynb) "
                         "inside it")
    try:
        nb, notebook, results = check_saved_notebook(path, timeout)
    except NotAnExercise as exc:
        raise UsageError(str(exc)) from None
    except NotebookError as exc:
        raise UsageError(f"{exc}; give the .ipynb file of an exercise notebook") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path} ({exc.strerror})") from None
    from graders.checks.gate import hold_back

    results = {check_id: hold_back(result, nb) for check_id, result in results.items()}
    hidden = [c for c in checks_for(notebook) if c.hidden]
    from graders.grading.observers import observer_note

    notes = [f"Your written answer {_named(nb, grade_id)} ({points:g} points, marked by hand) "
             "is still empty: write it in the notebook before you submit."
             for grade_id, points in empty_written_answers(nb)]
    note = observer_note()
    if note:
        notes.insert(0, note)
    return ResultTable(results.values(), hidden=hidden, notes=notes,
                       title=f"Self-check of {_shown(path)}: {NOTEBOOKS[notebook]}")


def run(args: argparse.Namespace) -> int:
    """Print the self-check table; 0 when every visible check passes, 1 when one fails, 3 when
    none failed but some could not run here."""
    from graders.sandbox.sweep import sweep_left_behind
    from graders.workspace.student_files import exercise_copy, is_course_release, workspace_path

    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout must be a positive number of seconds, not {args.timeout:g}")
    sweep_left_behind()  # what a check or grading killed before it ended left, its uids' too
    path = resolve_notebook(args.notebook, args.workspace)
    if path.is_file() and is_course_release(path):
        copy = exercise_copy(path.stem, workspace_path(args.workspace))
        yours = (f"your copy is {_shown(copy)}: `checkpoint-lab check {path.stem}`"
                 if copy.exists() else "your copy is made by `python3 course.py lab`")
        print(f"note: {_shown(path)} is the course's untouched release, not your work; {yours}",
              file=sys.stderr)
    table = check_notebook(path, timeout=args.timeout)
    print(table)
    sys.stdout.flush()
    if table.passed:
        return 0
    return 1 if table.failed else NOT_CHECKED_STATUS
