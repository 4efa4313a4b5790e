"""``checkpoint-lab check NOTEBOOK``: exit status 0 only when every visible check passes.

Runs the real command in a subprocess on the released exercise notebooks (``exercises/*.ipynb``;
until the build has released them, on notebooks built here from the authored files), on the same
notebooks with the reference answers put into their answer cells, and on bad input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from graders.checks import ANSWER_CELLS, NOTEBOOKS
from tests.conftest import ROOT, notebook_variant

#: The installed command (``python -m graders.cli`` would import graders.cli twice, as
#: ``__main__`` and as itself, and then not catch the UsageError that cli_check raises).
COMMAND = Path(sys.executable).with_name("checkpoint-lab")


def check(*args: str, cwd: Path = ROOT, workspace: Path | None = None
          ) -> subprocess.CompletedProcess:
    """Run ``checkpoint-lab check ARGS`` in ``cwd``, as JupyterLab on ``workspace`` would."""
    assert COMMAND.exists(), "checkpoint-lab is not installed: pip install -e '.[test]'"
    env = {k: v for k, v in os.environ.items() if k != "CHECKPOINT_LAB_WORKSPACE"}
    if workspace is not None:
        env["CHECKPOINT_LAB_WORKSPACE"] = str(workspace)
    return subprocess.run([str(COMMAND), "check", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120, env=env)


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
    from graders.nbgrader_plumbing.build import extract_code

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


@pytest.mark.sandbox
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_released_notebook_fails_its_self_check(name, tmp_path):
    result = check(released(name, tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL 0/" in result.stdout and "PASS" not in result.stdout
    hidden = {"02": 2, "03": 2, "04": 3}.get(name[:2])
    summary = "points" + (f"; {hidden} hidden checks run when your work is graded."
                          if hidden else ".")
    assert any(line.endswith(summary) for line in result.stdout.splitlines()), result.stdout
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.sandbox
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_with_the_reference_answers_passes(name, tmp_path):
    path = with_reference(name, released(name, tmp_path), tmp_path)
    result = check(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout and "PASS" in result.stdout


WRITTEN = {"01_incomplete_checkpoint": "l1_where_resume_falls_over",
           "02_two_latent_failures": "l2_name_the_failures",
           "03_power_cut": "l3_why_two_fsyncs",
           "04_parallel_tool_calls": "l4_why_keep_results"}


@pytest.mark.sandbox
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_passing_checks_still_say_the_written_answer_is_empty(name, tmp_path):
    path = with_reference(name, released(name, tmp_path), tmp_path)
    result = check(path)
    assert result.returncode == 0
    said = " ".join(result.stdout.split())
    assert "Your written answer to \"" in said and "is still empty" in said, said
    assert WRITTEN[name] not in said, "named by its question, not by its id"

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == WRITTEN[name]:
            cell.source = "Resume would run the tool again: nothing recorded the call."
    nbformat.write(nb, path)
    result = check(path)
    assert result.returncode == 0 and "still empty" not in result.stdout, result.stdout


def _workspace_with(tmp_path: Path, name: str, notebook: Path) -> Path:
    """A student's workspace whose copy of ``name`` is ``notebook``."""
    workspace = tmp_path / "ws"
    copy = workspace / "exercises" / "lesson2" / f"{name}.ipynb"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(notebook.read_bytes())
    return workspace


@pytest.mark.sandbox
@pytest.mark.parametrize("argument", ["02_two_latent_failures.ipynb", "02_two_latent_failures"])
def test_a_bare_name_from_the_course_folder_checks_the_students_own_copy(argument, tmp_path):
    name = "02_two_latent_failures"
    fixed = with_reference(name, released(name, tmp_path), tmp_path)
    workspace = _workspace_with(tmp_path, name, fixed)
    # As JupyterLab's terminal has it (checkpoint-lab lab sets the variable) ...
    result = check(argument, cwd=ROOT, workspace=workspace)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
    assert str(workspace / "exercises" / "lesson2" / f"{name}.ipynb") in result.stdout
    # ... and as a terminal elsewhere, told where the workspace is.
    result = check(argument, "--workspace", workspace, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_bare_name_with_no_copy_names_the_workspace_never_the_release(tmp_path):
    empty = tmp_path / "empty-ws"
    result = check("02_two_latent_failures.ipynb", "--workspace", empty, cwd=ROOT)
    assert result.returncode == 2 and result.stdout == ""
    line = result.stderr.strip()
    assert str(empty) in line and "exercises/lesson2/02_two_latent_failures.ipynb" in line, line
    assert "python3 course.py lab" in line
    assert "exercises/02_two_latent_failures" not in line  # the course's untouched release


def test_a_missing_path_suggests_the_students_copy(tmp_path):
    workspace = tmp_path / "ws"
    result = check(tmp_path / "nowhere" / "02.ipynb", workspace=workspace, cwd=tmp_path)
    assert result.returncode == 2
    assert "ws/exercises/lesson2/02_two_latent_failures.ipynb" in result.stderr, result.stderr
    assert f"{ROOT / 'exercises'}/" not in result.stderr


@pytest.mark.sandbox
def test_checking_the_course_release_says_it_is_not_the_students_work(tmp_path):
    name = "02_two_latent_failures"
    workspace = _workspace_with(tmp_path, name, released(name, tmp_path))
    result = check(f"exercises/{name}.ipynb", cwd=ROOT, workspace=workspace)
    assert result.returncode == 1
    assert "is the course's untouched release, not your work" in result.stderr
    assert f"checkpoint-lab check {name}" in result.stderr


@pytest.mark.sandbox
def test_answer_cells_count_wherever_they_are_in_the_notebook(tmp_path):
    name = "02_two_latent_failures"
    path = with_reference(name, released(name, tmp_path), tmp_path)
    nb = nbformat.read(path, as_version=4)
    nb.cells.reverse()
    nbformat.write(nb, path)
    assert check(path).returncode == 0


@pytest.mark.sandbox
def test_a_fix_of_one_failure_still_exits_1_and_says_which(tmp_path):
    name = "02_two_latent_failures"
    path = with_reference(name, released(name, tmp_path), tmp_path)
    nb = nbformat.read(path, as_version=4)
    starter = (ROOT / "tests" / "fixtures" / "02_two_latent_failures" / "starter.py").read_text()
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "l2_save_checkpoint":
            cell.source = "import json\n\n" + starter[starter.index("def save_checkpoint"):
                                                     starter.index("def run_agent")]
    nbformat.write(nb, path)
    result = check(path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith("l2_kill_during_save ") and "FAIL 0/3" in line for line in lines)
    assert any(line.startswith("l2_kill_during_tool ") and "PASS 3/3" in line for line in lines)


@pytest.mark.parametrize("make, expected", [
    (lambda tmp: tmp / "nowhere.ipynb", "there is no file"),
    (lambda tmp: "homework.ipynb", "no exercise called homework"),
    (lambda tmp: tmp, "is a folder"),
    (lambda tmp: _write(tmp / "bad.ipynb", "{ not json"), "is not JSON"),
    (lambda tmp: _write(tmp / "list.ipynb", "[1, 2]"), "no list of cells"),
    (lambda tmp: _write(tmp / "other.ipynb", json.dumps(
        {"cells": [{"cell_type": "code", "source": "1", "metadata": {}}]})),
     "is not one of the Checkpoint Lab exercise notebooks"),
], ids=["missing", "unknown_name", "folder", "not_json", "not_notebook", "other_notebook"])
def test_bad_input_gets_one_clear_line_and_exit_2(make, expected, tmp_path):
    result = check(make(tmp_path), cwd=tmp_path)
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


def test_our_cell_checksum_is_nbgraders_on_every_graded_cell_we_release():
    from nbgrader.utils import compute_checksum

    from graders.nbgrader_plumbing.checksum import cell_checksum

    seen = 0
    for name in NOTEBOOKS:
        nb = nbformat.read(ROOT / "exercises" / f"{name}.ipynb", as_version=4)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if "grade_id" not in meta:
                continue
            assert cell_checksum(cell) == compute_checksum(cell), (name, meta["grade_id"])
            if "checksum" in meta:
                assert cell_checksum(cell) == meta["checksum"], (name, meta["grade_id"])
                seen += 1
            cell.source += "\nchanged"
            assert cell_checksum(cell) == compute_checksum(cell)
            assert cell_checksum(dict(cell)) == compute_checksum(cell), "a plain dict too"
    assert seen >= 8, "the released notebooks carry nbgrader's checksums"


def _as_hub_student(home: Path) -> dict:
    """A hub student's environment: a home of their own, the course installed as a package (no
    checkout to find: CHECKPOINT_LAB_COURSE names a folder without lessons/), no workspace."""
    env = {k: v for k, v in os.environ.items() if k != "CHECKPOINT_LAB_WORKSPACE"}
    (home / "no-checkout").mkdir(parents=True, exist_ok=True)
    return env | {"HOME": str(home), "CHECKPOINT_LAB_COURSE": str(home / "no-checkout")}


@pytest.mark.sandbox
def test_on_a_hub_a_bare_name_checks_the_copy_the_assignments_tab_fetched(tmp_path):
    """Issue 28 item 4: `checkpoint-lab check NAME`, as the notebook says, in a hub home that
    holds lesson2/ (nbgrader's fetch), from the home folder and from anywhere else."""
    name = "02_two_latent_failures"
    home = tmp_path / "home"
    fetched = home / "lesson2" / f"{name}.ipynb"
    fetched.parent.mkdir(parents=True)
    fetched.write_bytes(with_reference(name, released(name, tmp_path), tmp_path).read_bytes())
    env = _as_hub_student(home)
    for cwd in (home, tmp_path):
        result = subprocess.run([str(COMMAND), "check", name], capture_output=True, text=True,
                                cwd=cwd, timeout=120, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "lesson2/02_two_latent_failures.ipynb" in result.stdout, result.stdout
        assert "FAIL" not in result.stdout


def test_on_a_hub_with_no_copy_the_message_names_the_hub_folder(tmp_path):
    env = _as_hub_student(tmp_path / "home")
    result = subprocess.run([str(COMMAND), "check", "03_power_cut"], capture_output=True,
                            text=True, cwd=tmp_path / "home", timeout=120, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and "~/lesson2/03_power_cut.ipynb" in line, line


@pytest.mark.parametrize("args", [["2", "--workspace", "~", "--anyway"], [], ["4"]])
def test_on_a_hub_solutions_says_they_are_not_installed_in_one_line(args, tmp_path):
    env = _as_hub_student(tmp_path / "home")
    result = subprocess.run([str(COMMAND), "solutions", *args], capture_output=True, text=True,
                            cwd=tmp_path / "home", timeout=120, env=env)
    assert result.returncode == 2 and result.stdout == "", result.stdout
    line = result.stderr.strip()
    assert "Traceback" not in line and len(line.splitlines()) == 1, line
    assert "not part of this installation" in line and "instructor" in line
    assert not (tmp_path / "home" / "solutions").exists()
