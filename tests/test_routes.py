"""Every route that shows a check's words applies the one gate (issue 30, G1/G2).

For every level and every route (the kernel's Run All, ``checkpoint-lab check`` in a terminal,
Validate, which is ``nbgrader validate``, and the site's self-check, in-process as in the
browser): on the untouched starter no output holds a check's diagnosis, a missing field's name,
a sync call's name, or a line of the level's reference; once the saved notebook holds a real
answer (Level 3: the eight predictions), the diagnosis appears. The gate itself:
tests/test_gate.py.
"""

from __future__ import annotations

import json
import linecache
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from graders.checks import CHECKS
from tests.conftest import ROOT
from tests.test_gate import save_with_answer
from tests.test_release_giveaways import LEVELS, giveaways

#: What a check would give away before the student's own answer, by level (compared in lower
#: case, whitespace collapsed): the diagnosis in the judge's words, the missing fields' names
#: (Level 1), the sync calls' names (Level 3), the ids that name a fix (the gradebook keeps them;
#: a student reads each check's label and each written answer's question instead).
GIVEAWAYS = {
    "01_incomplete_checkpoint": ("tokensused", "pendingtooluse", "lacks", "version, task"),
    "02_two_latent_failures": ("torn write", "in place", "save point a", "no trace", "json.load",
                               "run it again", "atomic_save", "save_point_a"),
    "03_power_cut": ("fsync", "fdatasync", "o_directory", "f_fullfsync", "could be empty",
                     "folder's new entry", "nothing had put", "file_synced", "directory_synced"),
    "04_parallel_tool_calls": ("fakemodelerror", "tool_result_missing", "one tool_result per",
                               "one call."),
}

#: Words that only show once the gate is open: the diagnosis is told.
TOLD = {
    "01_incomplete_checkpoint": "lacks",
    "02_two_latent_failures": "in place",
    "03_power_cut": "could be empty",
    "04_parallel_tool_calls": "fakemodelerror",
}

#: Said in place of the findings while the gate is closed (`graders.checks.gate`).
WAITING = "its findings appear once"

#: Level 1's part 4 watches resume without each field by name, after the checks (the six fields
#: are the lesson's); only a check's words must keep the missing fields to themselves.
FIELD_NAMES_OUTSIDE_CHECKS = {"01_incomplete_checkpoint": ("tokensused", "pendingtooluse",
                                                           "version, task")}


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


def _reference_lines_shown(level: str, text: str) -> list[str]:
    flat = " ".join(text.split())
    return sorted(line for line in giveaways(level) if line in flat)


def assert_held_back(level: str, text: str, *, checks_only: bool = True) -> None:
    """``text`` (a route's output) gives nothing away and says the findings wait."""
    said = _flat(text)
    words = GIVEAWAYS[level]
    if not checks_only:
        words = tuple(w for w in words if w not in FIELD_NAMES_OUTSIDE_CHECKS.get(level, ()))
    assert not [w for w in words if w in said], [w for w in words if w in said]
    assert not _reference_lines_shown(level, text)
    assert WAITING in said, text[-1500:]


def assert_told(level: str, text: str) -> None:
    said = _flat(text)
    assert TOLD[level] in said, text[-3000:]
    assert WAITING not in said, text[-1500:]


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    for name in ("CHECKPOINT_LAB_SHOW_ALL", "CHECKPOINT_LAB_NOTEBOOK", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)


def _untouched(level: str, folder: Path) -> Path:
    path = folder / f"{level}.ipynb"
    path.write_text((ROOT / "exercises" / f"{level}.ipynb").read_text())
    return path


def _saved(level: str, folder: Path, answered: bool) -> Path:
    return save_with_answer(level, folder) if answered else _untouched(level, folder)


# -- the kernel: Run All ---------------------------------------------------------------------------

def _output_text(output) -> str:
    if output.get("output_type") == "stream":
        return output["text"]
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    data = output.get("data", {})
    return "\n".join(str(data.get(kind, "")) for kind in ("text/plain", "text/html"))


def _run_all(path: Path) -> tuple[str, str]:
    """(every output, the check cells' and self-check's outputs) of ``path`` run top to bottom
    in a real kernel started in its folder."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    every, checks = [], []
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        text = "\n".join(_output_text(o) for o in cell.get("outputs", []))
        every.append(text)
        if grade_id in CHECKS or grade_id.endswith("_self_check"):
            checks.append(text)
    return "\n".join(every), "\n".join(checks)


@pytest.mark.sandbox
@pytest.mark.parametrize("level", LEVELS)
def test_run_all_on_the_untouched_starter_gives_nothing_away(level, tmp_path):
    every, checks = _run_all(_untouched(level, tmp_path))
    assert_held_back(level, checks)
    assert_held_back(level, every, checks_only=False)


@pytest.mark.sandbox
@pytest.mark.parametrize("level", LEVELS)
def test_run_all_after_a_real_answer_tells_the_diagnosis(level, tmp_path):
    every, checks = _run_all(save_with_answer(level, tmp_path))
    assert_told(level, checks)
    if level == "03_power_cut":  # show_saves(): the four saves' code, syncs and all
        assert "os.fsync(folder)" in every and "os.fsync(f.fileno())" in every, every[:3000]


# -- the terminal: checkpoint-lab check ---------------------------------------------------------

def _terminal(path: Path) -> str:
    cli = Path(sys.executable).parent / "checkpoint-lab"
    done = subprocess.run([str(cli), "check", str(path)], cwd=path.parent, text=True,
                          capture_output=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.mark.sandbox
@pytest.mark.parametrize("answered", [False, True], ids=["starter", "answered"])
@pytest.mark.parametrize("level", LEVELS)
def test_checkpoint_lab_check_applies_the_gate(level, answered, tmp_path):
    said = _terminal(_saved(level, tmp_path, answered))
    if answered:
        assert_told(level, said)
    else:
        assert_held_back(level, said)


# -- Validate: nbgrader validate, a fresh kernel ------------------------------------------------

#: The nbgrader_config.py the package installs into the environment's etc/jupyter: it makes
#: Validate show what a check cell said (`graders.nbgrader_plumbing.validation`).
ENV_CONFIG = ROOT / "graders/data/jupyter/env/etc/jupyter/nbgrader_config.py"


def _validate(path: Path, *, elsewhere: Path | None = None) -> str:
    nbgrader = Path(sys.executable).parent / "nbgrader"
    cwd = elsewhere or path.parent
    (cwd / "nbgrader_config.py").write_text(ENV_CONFIG.read_text())  # as a hub's env has it
    done = subprocess.run([str(nbgrader), "validate", str(path)], cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    assert "No nbgrader_config.py file found" not in done.stderr
    return done.stdout + done.stderr


@pytest.mark.nbgrader
@pytest.mark.sandbox
@pytest.mark.parametrize("answered", [False, True], ids=["starter", "answered"])
@pytest.mark.parametrize("level", LEVELS)
def test_validate_applies_the_gate_from_the_saved_notebook(level, answered, tmp_path):
    said = _validate(_saved(level, tmp_path, answered))
    assert "Success!" not in said
    if answered:
        assert_told(level, said)
    else:
        assert_held_back(level, said)


@pytest.mark.nbgrader
@pytest.mark.sandbox
def test_validate_finds_a_renamed_notebook_run_from_another_folder(tmp_path):
    """The hub's Validate names the file; the kernel is told which (CHECKPOINT_LAB_NOTEBOOK)."""
    path = save_with_answer("02_two_latent_failures", tmp_path)
    renamed = path.with_name("my work.ipynb")
    path.rename(renamed)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert_told("02_two_latent_failures", _validate(renamed, elsewhere=elsewhere))


# -- the site: the browser's kernel runs the self-check in its own process ----------------------

def _answer_cells_namespace(path: Path) -> dict:
    """The names the notebook's answer cells define, each cell run as a kernel runs it (its
    source kept where `graders.submission.cell_of` finds it)."""
    nb = json.loads(path.read_text())
    namespace: dict = {"__name__": "__main__"}
    for n, cell in enumerate(nb["cells"]):
        meta = cell["metadata"].get("nbgrader", {})
        if cell["cell_type"] != "code" or not meta.get("solution"):
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        filename = f"<site-cell-{path.stem}-{n}>"
        lines = source.splitlines(keepends=True)
        linecache.cache[filename] = (len(source), None, lines, filename)
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the starter's own code
    return namespace


@pytest.mark.parametrize("answered", [False, True], ids=["starter", "answered"])
@pytest.mark.parametrize("level", LEVELS)
def test_the_sites_self_check_applies_the_gate(level, answered, tmp_path, monkeypatch):
    """As in JupyterLite: no subprocess, the in-process recorder, the kernel in the notebook's
    folder of the browser's storage."""
    from graders.checks.selfcheck import self_check

    path = _saved(level, tmp_path, answered)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHECKPOINT_LAB_SANDBOX", "selfcheck")
    said = str(self_check(_answer_cells_namespace(path), level))
    if answered:
        assert_told(level, said)
    else:
        assert_held_back(level, said)
    assert os.environ["CHECKPOINT_LAB_SANDBOX"] == "selfcheck"
