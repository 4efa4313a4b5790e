"""README's recipe for a new exercise, followed once with a toy: one authored notebook, one checks
module, one reference, one fixtures folder, and nothing else of the repository edited.

The toy exercise (``05_toy_save``: write ``save_checkpoint`` so that a kill in the middle of a
save leaves a complete checkpoint) is laid out in a temporary checkout; its checks module lives
in a temporary package and registers its record when imported. Its notebook is built by the
course's build (nbgrader's ``generate_assignment``), ``checkpoint-lab dev check --root`` checks
it both ways and grades its fixtures against their ``expected.json``, and grading, the live
self-check and Gradescope take its notebook as they take the course's own.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from graders.checks import CHECKS, EXERCISES
from tests.conftest import require_sandbox

ROOT = Path(__file__).resolve().parents[1]
TOY = "05_toy_save"

pytestmark = [pytest.mark.sandbox, pytest.mark.nbgrader]

#: 1. The checks module: the exercise's record, registered by its own module.
CHECKS_MODULE = '''"""Toy exercise 05_toy_save: a save that survives a kill in the middle of it."""

from graders.checks import AnswerCell, Check, Exercise, register
from graders.checks.answer_cells import program_from, with_lesson_loop
from graders.checks.live import live_from_cells
from graders.checks.traced import grade_crash_matrix

NOTEBOOK = "05_toy_save"
KINDS = ("torn_write", "killed_before_rename")
DESCRIPTION = ("runs your save with the lesson's loop on {}, kills it in the middle of every "
               "save and reads checkpoint.json after each kill")

EXERCISE = register(Exercise(
    notebook=NOTEBOOK,
    title="Level 5: a toy save",
    answer_cells=(AnswerCell("l5_save_checkpoint", "save_checkpoint"),),
    checks=(
        Check(id="l5_atomic_save", notebook=NOTEBOOK, title="survives a kill during a save",
              points=3, hidden=False, description=DESCRIPTION.format("support-tickets"),
              answer_cells=("l5_save_checkpoint",), scenario="support-tickets", kinds=KINDS,
              success="every kill left one complete save"),
        Check(id="l5_atomic_save_hidden", notebook=NOTEBOOK,
              title="survives a kill during a save, longer", points=2, hidden=True,
              description=DESCRIPTION.format("long-migration"),
              answer_cells=("l5_save_checkpoint",), scenario="long-migration", kinds=KINDS,
              success="every kill left one complete save", twin="l5_atomic_save"),
    ),
    grade=grade_crash_matrix,
    live=live_from_cells,
    program=lambda cells: program_from(cells, ("l5_save_checkpoint",), with_lesson_loop),
    fixture_cell="l5_save_checkpoint",
))
'''



def _header(grade_id: str, *, markdown: bool = False, points: int = 0, answer: bool = False,
            **lab: str) -> str:
    """A cell header of the authored notebook: nbgrader's metadata (and checkpoint_lab's)."""
    meta = {"grade": bool(points), "grade_id": grade_id, "locked": not answer,
            **({"points": points} if points else {}), "schema_version": 3, "solution": answer}
    extra = f" checkpoint_lab={json.dumps(lab)}" if lab else ""
    return f"# %%{' [markdown]' if markdown else ''} nbgrader={json.dumps(meta)}{extra}"


#: 2. The authored notebook, with nbgrader's metadata in its cell headers.
AUTHORED = f"""# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

{_header("l5_intro", markdown=True)}
# # Level 5: a toy save
#
# Make `save_checkpoint` survive a kill in the middle of a save.

{_header("l5_save_checkpoint", answer=True,
         solution_from=f"solutions/{TOY}.py:CHECKPOINT,save_checkpoint",
         starter_from=f"tests/fixtures/{TOY}/starter.py:save_checkpoint")}

{_header("l5_atomic_save", points=3)}
from graders.checks import run_check

run_check("l5_atomic_save", globals())

{_header("l5_atomic_save_hidden", points=2)}
from graders.checks import run_check

run_check("l5_atomic_save_hidden", globals())
"""

#: 3. The reference: Level 2's atomic save.
REFERENCE = '''"""Level 5, fixed: every save is a temp file renamed over checkpoint.json."""

import json
import os
import tempfile

CHECKPOINT = "checkpoint.json"


def save_checkpoint(state):
    fd, tmp = tempfile.mkstemp(dir=".", prefix="checkpoint.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(state, f)
    os.replace(tmp, CHECKPOINT)
'''

IN_PLACE = '''"""{what}"""

import json


def save_checkpoint(state):
    with open("checkpoint.json", "w") as f:
        json.dump(state, f, indent=2)
'''

#: 4. The fixtures folder: the starter, a wrong fix, a right one, and the truth table.
FIXTURES = {
    "starter.py": IN_PLACE.format(what="The toy's starter: it writes checkpoint.json in place."),
    "fails_atomic_indented_in_place.py": IN_PLACE.format(
        what="Still in place, only indented differently: a kill mid-save tears it."),
    "passes_path_replace.py": '''"""A temp file renamed with pathlib: atomic."""

import json
from pathlib import Path


def save_checkpoint(state):
    tmp = Path("checkpoint.json.tmp")
    tmp.write_text(json.dumps(state))
    tmp.replace("checkpoint.json")
''',
}
TRUTH = {
    "starter": {"l5_atomic_save": False, "l5_atomic_save_hidden": False},
    "fails_atomic_indented_in_place": {"l5_atomic_save": False, "l5_atomic_save_hidden": False},
    "passes_path_replace": {"l5_atomic_save": True, "l5_atomic_save_hidden": True},
}


def _repository_state() -> str:
    """What git says of the course's own files (unchanged by the recipe)."""
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--",
                           "graders", "fake_llm", "exercises", "solutions", "tests", "README.md"],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def toy(tmp_path):
    """The toy's checkout (built) and its checks module registered; the registry as it was
    afterwards."""
    require_sandbox()
    from graders.nbgrader_plumbing.build import refresh_exercises

    before = _repository_state()
    root = tmp_path / "checkout"
    for path, text in {f"exercises/src/{TOY}.py": AUTHORED, f"solutions/{TOY}.py": REFERENCE,
                       **{f"tests/fixtures/{TOY}/{n}": t for n, t in FIXTURES.items()},
                       f"tests/fixtures/{TOY}/expected.json": json.dumps(TRUTH, indent=2),
                       "package/toy_exercises/__init__.py": '"""Toy exercises."""\n',
                       "package/toy_exercises/toy_save.py": CHECKS_MODULE}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    exercises, checks = dict(EXERCISES), dict(CHECKS)
    sys.path.insert(0, str(root / "package"))
    try:
        importlib.import_module("toy_exercises.toy_save")
        refresh_exercises(root / "exercises", root / "exercises" / "src", root)
        yield root
        assert _repository_state() == before, "the recipe edits nothing of the repository"
    finally:
        sys.path.remove(str(root / "package"))
        for name in [m for m in sys.modules if m.startswith("toy_exercises")]:
            del sys.modules[name]
        EXERCISES.clear()
        EXERCISES.update(exercises)
        CHECKS.clear()
        CHECKS.update(checks)


@pytest.mark.timeout(900)
def test_a_fifth_exercise_is_four_files_and_every_tool_reads_it(toy, capsys):
    from graders.checks import (
        NOTEBOOKS,
        evaluate_check,
        grade_submission,
        notebook_of,
        submission_from_notebook,
    )
    from graders.cli import main
    from graders.gradescope.results import grade_folder

    release = json.loads((toy / "exercises" / f"{TOY}.ipynb").read_text())
    assert notebook_of(release) == TOY and NOTEBOOKS[TOY] == "Level 5: a toy save"

    status = main(["dev", "check", "--exercise", TOY, "--root", str(toy)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert (f"{TOY}: ok (release in sync; reference 2/2 checks; starter 0/2; 3/3 fixtures as "
            "named)") in out, out

    starter = grade_submission(submission_from_notebook(release, TOY), TOY)
    assert [(k, r.status) for k, r in starter.items()] == [
        ("l5_atomic_save", "failed"), ("l5_atomic_save_hidden", "failed")]
    assert "torn_write_save_1" in starter["l5_atomic_save"].message

    namespace: dict = {}  # a kernel that ran the reference's cell: its source is to be had
    reference = toy / "solutions" / f"{TOY}.py"
    exec(compile(reference.read_text(), str(reference), "exec"), namespace)  # noqa: S102
    live = evaluate_check("l5_atomic_save", namespace)
    assert live.passed, live.message

    folder = toy / "handed_in"
    folder.mkdir()
    for cell in release["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "l5_save_checkpoint":
            cell["source"] = REFERENCE
    (folder / f"{TOY}.ipynb").write_text(json.dumps(release))
    results = grade_folder(folder, {"exercises": [{"notebook": TOY, "exercise": TOY,
                                                   "written": []}]})
    assert [(t["tags"][0], t["score"], t["status"]) for t in results["tests"]] == [
        ("l5_atomic_save", 3.0, "passed"), ("l5_atomic_save_hidden", 2.0, "passed")]
    assert results["tests"][0]["name"] == "Level 5: survives a kill during a save"
