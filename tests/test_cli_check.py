"""``checkpoint-lab check NOTEBOOK``: exit status 0 only when every visible check passes.

Runs the real command in a subprocess on the released exercise notebooks (``exercises/*.ipynb``;
until the build has released them, on notebooks built here from the authored files), on the same
notebooks with the reference answers put into their answer cells, and on bad input.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from graders.checks import ANSWER_CELLS, NOTEBOOKS
from tests.conftest import ROOT
from tests.test_exercise_content import notebook_variant

#: The installed command (``python -m graders.cli`` would import graders.cli twice, as
#: ``__main__`` and as itself, and then not catch the UsageError that cli_check raises).
COMMAND = Path(sys.executable).with_name("checkpoint-lab")


def check(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    assert COMMAND.exists(), "checkpoint-lab is not installed: pip install -e '.[test]'"
    return subprocess.run([str(COMMAND), "check", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def released(name: str, tmp_path: Path) -> Path:
    """The student release of exercise ``name``, as a file."""
    committed = ROOT / "exercises" / f"{name}.ipynb"
    if committed.exists():
        return committed
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(notebook_variant(name, "starter"), path)
    return path


def with_reference(name: str, path: Path, tmp_path: Path) -> Path:
    """The notebook at ``path`` with the reference code in each answer cell."""
    from graders.nbgrader_build import extract_code

    authored = jupytext.read(ROOT / "exercises" / "src" / f"{name}.py", fmt="py:percent")
    specs = {c.metadata["nbgrader"]["grade_id"]: c.metadata["checkpoint_lab"]["solution_from"]
             for c in authored.cells if "solution_from" in c.metadata.get("checkpoint_lab", {})}
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in ANSWER_CELLS[name]:
            cell.source = extract_code(specs[grade_id])
    out = tmp_path / "reference" / f"{name}.ipynb"
    out.parent.mkdir(exist_ok=True)
    nbformat.write(nb, out)
    return out


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_released_notebook_fails_its_self_check(name, tmp_path):
    result = check(released(name, tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL 0/" in result.stdout and "PASS" not in result.stdout
    assert result.stdout.rstrip().endswith("points" + (
        "; 2 hidden checks run when your work is graded." if name.startswith("02") else "."))
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_with_the_reference_answers_passes(name, tmp_path):
    path = with_reference(name, released(name, tmp_path), tmp_path)
    result = check(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout and "PASS" in result.stdout


def test_answer_cells_count_wherever_they_are_in_the_notebook(tmp_path):
    name = "02_two_latent_failures"
    path = with_reference(name, released(name, tmp_path), tmp_path)
    nb = nbformat.read(path, as_version=4)
    nb.cells.reverse()
    nbformat.write(nb, path)
    assert check(path).returncode == 0


def test_a_fix_of_one_failure_still_exits_1_and_says_which(tmp_path):
    name = "02_two_latent_failures"
    path = with_reference(name, released(name, tmp_path), tmp_path)
    nb = nbformat.read(path, as_version=4)
    starter = (ROOT / "tests" / "fixtures" / "submissions" / "starter_fails_all.py").read_text()
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "l2_save_checkpoint":
            cell.source = "import json\n\n" + starter[starter.index("def save_checkpoint"):
                                                     starter.index("def run_agent")]
    nbformat.write(nb, path)
    result = check(path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith("l2_atomic_save ") and "FAIL 0/3" in line for line in lines)
    assert any(line.startswith("l2_save_point_a ") and "PASS 3/3" in line for line in lines)


@pytest.mark.parametrize("make, expected", [
    (lambda tmp: tmp / "nowhere.ipynb", "there is no file"),
    (lambda tmp: tmp, "is a folder"),
    (lambda tmp: _write(tmp / "bad.ipynb", "{ not json"), "is not JSON"),
    (lambda tmp: _write(tmp / "list.ipynb", "[1, 2]"), "no list of cells"),
    (lambda tmp: _write(tmp / "other.ipynb", json.dumps(
        {"cells": [{"cell_type": "code", "source": "1", "metadata": {}}]})),
     "is not one of the Checkpoint Lab exercise notebooks"),
], ids=["missing", "folder", "not_json", "not_notebook", "other_notebook"])
def test_bad_input_gets_one_clear_line_and_exit_2(make, expected, tmp_path):
    result = check(make(tmp_path))
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("checkpoint-lab check: "), result.stderr
    assert expected in lines[0]


def test_a_bad_timeout_is_refused(tmp_path):
    result = check(released("01_incomplete_checkpoint", tmp_path), "--timeout", "0")
    assert result.returncode == 2 and "--timeout must be a positive number" in result.stderr


def test_help():
    result = check("--help")
    assert result.returncode == 0 and "NOTEBOOK" in result.stdout


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
