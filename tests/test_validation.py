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
    # a heading starts with a capital, as in Validate (the title is also used mid-sentence)
    assert text.startswith(f"{TITLE[0].upper()}{TITLE[1:]}: not passed (0/3 points)\n")
    assert max(len(line) for line in text.splitlines()) <= WRAP


def test_validate_names_an_empty_written_answer_by_its_question(repo_root):
    import nbformat
    from nbgrader.validator import Validator

    install()
    for path in sorted((repo_root / "exercises").glob("*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        failed = Validator()._get_failed_cells(nb)  # as released: every written answer empty
        written = [c for c in nb.cells if c.cell_type == "markdown"
                   and c.metadata.get("nbgrader", {}).get("grade")]
        assert written and len(failed) == len(written), path.name
        for cell, shown in zip(written, failed, strict=True):
            grade_id = cell.metadata.nbgrader.grade_id
            assert "YOUR ANSWER HERE" not in shown.source, shown.source
            assert shown.source.startswith("Your written answer to \"")
            assert grade_id not in shown.source, "named by its question, not its id"
            assert cell.source.strip() == "YOUR ANSWER HERE"  # the notebook itself is unchanged
    level2 = nbformat.read(str(repo_root / "exercises" / "02_two_latent_failures.ipynb"), 4)
    [shown] = Validator()._get_failed_cells(level2)
    assert " ".join(shown.source.split()).startswith(
        'Your written answer to "Part 1: name the two failures" (4 points, marked by hand)')
    assert max(len(line) for line in shown.source.splitlines()) <= WRAP  # Validate does not wrap
    assert Validator()._extract_error(shown) == "You did not provide a response."
