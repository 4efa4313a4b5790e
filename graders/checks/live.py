"""The self-check in a student's kernel: one visible check on the live functions, shown as a
table, and the `Points` nbgrader's Validate reads. For the student's information only: grading
recomputes every verdict outside the kernel.
"""

from __future__ import annotations

import os
from typing import Any

from graders.checks.base import CHECKS, GRADING_ENV, LEVEL3, LEVEL4, VISIBLE_SCENARIO, Check
from graders.checks.gate import hold_back
from graders.checks.grading_faults import grader_fault
from graders.checks.incomplete_checkpoint import (
    describe,
    grade_level1_save,
    judge_missing_fields,
)
from graders.checks.incomplete_checkpoint_save import grade_saves_all_six
from graders.checks.parallel_tool_calls import grade_level4
from graders.checks.power_cut import grade_level3
from graders.checks.result import CheckResult, check_result, not_checked
from graders.checks.two_latent_failures import grade_level2, run_level2
from graders.loop import lesson_loop
from graders.sandbox.serve import SandboxUnavailable
from graders.submission import Submission

__all__ = [
    "run_check", "evaluate_check", "in_grading_kernel", "Points",
]


def _live(namespace: dict, name: str, cell: str):
    value = namespace.get(name)
    if not callable(value):
        raise LookupError(f"{name} is not defined in this notebook yet: run the answer cell "
                          f"{cell} first (and keep the name {name})")
    return value


def _cell_of(function) -> str | None:
    """The whole source of the cell (or file) that defined ``function``, as it was run."""
    import linecache

    filename = getattr(getattr(function, "__code__", None), "co_filename", None)
    if not filename:
        return None
    lines = linecache.getlines(filename)
    return "".join(lines) if lines else None


def _source_of_cells(functions: dict[str, Any]) -> str | None:
    """The answer cells that defined ``functions`` (grade_id -> function), joined as grading
    joins them (each under its marker), or None if a cell's source is not to be had."""
    cells: dict[str, str] = {}
    for grade_id, function in functions.items():
        cell = _cell_of(function)
        if cell is None:
            return None
        if cell not in cells.values():
            cells[grade_id] = cell
    if len(cells) < len(functions):  # one cell (or file) defines them all
        return next(iter(cells.values()))
    return "\n\n".join(f"# --- answer cell {grade_id} ---\n{cell.rstrip()}\n"
                        for grade_id, cell in cells.items())


def evaluate_check(check_id: str, namespace: dict) -> CheckResult:
    """Run visible check ``check_id`` on the live names in ``namespace`` (a kernel's globals).

    Used in the student's own kernel, for their information. The cells that defined the
    functions are graded exactly as grading will grade them, on the best observer this machine
    has (:func:`graders.sandbox.engine.observer`: grading's sandbox, strace alone, or the
    in-process recorder, which runs anywhere Python does); the message says so in its first line
    when it is not grading's sandbox. Only when a cell's source is not to be had do the live
    functions run in forked children of the kernel. Hidden checks are not run here (see
    :func:`run_check`).
    """
    from graders.sandbox.engine import observer_note

    result = hold_back(_evaluate_check(check_id, namespace))  # Level 2: part 1 first
    note = observer_note()
    if check_id != "l1_missing_fields" and note and result.checked:
        result.message = f"{note}\n{result.message}"
    return result


def _evaluate_check(check_id: str, namespace: dict) -> CheckResult:
    check = CHECKS[check_id]
    if check.hidden:
        raise ValueError(f"{check_id} is a hidden check: it runs only when your work is graded")
    try:
        if check_id == "l1_missing_fields":
            if "MISSING_FIELDS" not in namespace:
                return check_result(check_id, False, "MISSING_FIELDS is not defined in this "
                                    "notebook yet: run the answer cell that defines it first.")
            passed, message = judge_missing_fields(describe(namespace["MISSING_FIELDS"]))
            return check_result(check_id, passed, message.replace(" in a fresh Python process", ""))
        if check_id == "l1_saves_all_six":
            save = _live(namespace, "save_checkpoint", "l1_save_checkpoint")
            cell = _cell_of(save)
            if cell is not None:
                return grade_level1_save(cell, None, True)
            return grade_saves_all_six(
                Submission.from_functions(lesson_loop.bound_to(save), save),
                "your save_checkpoint", None, True)
        if check.notebook in (LEVEL3, LEVEL4):
            name, cell_id, grade = (("save_checkpoint", "l3_save_checkpoint", grade_level3)
                                    if check.notebook == LEVEL3
                                    else ("run_agent", "l4_run_agent", grade_level4))
            return _one_cell_live(check, namespace, name, cell_id, grade)
        save = _live(namespace, "save_checkpoint", "l2_save_checkpoint")
        agent = _live(namespace, "run_agent", "l2_run_agent")
        cells = _source_of_cells({"l2_save_checkpoint": save, "l2_run_agent": agent})
        if cells is not None:
            return grade_level2(cells, [check], None, True)[check_id]
        return run_level2(Submission.from_functions(agent, save), [check], None, True)[check_id]
    except LookupError as exc:
        return not_checked(check_id, f"Could not run this check yet: {exc}.")
    except SandboxUnavailable as exc:
        return not_checked(check_id, f"Could not run this check here: {exc}.")
    except Exception as exc:  # noqa: BLE001 - the student's kernel gets a message, not a traceback
        return grader_fault(check_id, exc)


def _one_cell_live(check: Check, namespace: dict, name: str, cell_id: str,
                   grade) -> CheckResult:
    """Levels 3 and 4 in a kernel: the cell that defined ``name``, graded as grading grades it."""
    cell = _cell_of(_live(namespace, name, cell_id))
    if cell is None:
        return not_checked(check.id, f"Could not run this check: the source of your {name} cell "
                           "is not to be had; run that cell again, then this one.")
    try:
        return grade(f"# --- answer cell {cell_id} ---\n{cell}", [check], None, True)[check.id]
    except SandboxUnavailable as exc:
        return not_checked(check.id, f"Could not run this check here: {exc}. It runs when your "
                           "work is graded.")


def in_grading_kernel() -> bool:
    """Whether this process is a kernel that grading runs a submission in.

    True under ``nbgrader autograde`` (which sets ``NBGRADER_EXECUTION=autograde``) or when
    ``CHECKPOINT_LAB_GRADING`` is ``1``. There the in-kernel self-checks run nothing: no grade
    comes from them, and the verdicts are computed outside the kernel.
    """
    return (os.environ.get(GRADING_ENV) == "1"
            or os.environ.get("NBGRADER_EXECUTION") == "autograde")


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
    """The points a visible check earned in the student's kernel, as nbgrader reads them.

    nbgrader scores a test cell by its ``execute_result``: a number there is partial credit. So
    ``nbgrader validate`` (the Validate button) reports a check that earns less than its points
    as failed, without the cell raising and stopping Run All. JupyterLab shows the HTML.
    """

    def __new__(cls, earned: float, out_of: float) -> Points:
        points = super().__new__(cls, earned)
        points.out_of = float(out_of)
        return points

    def _repr_html_(self) -> str:
        verdict = "passed" if self >= self.out_of else "not passed yet"
        return (f"<b>{self:g} of {self.out_of:g} points</b> for this check ({verdict}); "
                "grading runs it again outside this kernel.")


def _visible_scenario(check: Check) -> str:
    twin = CHECKS.get(check.id.removesuffix("_hidden"))
    return twin.scenario if twin is not None and twin.scenario else VISIBLE_SCENARIO


def run_check(check_id: str, namespace: dict) -> Points | None:
    """In a student's kernel: run check ``check_id`` on the live functions and show the result.

    A visible check runs on what ``namespace`` (pass ``globals()``) defines, shows a table
    (HTML in JupyterLab, text elsewhere) and returns the `Points` it earned, which is how
    ``nbgrader validate`` tells a failing check. A hidden check only says that it runs when the
    work is graded. The result is for the student's information: grading recomputes every
    verdict outside the kernel. Never raises for a wrong answer, and writes nothing to stderr.

    In a grading kernel (see `in_grading_kernel`) nothing runs: the verdict is computed outside
    the kernel and written into this cell's outputs instead.
    """
    if check_id not in CHECKS:
        raise KeyError(f"unknown check {check_id!r}; one of {sorted(CHECKS)}")
    check = CHECKS[check_id]
    if in_grading_kernel():
        print(f"Check {check.id} ({check.title}) is graded outside this kernel.")
        return None
    if check.hidden:
        print(f"Hidden check {check.id} ({check.points} points, {check.title}): it "
              f"{check.description}. Nothing runs here; the visible checks above show how your "
              f"code does on {_visible_scenario(check)}.")
        return None
    result = evaluate_check(check_id, namespace)
    _show(result)
    if not result.checked:
        return None  # no score from a check that did not run: its points are pending
    return Points(result.points_earned, check.points)
