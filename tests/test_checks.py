"""graders.checks: the registry, and what the checks say about the known submissions, bad input
and live functions.

Whether each check passes or fails on the reference, the starter and every fixture is proved once,
by ``checkpoint-lab dev check`` against each fixture folder's ``expected.json``
(``tests/test_adversarial.py``); here, what the results say.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from graders.checks import (
    ANSWER_CELLS,
    CHECKS,
    EXERCISES,
    NOTEBOOKS,
    CheckResult,
    NotebookError,
    checks_for,
    counts_against,
    evaluate_check,
    exercise,
    grade_submission,
    register,
    run_check,
    submission_from_notebook,
)
from tests.conftest import ROOT

L1, L2, L3, L4 = EXERCISES
FIXTURES = ROOT / "tests" / "fixtures"
SUBMISSIONS = FIXTURES / L2
L1_FIXTURES = FIXTURES / L1
REFERENCE1, STARTER1 = ROOT / "solutions" / f"{L1}.py", L1_FIXTURES / "starter.py"
REFERENCE2, STARTER2 = ROOT / "solutions" / f"{L2}.py", SUBMISSIONS / "starter.py"
ATOMIC = {"l2_atomic_save", "l2_atomic_save_hidden"}
SAVE_POINT_A = {"l2_save_point_a", "l2_save_point_a_hidden"}
ALL_L2 = ATOMIC | SAVE_POINT_A


def notebook(cells: dict[str, str | None]) -> dict:
    """A minimal notebook whose code cells carry the given grade_ids (None: leave it out)."""
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "source": source, "metadata": {"nbgrader": {"grade_id": grade_id}},
         "outputs": [], "execution_count": None}
        for grade_id, source in cells.items() if source is not None]}


def level1(missing_fields: str | None = None, save: str | None = None, *, timeout=None):
    source = submission_from_notebook(
        notebook({"l1_missing_fields_answer": missing_fields, "l1_save_checkpoint": save}), L1)
    return grade_submission(source, L1, timeout=timeout)


def level2(save: str, agent: str, *, include_hidden=False, timeout=None):
    source = submission_from_notebook(
        notebook({"l2_save_checkpoint": save, "l2_run_agent": agent}), L2)
    return grade_submission(source, L2, include_hidden=include_hidden, timeout=timeout)


def passed(results: dict) -> set[str]:
    return {k for k, r in results.items() if r.passed}


def _function(path: Path, name: str) -> str:
    import ast

    text = path.read_text()
    imports = [ast.get_source_segment(text, n) for n in ast.parse(text).body
               if isinstance(n, ast.Import | ast.ImportFrom) and getattr(n, "module", "") !=
               "__future__"]
    node = next(n for n in ast.parse(text).body if getattr(n, "name", None) == name or (
        isinstance(n, ast.Assign) and any(getattr(t, "id", None) == name for t in n.targets)))
    return "\n".join(imports) + "\n\n" + ast.get_source_segment(text, node) + "\n"


@pytest.fixture(scope="module")
def reference2():
    """Level 2's reference, every check (the one grading of it here)."""
    return grade_submission(REFERENCE2.read_text(), L2)


@pytest.fixture(scope="module")
def starter2():
    """Level 2's starter, its visible checks."""
    return grade_submission(STARTER2.read_text(), L2, include_hidden=False)


# -- the registry ----------------------------------------------------------------------------------

def test_every_check_belongs_to_one_registered_exercise_in_notebook_order():
    assert list(EXERCISES) == sorted(EXERCISES)
    assert list(CHECKS) == [c.id for record in EXERCISES.values() for c in record.checks]
    for name, record in EXERCISES.items():
        assert record.notebook == name and NOTEBOOKS[name] == record.title
        assert ANSWER_CELLS[name] == record.grade_ids
        assert record.title.startswith("Level ") and ": " in record.title
        for check in record.checks:
            assert check.notebook == name and exercise(name) is record
            assert set(check.answer_cells) <= set(record.grade_ids), check.id


def test_every_hidden_check_repeats_its_visible_twin_on_another_scenario():
    hidden = [c for c in CHECKS.values() if c.hidden]
    assert hidden
    for check in hidden:
        twin = CHECKS[check.twin]
        assert not twin.hidden and twin.notebook == check.notebook, check.id
        assert (twin.kinds, twin.problems, twin.answer_cells) == (
            check.kinds, check.problems, check.answer_cells), check.id
        assert twin.scenario != check.scenario and twin.points > check.points, check.id
    assert not [c.id for c in CHECKS.values() if not c.hidden and c.twin]


def test_the_problems_each_check_judges_are_the_judge_s_own():
    from graders.judge.checkpoint_rules import PROBLEMS
    from graders.judge.parallel_rules import IN_FLIGHT_PROBLEMS, KEPT_PROBLEMS, MESSAGE_PROBLEMS
    from graders.judge.power import DATA_NOT_SYNCED, RENAME_NOT_SYNCED

    known = {*PROBLEMS, *IN_FLIGHT_PROBLEMS, *KEPT_PROBLEMS, *MESSAGE_PROBLEMS, DATA_NOT_SYNCED,
             RENAME_NOT_SYNCED}
    for record in EXERCISES.values():
        own = [c.problems for c in record.checks if not c.hidden]
        assert all(p <= known for p in own), record.notebook
        assert sum(len(p) for p in own) == len(frozenset().union(*own)), \
            f"{record.notebook}: no problem is two visible checks' own"


def test_an_exercise_registers_once_and_its_checks_must_be_its_own():
    record = EXERCISES[L3]
    with pytest.raises(ValueError, match="registered twice"):
        register(record)
    stranger = dataclasses.replace(record.checks[0], id="l9_x", answer_cells=("l9_cell",))
    with pytest.raises(ValueError, match="runs no answer cell of its exercise"):
        register(dataclasses.replace(record, notebook="09_x", checks=(
            dataclasses.replace(stranger, notebook="09_x"),)))
    assert "09_x" not in EXERCISES and "l9_x" not in CHECKS


# -- what the results say ------------------------------------------------------------------------

@pytest.mark.sandbox
def test_the_starter_runs_as_it_is_and_fails_only_under_a_crash(starter2):
    for check_id, result in starter2.items():
        no_crash = [v for v in result.verdicts if v.point == "no_crash"]
        assert no_crash and no_crash[0].passed, f"{check_id}: {no_crash}"
        assert "with no crash at all" not in result.message


@pytest.mark.sandbox
def test_reference_passes_say_what_was_done(reference2):
    message = reference2["l2_atomic_save"].message
    assert "support-tickets" in message and "crash point" in message
    hidden = reference2["l2_save_point_a_hidden"]
    assert "long-migration" in hidden.message
    assert {v.scenario for v in hidden.verdicts} == {"long-migration"}
    assert {v.kind for v in hidden.verdicts} == {"no_crash", "killed_during_tool",
                                                 "killed_during_model_call"}


@pytest.mark.sandbox
@pytest.mark.timeout(1500)  # the first to ask for `graded` waits for the session's dev check
def test_a_fix_of_only_the_write_earns_the_atomic_save_on_its_own(graded):
    results = graded(L2, SUBMISSIONS / "fails_save_point_a_not_saved.py")
    assert results["l2_atomic_save"].passed
    assert "left no trace" in results["l2_save_point_a"].message
    torn = [v for v in results["l2_atomic_save"].verdicts if v.kind == "torn_write"]
    assert torn and all(v.passed for v in torn), "a kill inside a save judges only the save"
    assert not any(counts_against("l2_atomic_save", v) for v in torn)


@pytest.mark.sandbox
@pytest.mark.timeout(1500)
def test_in_place_write_is_told_its_write_is_torn(graded):
    results = graded(L2, SUBMISSIONS / "fails_atomic_in_place_write.py")
    message = results["l2_atomic_save"].message
    assert "torn_write_save_1" in message and "not valid JSON" in message
    assert "a torn write" in message
    # the symptom and the concept, never the fix: that is in the opt-in hints
    for giveaway in ("os.replace", "rename it", "temp file and"):
        assert giveaway not in message


# -- the verdict cannot be forged by the submission -------------------------------------------

#: Code that tries to change how it is judged: patched into the grader's modules where it can
#: import them (never, in the sandbox), into the standard library where it cannot be stopped.
CHEATS = {
    # json.load only: json.loads also decodes the submission's own calls to the model, so
    # patching it breaks the submission's run (it earns what that code earns: nothing)
    "json": "import json\njson.load = lambda *a, **k: {}\n",
    "graders": "import graders.checks, graders.judge.checkpoint_rules\n"
               "graders.checks.counts_against = lambda *a, **k: False\n"
               "graders.judge.checkpoint_rules.check = lambda *a, **k: None\n",
    "assertion": "import builtins\nbuiltins.AssertionError = Exception\n",
    "fake_llm": "import fake_llm\nfake_llm.load_scenario = None\n",
    "harness_rlimit": "import graders.inprocess.recorder as c\n"
                      "c._setrlimit = lambda *a, **k: None\n",
    "harness_kill": "import graders.inprocess.recorder as c\nc._kill = lambda *a, **k: None\n",
    "harness_recorder": "import graders.inprocess.recorder as c\n"
                        "c.Recorder.arm = lambda self, name: None\n"
                        "c.Recorder.die = lambda self, why: None\n",
    "sigxfsz": "import signal\n_signal = signal.signal\nsignal.signal = lambda s, h: _signal(s, "
               "signal.SIG_IGN if s == signal.SIGXFSZ else h)\n",
}


#: Code appended to the reference that patches, in the submission's own process, what a grader
#: living there would rely on: json, the bootstrap that runs the code (``__main__`` in the
#: sandbox), AssertionError, a grader package planted in sys.modules, rlimits, kills, signals.
#: Each statement runs where the code is loaded; one that fails (an import the sandbox lacks)
#: fails the reference.
PATCHES = {
    "json": "import json\n_loads = json.loads\n\n\ndef _never_fails(s, *a, **k):\n"
            "    try:\n        return _loads(s, *a, **k)\n    except ValueError:\n"
            "        return {'version': 1}\n\n\njson.loads = _never_fails\n",
    "bootstrap": "import __main__ as box\nassert box._exchange and box.call_model\n"
                 "box._error = lambda exc, function=None: {}\n"
                 "box._describe = lambda value: {'defined': True}\n"
                 "box.FakeModelError = box.ToolError = Exception\n",
    "assertion": "import builtins\nbuiltins.AssertionError = Exception\n",
    "planted_graders": "import sys, types\nfor name in ('graders', 'graders.checks', 'fake_llm'):\n"
                       "    sys.modules[name] = types.ModuleType(name)\n"
                       "sys.modules['graders.checks'].counts_against = lambda *a, **k: False\n",
    "rlimit": "import resource\nresource.setrlimit = lambda *a, **k: None\n",
    "kill": "import os, signal\nos.kill = os.killpg = lambda *a, **k: None\n"
            "for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):\n"
            "    signal.signal(s, signal.SIG_IGN)\n",
    "sigxfsz": "import signal\n_signal = signal.signal\nsignal.signal = lambda s, h: _signal(s, "
               "signal.SIG_IGN if s == signal.SIGXFSZ else h)\nsignal.signal(signal.SIGXFSZ, "
               "signal.SIG_DFL)\n",
}


@pytest.mark.sandbox
@pytest.mark.parametrize("cheat", PATCHES.values(), ids=PATCHES.keys())
def test_a_reference_that_patches_things_keeps_full_marks(cheat):
    """The grader lives outside the submission's process: the reference with the patches
    appended keeps every point, and nothing it patched is blamed on the grader."""
    source = REFERENCE2.read_text() + "\n\n" + cheat
    results = grade_submission(source, L2, include_hidden=False)
    assert passed(results) == set(results) == {"l2_atomic_save", "l2_save_point_a"}, \
        {k: r.message for k, r in results.items()}
    assert sum(r.points_earned for r in results.values()) == sum(
        CHECKS[c].points for c in results)
    assert not any("fault in the grader" in r.message for r in results.values())


def _attempted(cheat: str) -> str:
    """``cheat`` as a submission's top-level code that survives a module it cannot import."""
    body = "".join(f"    {line}\n" for line in cheat.splitlines())
    return f"\ntry:\n{body}except ImportError:\n    pass\n"


@pytest.mark.sandbox
@pytest.mark.parametrize("name", sorted(CHEATS))
def test_a_submission_that_patches_things_earns_what_its_code_earns(name):
    """The cheat runs (it never stops the code loading): the reference keeps full marks, and the
    starter earns nothing more than its code does."""
    cheat = _attempted(CHEATS[name])
    reference = grade_submission(REFERENCE2.read_text() + cheat, L2, include_hidden=False)
    assert all(r.passed for r in reference.values()), {k: r.message for k, r in reference.items()}
    starter = grade_submission(STARTER2.read_text() + cheat, L2, include_hidden=False)
    assert not passed(starter), {k: r.message for k, r in starter.items()}
    assert all(r.status == "failed" and "while it was being loaded" not in r.message
               for r in starter.values()), {k: r.message for k, r in starter.items()}


def test_the_problems_each_level2_check_tolerates_are_the_judge_s_own():
    from graders.checks.two_latent_failures import SAVE_POINT_A_PROBLEMS, WRITE_PROBLEMS
    from graders.judge.checkpoint_rules import PROBLEMS

    assert WRITE_PROBLEMS <= set(PROBLEMS) and SAVE_POINT_A_PROBLEMS <= set(PROBLEMS)
    assert not WRITE_PROBLEMS & SAVE_POINT_A_PROBLEMS
    assert "tear_not_applied" not in WRITE_PROBLEMS | SAVE_POINT_A_PROBLEMS


# -- Level 1: the missing fields ----------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    'MISSING_FIELDS = {"version", "task", "turns", "tokensUsed", "pendingToolUse"}',
    'MISSING_FIELDS = ["pendingToolUse", "tokensUsed", "turns", "task", "version"]',
    'MISSING_FIELDS = set("version task turns tokensUsed pendingToolUse".split())',
], ids=["set", "list", "computed"])
@pytest.mark.sandbox
def test_the_five_missing_fields_pass(answer):
    result = level1(answer)["l1_missing_fields"]
    assert result.passed and result.points_earned == 2, result.message
    assert "all five" in result.message


@pytest.mark.parametrize("answer, expected", [
    ('MISSING_FIELDS = {"version", "task", "turns", "tokensUsed"}',
     ["has 4 of the 5", "pendingToolUse is missing",
      "resume cannot tell a tool call was left dangling"]),
    ('MISSING_FIELDS = {"version", "task", "turns", "tokensUsed", "pendingToolUse", "messages"}',
     ["messages is the one field the starter does save"]),
    ('MISSING_FIELDS = {"task"}', ["has 1 of the 5", "4 more of the fields"]),
    ('MISSING_FIELDS = {"version", "task", "turns", "tokens_used", "pendingToolUse"}',
     ["'tokens_used' is not spelled as the checkpoint spells its key 'tokensUsed'"]),
    ('MISSING_FIELDS = {"version", "task", "turns", "tokensUsed", "pendingToolUse", "fsync"}',
     ["'fsync' is not one of the six fields"]),
    ('MISSING_FIELDS = "version, task, turns, tokensUsed, pendingToolUse"',
     ["MISSING_FIELDS is a str", "Expected a set"]),
    ('MISSING_FIELDS = set()', ["MISSING_FIELDS is empty"]),
    ('MISSING_FIELDS = {1, 2}', ["is not a field name"]),
    ('missing_fields = {"version"}', ["does not define MISSING_FIELDS"]),
    ('MISSING_FIELDS = {"version"} | undefined_name', ["raised NameError"]),
    ('MISSING_FIELDS = {"version",', ["Python could not read the answer cell"]),
    ('import os\nos._exit(3)', ["ended the Python process (exit status 3)"]),
    ('from graders.loop.resume import SIX_FIELDS\nMISSING_FIELDS = set(SIX_FIELDS) - {"messages"}',
     ["No module named 'graders'"]),
], ids=["four", "messages", "one_guess", "misspelt", "unknown", "string", "empty", "numbers",
        "undefined", "raises", "syntax", "os_exit", "imports_the_grader"])
@pytest.mark.sandbox
def test_wrong_missing_fields_fail_saying_why(answer, expected):
    """An answer cell runs in the sandbox, where the grader's own package is not."""
    result = level1(answer)["l1_missing_fields"]
    assert not result.passed and result.points_earned == 0
    for text in expected:
        assert text in result.message, result.message
    if "{\"task\"}" in answer:  # a guess of one field is not answered with the other four
        assert not any(f in result.message for f in ("version", "turns", "tokensUsed",
                                                     "pendingToolUse"))


@pytest.mark.sandbox
def test_a_missing_fields_cell_that_hangs_fails_in_time():
    result = level1("while True:\n    pass", timeout=1)["l1_missing_fields"]
    assert not result.passed
    assert "still running after 1 s" in result.message


@pytest.mark.sandbox
def test_the_missing_fields_decision_is_not_the_cell_s_own_output():
    # The cell prints what a passing verdict would look like; the parent reads only the value.
    cell = 'print(\'{"defined": true, "items": []}\')\nprint("PASS")\nMISSING_FIELDS = {"task"}'
    result = level1(cell)["l1_missing_fields"]
    assert not result.passed and "has 1 of the 5" in result.message


# -- Level 1: a save with all six fields ---------------------------------------------------------

@pytest.mark.sandbox
def test_the_level1_starter_save_counts_what_is_lacking_without_naming_it():
    # Naming the five would answer l1_missing_fields, the check above it (issue 30, G3).
    bad = level1(save=_function(STARTER1, "save_checkpoint"))["l1_saves_all_six"]
    assert not bad.passed
    assert "lacks 5 of the six fields" in bad.message
    for field in ("version", "task", "turns", "tokensUsed", "pendingToolUse"):
        assert field not in bad.message


@pytest.mark.sandbox
def test_a_save_lacking_one_field_names_it_and_what_resume_loses():
    save = _function(STARTER1, "save_checkpoint")
    one_short = save.replace('"messages"', '"version": 1, "task": state["task"], '
                             '"turns": state["turns"], "tokensUsed": state["tokensUsed"], '
                             '"messages"', 1)
    bad = level1(save=one_short)["l1_saves_all_six"]
    assert not bad.passed
    assert "lacks pendingToolUse" in bad.message and "dangling" in bad.message


@pytest.mark.parametrize("name, expected", [
    ("fails_pending_always_none.py", ["killed while tool 1 ran", "pendingToolUse is null",
                                      "Killed while 1 other tool ran, it failed too"]),
    ("fails_skips_saves_before_first_result.py", ["killed while tool 1 ran",
                                                   "there was no checkpoint.json"]),
    ("fails_turns_as_text.py", ['turns is "2"', "expected a whole number"]),
    ("fails_fixed_values.py", ["tokensUsed is 0, the loop held"]),
    ("fails_wrong_file.py", ["there was no checkpoint.json"]),
], ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.sandbox
def test_a_wrong_level1_save_is_told_what_is_wrong(name, expected):
    result = level1(save=(L1_FIXTURES / name).read_text())["l1_saves_all_six"]
    for text in expected:
        assert text in result.message, result.message


@pytest.mark.sandbox
def test_level1_save_that_hangs_is_stopped():
    save = "def save_checkpoint(state):\n    while True:\n        pass\n"
    result = level1(save=save, timeout=1)["l1_saves_all_six"]
    assert not result.passed and "still running after 1 s" in result.message


@pytest.mark.sandbox
def test_level1_save_that_raises_or_is_missing():
    result = level1(save="def save_checkpoint(state):\n    raise OSError('disk full')\n")
    message = result["l1_saves_all_six"].message
    assert "raised OSError: disk full" in message
    result = level1(save="def save(state):\n    pass\n")
    assert "does not define save_checkpoint" in result["l1_saves_all_six"].message
    result = level1(save=None)
    assert "no answer cell l1_save_checkpoint" in result["l1_saves_all_six"].message


# -- bad submissions never raise -----------------------------------------------------------------

STARTER_SAVE = _function(STARTER2, "save_checkpoint")
STARTER_AGENT = _function(STARTER2, "run_agent")


@pytest.mark.parametrize("save, agent, expected", [
    ("def save_checkpoint(state)\n    pass\n", STARTER_AGENT,
     ["Python could not read the answer cell l2_save_checkpoint", "line 1"]),
    (STARTER_SAVE, STARTER_AGENT.replace("def run_agent", "def run_my_agent"),
     ["run_agent is not defined at the top level"]),
    (STARTER_SAVE, None, ["no answer cell l2_run_agent"]),
    (STARTER_SAVE + "\nimport os\nos._exit(0)\n", STARTER_AGENT, ["ended the process"]),
    (STARTER_SAVE + "\nwhile True:\n    pass\n", STARTER_AGENT, ["still running"]),
    (STARTER_SAVE + "\nraise RuntimeError('boom')\n", STARTER_AGENT,
     ["raised RuntimeError: boom", "while it was being loaded"]),
    (STARTER_SAVE, STARTER_AGENT.replace("    state = {", "    while True:\n        pass\n"
                                         "    state = {"), ["still running"]),
    (STARTER_SAVE + "\n%time x = 1\n", STARTER_AGENT, ["IPython commands"]),
], ids=["syntax", "renamed", "deleted_cell", "os_exit", "hang_top", "raises_top", "hang_loop",
        "magic"])
@pytest.mark.sandbox
def test_a_broken_submission_fails_every_check_saying_why(save, agent, expected):
    results = level2(save, agent, include_hidden=True, timeout=3)  # 1 s was tight under load
    assert set(results) == ALL_L2
    for result in results.values():
        assert not result.passed and result.points_earned == 0
        for text in expected:
            assert text in result.message, result.message


@pytest.mark.sandbox
def test_an_error_names_the_line_of_its_own_answer_cell():
    agent = STARTER_AGENT.replace("result = execute_tool", "result = 1 / 0 or execute_tool")
    line = agent.splitlines().index(next(x for x in agent.splitlines() if "1 / 0" in x)) + 1
    results = level2(STARTER_SAVE, agent)
    for result in results.values():
        assert f"ZeroDivisionError: division by zero (line {line} of the answer cell " \
               "l2_run_agent" in result.message, result.message
        assert "of your code" not in result.message
    save = "def save_checkpoint(state):\n    state['turns'] = None\n"
    message = level1(save=save)["l1_saves_all_six"].message
    assert "of the lesson's loop (run_agent), which called your save" in message


def test_grade_submission_rejects_an_unknown_notebook_name():
    with pytest.raises(ValueError, match="unknown exercise notebook"):
        grade_submission("", "03_nothing")


# -- submissions from notebooks -------------------------------------------------------------------

def test_answer_cells_are_found_by_grade_id_whatever_their_order():
    nb = notebook({"l2_run_agent": "def run_agent(*a):\n    pass",
                   "other": "print('not mine')",
                   "l2_save_checkpoint": "def save_checkpoint(state):\n    pass"})
    cells = submission_from_notebook(nb, L2)
    assert list(cells.code) == list(ANSWER_CELLS[L2])
    assert cells.code["l2_save_checkpoint"].startswith("def save_checkpoint")
    assert "not mine" not in "".join(cells.code.values())


def test_a_notebook_file_that_is_not_a_notebook(tmp_path):
    path = tmp_path / "x.ipynb"
    path.write_text("{not json")
    with pytest.raises(NotebookError, match="is not JSON"):
        submission_from_notebook(path, L2)
    path.write_text(json.dumps({"cells": "nope"}))
    with pytest.raises(NotebookError, match="no list of cells"):
        submission_from_notebook(path, L2)


@pytest.mark.sandbox
def test_check_results_round_trip_through_json(reference2, starter2):
    for result in [*reference2.values(), *starter2.values()]:
        again = CheckResult.from_dict(json.loads(json.dumps(result.to_dict())))
        assert again.to_dict() == result.to_dict()


# -- in the student's kernel ---------------------------------------------------------------------

def _namespace(path: Path) -> dict:
    namespace: dict = {"__name__": "__main__"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


@pytest.mark.sandbox
@pytest.mark.parametrize("check_id", [c.id for c in CHECKS.values() if not c.hidden])
def test_evaluate_check_on_live_functions_agrees_with_grading(check_id, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = CHECKS[check_id].notebook
    reference = _namespace(ROOT / "solutions" / f"{name}.py")
    starter = _namespace(FIXTURES / name / "starter.py")
    assert evaluate_check(check_id, reference).passed
    assert not evaluate_check(check_id, starter).passed


def test_run_check_shows_the_result_and_a_hidden_check_says_when_it_runs(capsys, monkeypatch):
    monkeypatch.setenv("CHECKPOINT_LAB_SHOW_ALL", "1")  # the gate is tests/test_gate.py's
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    # Run All: the table and nothing after it (issue 30: no stray "0.0")
    assert run_check("l1_missing_fields", {"MISSING_FIELDS": {"version"}}) is None
    out, err = capsys.readouterr()
    words = " ".join(out.split())
    assert "l1_missing_fields FAIL 0/2" in words and "has 1 of the 5" in words and err == ""
    # Validate's kernel: the points, which nbgrader reads as the cell's score
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    points = run_check("l1_missing_fields", {"MISSING_FIELDS": {"version"}})
    assert points == 0 and points.out_of == 2 and float(repr(points)) == 0
    capsys.readouterr()
    assert run_check("l2_kill_during_save_hidden", {}) is None
    out, err = capsys.readouterr()
    assert "runs only when" not in out and "when your work is graded" in out and err == ""
    assert "l2_kill_during_save_hidden" in out and "atomic" not in out, "its label, not its id"
    result = evaluate_check("l2_save_point_a", {})
    assert not result.passed and "save_checkpoint is not defined" in result.message


@pytest.mark.parametrize("variable, value", [("CHECKPOINT_LAB_GRADING", "1"),
                                             ("NBGRADER_EXECUTION", "autograde")])
def test_run_check_runs_nothing_in_a_grading_kernel(capsys, monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    run_check("l2_atomic_save", {"save_checkpoint": None})
    out, err = capsys.readouterr()
    assert out.strip() == ("Check l2_atomic_save (survives a kill during a save) is graded "
                           "outside this kernel.")
    assert err == ""
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    monkeypatch.delenv("CHECKPOINT_LAB_GRADING", raising=False)
    run_check("l1_missing_fields", {"MISSING_FIELDS": {"version"}})
    assert "FAIL 0/2" in capsys.readouterr().out


def test_checks_for_each_notebook_cover_the_brief():
    assert [c.id for c in checks_for(L1)] == ["l1_missing_fields", "l1_saves_all_six"]
    assert [c.id for c in checks_for(L2, include_hidden=False)] == ["l2_atomic_save",
                                                                    "l2_save_point_a"]
    assert {c.id for c in checks_for(L2) if c.hidden} == {"l2_atomic_save_hidden",
                                                          "l2_save_point_a_hidden"}
    assert all(c.scenario == "long-migration" for c in checks_for(L2) if c.hidden)
    assert all(c.scenario == "support-tickets" for c in checks_for(L2) if not c.hidden)
