"""The gate (issue 30, G1/G2): a check's findings wait for the student's own answer, read from
the saved notebook, never from kernel state. The routes that apply it: tests/test_routes.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from graders.checks.gate import (
    GATES,
    MIN_WORDS,
    NOTEBOOK_ENV,
    PLACEHOLDER,
    SHOW_ALL_ENV,
    gate_open,
    gate_state,
    hold_back,
    notebook_file,
)
from graders.checks.result import CheckResult
from graders.judge.recording import Verdict
from tests.conftest import ROOT

#: A real answer to any level's written part: more than MIN_WORDS words of the student's own.
REAL_ANSWER = ("The save writes checkpoint.json in place, so a kill part-way leaves a torn file; "
               "and no save records the tool call before the tool runs, so resume reruns it.")

#: Level 3's predictions, all eight filled (right or wrong does not matter to the gate).
FILLED = ('PREDICTED = {\n    "save 1": {"empty": True, "older": True},\n'
          '    "save 2": {"empty": False, "older": True},\n'
          '    "save 3": {"empty": True, "older": False},\n'
          '    "save 4": {"empty": False, "older": False},\n}\n')


def released(notebook: str) -> dict:
    return json.loads((ROOT / "exercises" / f"{notebook}.ipynb").read_text())


def with_answer(nb: dict, notebook: str, text: str | None = None) -> dict:
    """``nb`` with its gate cell holding ``text`` (default: a real answer)."""
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if GATES[notebook] in (grade_id, cell.get("id")):
            if cell["cell_type"] == "code":
                cell["source"] = FILLED if text is None else text
            else:
                cell["source"] = REAL_ANSWER if text is None else text
    return nb


def save_with_answer(notebook: str, folder: Path, text: str | None = None) -> Path:
    """The released ``notebook`` saved in ``folder`` under its own name, its gate cell
    answered."""
    path = folder / f"{notebook}.ipynb"
    path.write_text(json.dumps(with_answer(released(notebook), notebook, text)))
    return path


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    monkeypatch.delenv(SHOW_ALL_ENV, raising=False)
    monkeypatch.delenv(NOTEBOOK_ENV, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)


@pytest.mark.parametrize("notebook", list(GATES))
def test_the_untouched_release_keeps_every_gate_closed(notebook):
    assert gate_state(notebook, released(notebook))[0] is False
    assert gate_open(notebook, None) is False, "no notebook found: closed"


@pytest.mark.parametrize("notebook", ["01_incomplete_checkpoint", "02_two_latent_failures",
                                      "04_parallel_tool_calls"])
@pytest.mark.parametrize("text, opens", [
    ("", False),
    (PLACEHOLDER, False),
    (f"{PLACEHOLDER}\n\nit writes in place", False),
    ("one two three four five six seven", False),
    (f"{PLACEHOLDER} one two three four five six seven", False),
    ("### BEGIN SOLUTION\n### END SOLUTION", False),
    ("one two three four five six seven eight", True),
    (REAL_ANSWER, True),
])
def test_a_written_answer_opens_its_checks_with_eight_words_not_the_placeholder(notebook, text,
                                                                                 opens):
    nb = with_answer(released(notebook), notebook, text)
    assert gate_open(notebook, nb) is opens, gate_state(notebook, nb)
    assert len("one two three four five six seven eight".split()) == MIN_WORDS


@pytest.mark.parametrize("code, opens", [
    (FILLED, True),
    (FILLED.replace('"older": False}', '"older": None}'), False),
    (FILLED.replace("True", "1"), False),
    ('PREDICTED = {"save 1": {"empty": True, "older": True}}', False),
    ("PREDICTED = {", False),
    ("PREDICTED = dict(a=True)", False),
    ("", False),
])
def test_level_3_opens_when_all_eight_predictions_are_filled(code, opens):
    nb = with_answer(released("03_power_cut"), "03_power_cut", code)
    assert gate_open("03_power_cut", nb) is opens, gate_state("03_power_cut", nb)


def test_the_instructors_override_opens_every_gate(monkeypatch):
    monkeypatch.setenv(SHOW_ALL_ENV, "1")
    assert all(gate_open(n, None) for n in GATES)


def test_the_saved_notebook_is_found_by_env_session_or_its_name_in_the_folder(tmp_path,
                                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert notebook_file("02_two_latent_failures") is None
    mine = save_with_answer("02_two_latent_failures", tmp_path)
    assert notebook_file("02_two_latent_failures") == mine
    elsewhere = tmp_path / "renamed"
    elsewhere.mkdir()
    renamed = elsewhere / "my copy.ipynb"
    mine.rename(renamed)
    assert notebook_file("02_two_latent_failures") is None
    assert notebook_file("02_two_latent_failures", {"__session__": str(renamed)}) == renamed
    monkeypatch.setenv("JPY_SESSION_NAME", str(renamed))
    assert notebook_file("02_two_latent_failures") == renamed
    monkeypatch.setenv(NOTEBOOK_ENV, str(renamed))
    assert notebook_file("02_two_latent_failures") == renamed
    # another exercise's notebook is not this one's
    assert notebook_file("01_incomplete_checkpoint") is None


def _failed() -> CheckResult:
    verdict = Verdict("support-tickets", "torn_write_save_1", "torn_write", False,
                      "a torn write: the save was overwriting checkpoint.json in place",
                      {"problems": ["in_place_write"]})
    return CheckResult("l2_atomic_save", False, 0, "a torn write in place", [verdict],
                       "a torn write")


def test_a_held_back_check_says_it_ran_and_failed_in_neutral_words():
    held = hold_back(_failed(), released("02_two_latent_failures"))
    assert held.verdicts == [] and not held.passed and held.points_earned == 0
    assert held.message.startswith("It ran and did not pass. Its findings appear once your "
                                   'written answer to "Part 1: name the two failures" holds')
    assert "(l2_name_the_failures)" in hold_back(_failed(), None).message, "no notebook: its id"
    assert "torn" not in str(held) and "in place" not in str(held)
    told = hold_back(_failed(), with_answer(released("02_two_latent_failures"),
                                            "02_two_latent_failures"))
    assert "torn" in told.message and told.verdicts


def test_code_that_does_not_load_and_a_check_that_could_not_run_keep_their_message():
    from graders.checks.result import not_checked

    load = Verdict("support-tickets", "load", "load", False, "SyntaxError on line 3", {})
    result = CheckResult("l2_atomic_save", False, 0, "SyntaxError on line 3", [load])
    assert hold_back(result, None).message == "SyntaxError on line 3"
    missing = not_checked("l2_atomic_save", "Could not run this check here: no strace.")
    assert hold_back(missing, None) is missing


def test_no_state_in_a_kernel_decides_it_a_fresh_process_reads_the_saved_answer(tmp_path):
    """What Validate does: a fresh process, the notebook path in its environment."""
    path = save_with_answer("02_two_latent_failures", tmp_path)
    code = ("from graders.checks.gate import gate_open, saved_notebook\n"
            "n = '02_two_latent_failures'\n"
            "print(gate_open(n, saved_notebook(n)))\n")
    env = {"PATH": "/usr/bin:/bin", NOTEBOOK_ENV: str(path), "PYTHONPATH": str(ROOT)}
    said = subprocess.run([sys.executable, "-c", code], env=env, cwd="/", text=True,
                          capture_output=True, check=True).stdout
    assert said.strip() == "True"
    path.write_text(json.dumps(released("02_two_latent_failures")))
    said = subprocess.run([sys.executable, "-c", code], env=env, cwd="/", text=True,
                          capture_output=True, check=True).stdout
    assert said.strip() == "False"


def test_a_passed_check_is_shown_as_it_is_while_the_gate_is_closed():
    passed = CheckResult("l2_atomic_save", True, 3, "Every crash point passed.", [], "")
    assert hold_back(passed, None) is passed
