"""The self-check in a student's kernel: one visible check on the live functions, shown as a
table, and in Validate's kernel the `Points` nbgrader reads. For the student's information
only: grading recomputes every verdict outside the kernel.
"""

from __future__ import annotations

import os
from typing import Any

from graders.checks.answer_cells import AnswerCells
from graders.checks.base import CHECKS, GRADING_ENV, Check, check_named, exercise_of
from graders.checks.gate import hold_back, saved_notebook
from graders.checks.grading_faults import grader_fault
from graders.checks.result import CheckResult, not_checked
from graders.checks.table import ResultTable
from graders.sandbox.serve import SandboxUnavailable
from graders.submission import cell_of

__all__ = [
    "run_check", "evaluate_check", "in_grading_kernel", "in_validating_kernel", "Points",
    "live_from_cells", "live_name", "cell_of",
]


def live_name(namespace: dict, name: str, cell: str):
    """The function ``name`` a kernel defined (``namespace``: its globals), which answer cell
    ``cell`` defines; LookupError when it is not defined (yet)."""
    value = namespace.get(name)
    if not callable(value):
        raise LookupError(f"{name} is not defined in this notebook yet: run the answer cell "
                          f"{cell} first (and keep the name {name})")
    return value


def _cells_in_kernel(check: Check, functions: dict[str, Any]) -> AnswerCells | None:
    """The answer cells that defined ``functions`` (grade_id -> function) as grading takes
    them, or None if a cell's source is not to be had."""
    cells: dict[str, str] = {}
    for grade_id, function in functions.items():
        cell = cell_of(function)
        if cell is None:
            return None
        if cell not in cells.values():
            cells[grade_id] = cell
    if len(cells) < len(functions):  # one cell (or file) defines them all
        return AnswerCells.from_source(next(iter(cells.values())), check.notebook)
    return AnswerCells(check.notebook, cells)


def live_from_cells(check: Check, namespace: dict, *, without_source=None) -> CheckResult:
    """Visible check ``check`` in a kernel: the cells that defined the names its answer cells
    define (`AnswerCell.defines`), graded exactly as grading grades them (the exercise's
    ``grade``), on the best observer this machine has (`evaluate_check` says which when it is
    not grading's sandbox). Where a cell's source is not to be had, ``without_source(check,
    functions)`` runs the live functions instead (grade_id -> function), else it is not checked.
    """
    record = exercise_of(check)
    functions = {}
    for grade_id in check.answer_cells:
        name = record.answer_cell(grade_id).defines
        functions[grade_id] = live_name(namespace, name, grade_id)
    cells = _cells_in_kernel(check, functions)
    if cells is not None:
        result = record.grade(cells, [check], None, True)[check.id]
    elif without_source is not None:
        result = without_source(check, functions)
    else:
        names = " and ".join(record.answer_cell(g).defines for g in check.answer_cells)
        return not_checked(check.id, f"Could not run this check: the source of your {names} "
                           "cell is not to be had; run that cell again, then this one.")
    return result


def evaluate_check(check_id: str, namespace: dict) -> CheckResult:
    """Run visible check ``check_id`` on the live names in ``namespace`` (a kernel's globals).

    Used in the student's own kernel, for their information: the exercise's ``live`` runs it
    (:func:`live_from_cells`: the cells that defined the functions, graded exactly as grading
    will grade them, on the best observer this machine has). Its findings are held back until
    the saved notebook holds the student's own answer (`graders.checks.gate`). Hidden checks
    are not run here (see :func:`run_check`).
    """
    from graders.grading.observers import observer_note

    check = CHECKS[check_id]
    if check.hidden:
        raise ValueError(f"{check_id} is a hidden check: it runs only when your work is graded")
    try:
        result = exercise_of(check).live(check, namespace)
    except LookupError as exc:
        result = not_checked(check_id, f"Could not run this check yet: {exc}.")
    except SandboxUnavailable as exc:
        result = not_checked(check_id, f"Could not run this check here: {exc}. It runs when "
                             "your work is graded.")
    except Exception as exc:  # noqa: BLE001 - the student's kernel gets a message, not a traceback
        result = grader_fault(check_id, exc)
    # What it found waits for the student's own answer, read from the saved notebook.
    result = hold_back(result, saved_notebook(check.notebook, namespace))
    note = observer_note()
    if note and result.checked:
        result.message = f"{note}\n{result.message}"
    return result


def in_grading_kernel() -> bool:
    """Whether this process is a kernel that grading runs a submission in.

    True under ``nbgrader autograde`` (which sets ``NBGRADER_EXECUTION=autograde``) or when
    ``CHECKPOINT_LAB_GRADING`` is ``1``. There the in-kernel self-checks run nothing: no grade
    comes from them, and the verdicts are computed outside the kernel.
    """
    return (os.environ.get(GRADING_ENV) == "1"
            or os.environ.get("NBGRADER_EXECUTION") == "autograde")


def in_validating_kernel() -> bool:
    """Whether this process is the kernel of nbgrader's Validate (``nbgrader validate``, the
    Validate button), which sets ``NBGRADER_EXECUTION=validate`` and reads each test cell's
    ``execute_result`` as its points; no one reads that kernel's outputs."""
    return os.environ.get("NBGRADER_EXECUTION") == "validate"


#: Per notebook, the causes this kernel's check cells have shown (see `ResultTable`'s ``seen``).
SEEN: dict[str, dict[str, tuple[str, str]]] = {}


def _show(obj) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(obj)
    else:
        print(obj)


class Points(float):
    """The points a visible check earned in nbgrader's Validate, as nbgrader reads them.

    nbgrader scores a test cell by its ``execute_result``: a number there is partial credit. So
    ``nbgrader validate`` (the Validate button) reports a check that earns less than its points
    as failed, without the cell raising and stopping Run All. Only Validate's kernel gets one
    (`in_validating_kernel`): anywhere a student reads the cell, its table says the points, and
    a bare number after it would be noise (issue 30, "every check cell one clean table").
    """

    def __new__(cls, earned: float, out_of: float) -> Points:
        points = super().__new__(cls, earned)
        points.out_of = float(out_of)
        return points


def _visible_scenario(check: Check) -> str:
    twin = CHECKS.get(check.twin)
    return twin.scenario if twin is not None and twin.scenario else "the visible scenario"


def run_check(check_id: str, namespace: dict) -> Points | None:
    """In a student's kernel: run check ``check_id`` (its id or label) on the live functions and
    show the result.

    A visible check runs on what ``namespace`` (pass ``globals()``) defines and shows a table
    (HTML in JupyterLab, text elsewhere), its one output. In Validate's kernel it also returns
    the `Points` it earned, which is how ``nbgrader validate`` tells a failing check; elsewhere
    it returns None, so that no bare number follows the table. A hidden check only says that it
    runs when the work is graded. The result is for the student's information: grading
    recomputes every verdict outside the kernel. Never raises for a wrong answer, and writes
    nothing to stderr.

    In a grading kernel (see `in_grading_kernel`) nothing runs: the verdict is computed outside
    the kernel and written into this cell's outputs instead.
    """
    check = check_named(check_id)  # its label, or its id in a notebook of an earlier release
    check_id = check.id
    if in_grading_kernel():
        print(f"Check {check.id} ({check.title}) is graded outside this kernel.")
        return None
    if check.hidden:
        print(f"Hidden check {check.shown_id} ({check.points} points, {check.title}): nothing runs "
              f"here; it runs on {check.scenario} when your work is graded. The visible checks "
              f"above show how your code does on {_visible_scenario(check)}.")
        return None
    result = evaluate_check(check_id, namespace)
    _show(ResultTable([result], seen=SEEN.setdefault(check.notebook, {}), cell=check_id))
    if not result.checked or not in_validating_kernel():
        return None  # no score from a check that did not run: its points are pending
    return Points(result.points_earned, check.points)
