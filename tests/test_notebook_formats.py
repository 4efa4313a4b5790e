"""Honest notebooks in forms the grader once refused (issue 29.8-29.9): an nbformat 3 notebook
(an older Jupyter, a conversion tool) is read as nbformat reads it, as version 4; a notebook with
megabytes of stored outputs (printed text, a plot) is graded, the size limit being on the
sources the grader reads, not on outputs grading throws away. Each is graded for real, in the
sandbox, and gets the grade its code earns."""

from __future__ import annotations

import base64
import csv
import json
from pathlib import Path

import nbformat
import pytest

from graders.checks.answer_cells import MAX_NOTEBOOK_BYTES, AnswerCells, notebook_problem
from graders.checks.grading import grade_submission
from graders.nbgrader_plumbing import submissions
from tests.fixtures import catalog

pytestmark = pytest.mark.sandbox

LEVEL = catalog.LEVELS[1]
HONEST = "passes_fsync_file_and_dir"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def honest() -> dict:
    release = json.loads((ROOT / "exercises" / f"{LEVEL}.ipynb").read_text())
    return catalog.catalog_notebook(LEVEL, HONEST, release)


def _write(path: Path, nb) -> Path:
    path.write_text(nbformat.writes(nbformat.from_dict(nb)) if isinstance(nb, dict)
                    else nbformat.writes(nb), encoding="utf-8")
    return path


def _graded_as_expected(cells: AnswerCells) -> None:
    results = grade_submission(cells, LEVEL)
    got = {check: result.passed for check, result in results.items()}
    assert got == catalog.EXPECTED[LEVEL][HONEST], {c: r.message for c, r in results.items()}


def test_an_nbformat_3_notebook_is_read_as_version_4_and_graded(tmp_path, honest):
    v3 = nbformat.convert(nbformat.reads(json.dumps(honest), as_version=4), 3)
    path = tmp_path / f"{LEVEL}.ipynb"
    nbformat.write(v3, path, version=3)
    text = path.read_text()
    assert '"worksheets"' in text and '"nbformat": 3' in text
    nb, problem = notebook_problem(text)
    assert problem is None, problem
    cells = AnswerCells.from_notebook(path, LEVEL)
    assert cells.code == AnswerCells.from_notebook(honest, LEVEL).code
    assert submissions._notebook_problem(path) is None
    staged = json.loads(submissions._without_outputs(path.read_bytes()))
    assert staged["nbformat"] == 4 and staged["cells"]
    _graded_as_expected(cells)


def _with_outputs(nb: dict, megabytes: int) -> dict:
    """``nb`` with ``megabytes`` MB of printed text and a plot stored in its first code cell."""
    nb = json.loads(json.dumps(nb))
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    line = "step 000123: loss 0.4321, tokens 5678, elapsed 1.234 s\n"
    cell["outputs"] = [
        {"output_type": "stream", "name": "stdout",
         "text": line * (megabytes * (1 << 20) // len(line))},
        {"output_type": "display_data", "metadata": {},
         "data": {"image/png": base64.b64encode(bytes(range(256)) * 4096).decode(),
                  "text/plain": "<Figure size 640x480 with 1 Axes>"}},
    ]
    cell["execution_count"] = 1
    return nb


def test_a_notebook_with_twenty_megabytes_of_outputs_is_graded(tmp_path, honest):
    path = _write(tmp_path / f"{LEVEL}.ipynb", _with_outputs(honest, 20))
    assert path.stat().st_size > 20 << 20
    assert submissions._notebook_problem(path) is None
    staged = submissions._without_outputs(path.read_bytes())
    assert len(staged) < 1 << 20, "stored outputs are dropped before nbgrader reads it"
    cells = AnswerCells.from_notebook(path, LEVEL)
    assert cells.code == AnswerCells.from_notebook(honest, LEVEL).code
    _graded_as_expected(cells)


def test_the_limit_is_on_sources_and_says_so(honest):
    nb = json.loads(json.dumps(honest))
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "id": "huge",
                        "source": "x" * (MAX_NOTEBOOK_BYTES + 1)})
    _, problem = notebook_problem(json.dumps(nb))
    assert problem and "of source" in problem and "16 MiB" in problem, problem


@pytest.mark.nbgrader
def test_one_batch_grades_both_and_a_refused_notebook_says_why(tmp_path, honest, capsys):
    """Through ``checkpoint-lab grade``: the nbformat 3 notebook and the one with 20 MB of
    outputs earn what their code earns; a notebook that is not read gets a feedback page and a
    reason in the instructor's table, never "no reason recorded"."""
    from graders.cli import main
    from tests.fixtures.notebooks.course_cache import shared_course

    course = shared_course()
    release = json.loads((course.release_dir / f"{LEVEL}.ipynb").read_text())
    nb = catalog.catalog_notebook(LEVEL, HONEST, release)
    subs = tmp_path / "subs"
    for student in ("fmt_v3", "fmt_outputs", "fmt_refused"):
        (subs / student).mkdir(parents=True)
    v3 = nbformat.convert(nbformat.reads(json.dumps(nb), as_version=4), 3)
    nbformat.write(v3, subs / "fmt_v3" / f"{LEVEL}.ipynb", version=3)
    _write(subs / "fmt_outputs" / f"{LEVEL}.ipynb", _with_outputs(nb, 20))
    (subs / "fmt_refused" / f"{LEVEL}.ipynb").write_text('{"cells": "none"}')
    status = main(["grade", str(subs), "--course", str(course.root), "--csv",
                   str(tmp_path / "s.csv")])
    out = capsys.readouterr().out
    assert status == 0, out
    with open(tmp_path / "s.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    for student in ("fmt_v3", "fmt_outputs"):
        for check, passed in catalog.EXPECTED[LEVEL][HONEST].items():
            assert (float(rows[student][check]) > 0) == passed, (student, check, rows[student])
    assert rows["fmt_refused"]["l2_atomic_save"] == "0"
    refused = " ".join(out.split("\nfmt_refused: ")[1].split())
    assert "no reason recorded" not in out
    assert "was not graded: its JSON has no list of cells" in refused, refused
    page = (course.feedback_dir("fmt_refused") / f"{LEVEL}.html").read_text()
    assert "its JSON has no list of cells" in page
