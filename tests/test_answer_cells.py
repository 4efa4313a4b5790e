"""Answer cells travel as ``{grade_id: code}`` from the notebook to the runner, and a line in a
message is a line of the cell the student wrote (issue 20 item 3, issue 16 items 4 and 19)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graders.checks import grade_submission, notebook_of, submission_from_notebook
from graders.submission import Submission
from tests.conftest import ROOT

L1, L2, L3, L4 = ("01_incomplete_checkpoint", "02_two_latent_failures", "03_power_cut",
                  "04_parallel_tool_calls")

needs_sandbox = pytest.mark.usefixtures("sandbox_here")


def _cell(grade_id, source: str, cell_type: str = "code") -> dict:
    cell = {"cell_type": cell_type, "source": source,
            "metadata": {"nbgrader": {"grade_id": grade_id, "solution": True, "grade": False,
                                      "locked": False, "schema_version": 3}}}
    if cell_type == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def _notebook(*cells) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)}


def _reference(notebook: str) -> str:
    return (ROOT / "solutions" / f"{notebook}.py").read_text()


@pytest.mark.sandbox
def test_cells_are_a_dict_and_the_program_has_no_marker_lines():
    nb = _notebook(_cell("l2_run_agent", "def run_agent(*a):\n    pass\n"),
                   _cell("other", "print('not mine')"),
                   _cell("l2_save_checkpoint", "def save_checkpoint(state):\n    pass\n"))
    from graders.checks.answer_cells import AnswerCells

    cells = submission_from_notebook(nb, L2)
    assert isinstance(cells, AnswerCells)
    assert cells.code == {"l2_save_checkpoint": "def save_checkpoint(state):\n    pass\n",
                          "l2_run_agent": "def run_agent(*a):\n    pass\n"}
    parts = [cells.part(g)[0] for g in cells.code]
    program = Submission.from_parts(parts)
    assert "# ---" not in program.source
    assert program.place(1) == ("the answer cell l2_save_checkpoint", 1)
    assert program.place(4) == ("the answer cell l2_run_agent", 2)
    assert program.locate({"line": 3, "code": "x"}) == {
        "line": 1, "code": "x", "where": "the answer cell l2_run_agent"}


def test_a_split_answer_cell_is_joined_in_notebook_order_and_said():
    from graders.checks.answer_cells import AnswerCells

    first, second = "def run_agent(task, tools,\n", "              call_model, execute_tool):\n"
    nb = _notebook(_cell("l2_run_agent", first), _cell("l2_save_checkpoint", "x = 1\n"),
                   _cell("l2_run_agent", second + "    return None\n"))
    cells = AnswerCells.from_notebook(nb, L2)
    assert cells.code["l2_run_agent"] == first + second + "    return None\n"
    assert cells.pieces == {"l2_run_agent": 2}
    assert "l2_run_agent was in 2 cells" in " ".join(cells.notes())
    compile(cells.code["l2_run_agent"], "<cell>", "exec")


def test_an_odd_grade_id_is_no_answer_cell_and_breaks_nothing(tmp_path):
    from graders.checks.answer_cells import AnswerCells, read_notebook

    nb = _notebook(_cell({"not": "text"}, "x = 1"), _cell(["a"], "y = 2"),
                   _cell("l1_save_checkpoint", "def save_checkpoint(state):\n    pass\n"))
    assert notebook_of(nb) == L1
    assert list(AnswerCells.from_notebook(nb, L1).code) == ["l1_save_checkpoint"]
    path = tmp_path / "huge.ipynb"
    path.write_text(json.dumps(_notebook(*[_cell(None, "", "markdown")] * 2001)))
    with pytest.raises(ValueError, match="2,001 cells"):
        read_notebook(path)


@needs_sandbox
@pytest.mark.sandbox
def test_level3_names_its_own_cell_not_level1s():
    code = "import json\n\n\ndef save_checkpoint(state):\n    x = 1 / 0\n"
    results = grade_submission(f"# --- answer cell l3_save_checkpoint ---\n{code}", L3,
                               include_hidden=False)
    for result in results.values():
        assert "(line 5 of the answer cell l3_save_checkpoint)" in result.message, \
            result.message
        assert "l1_save_checkpoint" not in result.message


@needs_sandbox
@pytest.mark.sandbox
def test_a_level3_notebook_names_its_cell_and_the_loop_by_their_own_lines():
    code = "def save_checkpoint(state):\n    return state['nope']\n"
    nb = _notebook(_cell("l3_save_checkpoint", code))
    results = grade_submission(submission_from_notebook(nb, L3), L3, include_hidden=False)
    message = results["l3_file_synced"].message
    assert "KeyError: 'nope' (line 2 of the answer cell l3_save_checkpoint" in message, message


@needs_sandbox
@pytest.mark.sandbox
def test_level4_lines_count_from_its_cell_after_the_given_save():
    code = ("from __future__ import annotations\n\n"
            "def run_agent(task, tools, call_model, execute_tool):\n"
            "    raise ValueError('line four')\n")
    nb = _notebook(_cell("l4_run_agent", code))
    results = grade_submission(submission_from_notebook(nb, L4), L4, include_hidden=False)
    for result in results.values():
        assert "(line 4 of the answer cell l4_run_agent" in result.message, result.message


@needs_sandbox
@pytest.mark.sandbox
def test_the_reference_split_in_two_cells_gets_every_point():
    reference = _reference(L2)
    agent, save = reference.index("def run_agent("), reference.index("def save_checkpoint(")
    # Split Cell at the start of a line: JupyterLab trims the line break at the cut
    nb = _notebook(_cell("l2_save_checkpoint", reference[:save].rstrip("\n")),
                   _cell("l2_run_agent", reference[agent:]),
                   _cell("l2_save_checkpoint", reference[save:agent]))
    cells = submission_from_notebook(nb, L2)
    results = grade_submission(cells, L2, include_hidden=False)
    assert cells.pieces == {"l2_save_checkpoint": 2}
    assert all(r.passed for r in results.values()), [r.message for r in results.values()]


def test_a_part_is_what_the_runner_gets_in_order():
    from graders.submission import Part

    program = Submission.from_parts([Part("a", "x = 1"), Part("b", "y = 2\nz = 3\n")])
    assert program.source == "x = 1\ny = 2\nz = 3\n"
    assert [program.place(n) for n in (1, 2, 3)] == [("a", 1), ("b", 1), ("b", 2)]
    assert Submission.from_source("x = (\n").problem().startswith("Your code has a syntax error")
    broken = Submission.from_parts([Part("the answer cell c", "x = 1\n"), Part("loop", "y = (\n")])
    assert "at line 1 of loop" in broken.problem()


def test_load_errors_is_the_only_author_of_what_a_student_reads_when_code_cannot_load():
    """Every wording in ``graders/load_errors.py`` is used, and no other module of the grader
    writes a load failure's words itself."""
    import ast
    import re

    from graders import load_errors

    root = Path(__file__).resolve().parents[1]
    sources = {p: p.read_text(encoding="utf-8") for p in (root / "graders").rglob("*.py")
               if p.name != "load_errors.py"}
    unused = [name for name in load_errors.__all__
              if not any(re.search(rf"\b{name}\b", s) for s in sources.values())]
    assert unused == []
    authored = []
    for path, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(
                    r"could not read (the answer cell|your code|\{)|not defined at the top level of"
                    r"|Fix the cell so that it runs", node.value):
                authored.append(f"{path.relative_to(root)}:{node.lineno}")
    assert authored == []
