"""graders.nbgrader_plumbing.validation: nbgrader's Validate explains a failed check cell with the
check's verdict."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_output

from graders.checks import CHECKS, CheckResult
from graders.checks.record import record_of
from graders.checks.selfcheck import ResultTable
from graders.nbgrader_plumbing.cells import WRAP, verdict_outputs
from graders.nbgrader_plumbing.validation import explain, install

TITLE = CHECKS["l2_atomic_save"].title
WHY = ("Killed halfway through save 1 (save point B, after tool 1 returned): checkpoint.json held "
       "936 of its 1,873 bytes and is not valid JSON. Resume would fail on json.load.")


def _check_cell(result: CheckResult, *outputs) -> dict:
    """A test cell as nbgrader's Execute leaves it: the table shown, the points returned."""
    table = ResultTable([result])
    cell = new_code_cell('run_check("l2_atomic_save", globals())', outputs=[
        new_output("display_data", {"text/html": table._repr_html_(), "text/plain": str(table)}),
        new_output("execute_result", {"text/plain": f"{result.points_earned:g}"},
                   execution_count=1),
        *outputs])
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "l2_atomic_save",
                                 "points": 3, "locked": True, "schema_version": 3}
    return cell


def test_a_failed_check_is_explained_by_its_verdict():
    text = explain(_check_cell(CheckResult("l2_atomic_save", False, 0, WHY)))
    assert text.splitlines()[0] == f"{TITLE[0].upper()}{TITLE[1:]}: not passed (0/3 points)"
    assert " ".join(text.split()).endswith(WHY)
    assert max(len(line) for line in text.splitlines()) <= WRAP


def test_a_passed_check_or_a_cell_without_a_table_is_left_to_nbgrader():
    assert explain(_check_cell(CheckResult("l2_atomic_save", True, 3, "all good"))) is None
    assert explain(new_code_cell("1", outputs=[])) is None


def test_nbgraders_validator_says_the_verdict_not_partial_credit():
    from nbgrader.validator import Validator

    install()
    install()  # twice is once
    validator = Validator()
    said = validator._extract_error(_check_cell(CheckResult("l2_atomic_save", False, 0, WHY)))
    assert "Partial credit" not in said and "not passed (0/3 points)" in said
    # A cell that raised keeps nbgrader's own explanation: its traceback.
    raised = _check_cell(CheckResult("l2_atomic_save", False, 0, WHY), new_output(
        "error", ename="NameError", evalue="x", traceback=["NameError: name 'x' is not defined"]))
    assert validator._extract_error(raised) == "NameError: name 'x' is not defined"


def test_feedback_verdicts_are_wrapped():
    outputs = verdict_outputs(record_of(CheckResult("l2_atomic_save", False, 0, WHY * 3)))
    text = outputs[0].traceback[0]
    assert text.startswith(f"{TITLE}: not passed (0/3 points)\n")
    assert max(len(line) for line in text.splitlines()) <= WRAP
