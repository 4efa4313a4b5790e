"""graders.checks: every check on the reference, the starter, the known submissions, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graders.checks import (
    ANSWER_CELLS,
    CHECKS,
    CheckResult,
    NotebookError,
    checks_for,
    counts_against,
    evaluate_check,
    grade_submission,
    run_check,
    submission_from_notebook,
)
from tests.conftest import ROOT

L1, L2, L3 = "01_incomplete_checkpoint", "02_two_latent_failures", "03_power_cut"
FIXTURES = ROOT / "tests" / "fixtures"
SUBMISSIONS = FIXTURES / "02_two_latent_failures"
L1_FIXTURES = FIXTURES / "01_incomplete_checkpoint"
LEVEL2_REFERENCE = ROOT / "solutions" / "02_two_latent_failures.py"
LEVEL2_STARTER = SUBMISSIONS / "starter.py"
LEVEL1_REFERENCE = ROOT / "solutions" / "01_incomplete_checkpoint.py"
LEVEL1_STARTER = L1_FIXTURES / "starter.py"
LEVEL3_REFERENCE = ROOT / "solutions" / "03_power_cut.py"
LEVEL3_STARTER = FIXTURES / "03_power_cut" / "starter.py"
L3_CELL = "# --- answer cell l3_save_checkpoint ---\n"
L4 = "04_parallel_tool_calls"
L4_CELL = "# --- answer cell l4_run_agent ---\n"
LEVEL4_REFERENCE = ROOT / "solutions" / "04_parallel_tool_calls.py"
LEVEL4_STARTER = FIXTURES / "04_parallel_tool_calls" / "starter.py"
FIX_CHECKS = [c.id for c in CHECKS.values()]
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
def reference_results():
    return {L1: grade_submission(LEVEL1_REFERENCE.read_text(), L1),
            L2: grade_submission(LEVEL2_REFERENCE.read_text(), L2),
            L3: grade_submission(L3_CELL + LEVEL3_REFERENCE.read_text(), L3),
            L4: grade_submission(L4_CELL + LEVEL4_REFERENCE.read_text(), L4)}


@pytest.fixture(scope="module")
def starter_results():
    return {L1: grade_submission(LEVEL1_STARTER.read_text(), L1),
            L2: grade_submission(LEVEL2_STARTER.read_text(), L2),
            L3: grade_submission(L3_CELL + LEVEL3_STARTER.read_text(), L3),
            L4: grade_submission(L4_CELL + LEVEL4_STARTER.read_text(), L4)}


# -- both directions -------------------------------------------------------------------------------

@pytest.mark.parametrize("check_id", FIX_CHECKS)
def test_every_check_passes_on_the_reference(reference_results, check_id):
    result = reference_results[CHECKS[check_id].notebook][check_id]
    assert result.passed, result.message
    assert result.points_earned == CHECKS[check_id].points


@pytest.mark.parametrize("check_id", FIX_CHECKS)
def test_every_check_fails_on_the_starter(starter_results, check_id):
    result = starter_results[CHECKS[check_id].notebook][check_id]
    assert not result.passed, (
        f"the starter already passes {check_id}: the check cannot tell a fix from no fix "
        f"({result.message})")
    assert result.points_earned == 0


def test_the_starter_runs_as_it_is_and_fails_only_under_a_crash(starter_results):
    for check_id, result in starter_results[L2].items():
        no_crash = [v for v in result.verdicts if v.point == "no_crash"]
        assert no_crash and no_crash[0].passed, f"{check_id}: {no_crash}"
        assert "did not get through" not in result.message


def test_reference_passes_say_what_was_done(reference_results):
    message = reference_results[L2]["l2_atomic_save"].message
    assert "support-tickets" in message and "crash point" in message
    hidden = reference_results[L2]["l2_save_point_a_hidden"]
    assert "long-migration" in hidden.message
    assert {v.scenario for v in hidden.verdicts} == {"long-migration"}
    assert {v.kind for v in hidden.verdicts} == {"no_crash", "killed_during_tool",
                                                 "killed_during_model_call"}


# -- partial credit: the known submissions ------------------------------------------------------

EXPECTED = {
    "starter.py": set(),
    "no_save_point_a.py": ATOMIC,
    "in_place_write.py": SAVE_POINT_A,
    "copy_over.py": SAVE_POINT_A,
    "delete_then_rename.py": SAVE_POINT_A,
    "pending_never_reset.py": ATOMIC,
    "pending_without_input.py": ATOMIC,
    "save_point_a_after_tool.py": ATOMIC,
    "temp_never_renamed.py": set(),
}


@pytest.mark.parametrize("name", sorted(EXPECTED) + sorted(
    p.name for p in SUBMISSIONS.glob("passes_*.py")))
def test_each_known_submission_earns_what_it_fixed(name):
    path = SUBMISSIONS / name
    assert path.exists(), f"the fixture {name} is gone"
    results = grade_submission(path.read_text(), L2)
    want = ALL_L2 if name.startswith("passes_") else EXPECTED[name]
    got = passed(results)
    assert got == want, {k: r.message for k, r in results.items() if k in got ^ want}
    earned = sum(r.points_earned for r in results.values())
    assert earned == sum(CHECKS[c].points for c in want)


def test_a_fix_of_only_the_write_earns_the_atomic_save_on_its_own():
    results = grade_submission((SUBMISSIONS / "no_save_point_a.py").read_text(), L2,
                               include_hidden=False)
    assert results["l2_atomic_save"].passed
    assert "left no trace" in results["l2_save_point_a"].message
    torn = [v for v in results["l2_atomic_save"].verdicts if v.kind == "torn_write"]
    assert torn and all(v.passed for v in torn), "a kill inside a save judges only the save"
    assert not any(counts_against("l2_atomic_save", v) for v in torn)


def test_in_place_write_is_told_its_write_is_torn():
    results = grade_submission((SUBMISSIONS / "in_place_write.py").read_text(), L2,
                               include_hidden=False)
    message = results["l2_atomic_save"].message
    assert "torn_write_save_1" in message and "not valid JSON" in message
    assert "a torn write" in message
    # the symptom and the concept, never the fix: that is in the opt-in hints
    for giveaway in ("os.replace", "rename it", "temp file and"):
        assert giveaway not in message


# -- the verdict cannot be forged by the submission -------------------------------------------

@pytest.mark.parametrize("cheat", [
    "import json\njson.loads = lambda *a, **k: {}\njson.load = lambda *a, **k: {}\n",
    "import graders.checks, graders.judge.checkpoint_rules\n"
    "graders.checks.counts_against = lambda *a, **k: False\n"
    "graders.judge.checkpoint_rules.check = lambda *a, **k: None\n",
    "import builtins\nbuiltins.AssertionError = Exception\n",
    "import fake_llm\nfake_llm.load_scenario = None\n",
    "import graders.inprocess.recorder as c\nc._setrlimit = lambda *a, **k: None\n",
    "import graders.inprocess.recorder as c\nc._kill = lambda *a, **k: None\n",
    "import graders.inprocess.recorder as c\nc.Recorder.arm = lambda self, name: None\n"
    "c.Recorder.die = lambda self, why: None\n",
    "import signal\n_signal = signal.signal\nsignal.signal = lambda s, h: _signal(s, "
    "signal.SIG_IGN if s == signal.SIGXFSZ else h)\n",
], ids=["json", "graders", "assertion", "fake_llm", "harness_rlimit", "harness_kill",
        "harness_recorder", "sigxfsz"])
def test_a_starter_that_patches_things_earns_what_its_code_earns(cheat):
    source = LEVEL2_STARTER.read_text() + "\n\n" + cheat
    results = grade_submission(source, L2, include_hidden=False)
    assert not passed(results), {k: r.message for k, r in results.items()}
    assert not any("fault in the grader" in r.message for r in results.values())


def test_the_problems_each_fix_tolerates_are_the_checker_s_own():
    from graders.checks.base import SAVE_POINT_A_PROBLEMS, WRITE_PROBLEMS
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
], ids=["four", "messages", "misspelt", "unknown", "string", "empty", "numbers", "undefined",
        "raises", "syntax", "os_exit", "imports_the_grader"])
def test_wrong_missing_fields_fail_saying_why(answer, expected):
    """An answer cell runs in the sandbox, where the grader's own package is not."""
    result = level1(answer)["l1_missing_fields"]
    assert not result.passed and result.points_earned == 0
    for text in expected:
        assert text in result.message, result.message


def test_a_missing_fields_cell_that_hangs_fails_in_time():
    result = level1("while True:\n    pass", timeout=1)["l1_missing_fields"]
    assert not result.passed
    assert "still running after 1 s" in result.message


def test_the_missing_fields_decision_is_not_the_cell_s_own_output():
    # The cell prints what a passing verdict would look like; the parent reads only the value.
    cell = 'print(\'{"defined": true, "items": []}\')\nprint("PASS")\nMISSING_FIELDS = {"task"}'
    result = level1(cell)["l1_missing_fields"]
    assert not result.passed and "has 1 of the 5" in result.message


# -- Level 1: a save with all six fields ---------------------------------------------------------

def test_level1_reference_save_passes_and_the_starter_save_names_what_is_lacking():
    good = level1(save=_function(LEVEL1_REFERENCE, "save_checkpoint"))["l1_saves_all_six"]
    assert good.passed, good.message
    bad = level1(save=_function(LEVEL1_STARTER, "save_checkpoint"))["l1_saves_all_six"]
    assert not bad.passed
    assert "lacks version, task, turns, tokensUsed, pendingToolUse" in bad.message


@pytest.mark.parametrize("name, expected", [
    ("passes_whole_state.py", None),
    ("fails_pending_always_none.py", ["killed while tool 1 ran", "pendingToolUse is null",
                                      "Killed while 1 other tool ran, it failed too"]),
    ("fails_skips_saves_before_first_result.py", ["killed while tool 1 ran",
                                                   "there was no checkpoint.json"]),
    ("fails_turns_as_text.py", ['turns is "2"', "expected a whole number"]),
    ("fails_fixed_values.py", ["tokensUsed is 0, the loop held"]),
    ("fails_wrong_file.py", ["there was no checkpoint.json"]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_level1_saves(name, expected):
    result = level1(save=(L1_FIXTURES / name).read_text())["l1_saves_all_six"]
    if expected is None:
        assert result.passed, result.message
        return
    assert not result.passed
    for text in expected:
        assert text in result.message, result.message


def test_level1_save_that_hangs_is_stopped():
    save = "def save_checkpoint(state):\n    while True:\n        pass\n"
    result = level1(save=save, timeout=1)["l1_saves_all_six"]
    assert not result.passed and "still running after 1 s" in result.message


def test_level1_save_that_raises_or_is_missing():
    result = level1(save="def save_checkpoint(state):\n    raise OSError('disk full')\n")
    message = result["l1_saves_all_six"].message
    assert "raised OSError: disk full" in message
    result = level1(save="def save(state):\n    pass\n")
    assert "does not define save_checkpoint" in result["l1_saves_all_six"].message
    result = level1(save=None)
    assert "no answer cell l1_save_checkpoint" in result["l1_saves_all_six"].message


# -- bad submissions never raise -----------------------------------------------------------------

STARTER_SAVE = _function(LEVEL2_STARTER, "save_checkpoint")
STARTER_AGENT = _function(LEVEL2_STARTER, "run_agent")


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
def test_a_broken_submission_fails_every_check_saying_why(save, agent, expected):
    results = level2(save, agent, include_hidden=True, timeout=3)  # 1 s was tight under load
    assert set(results) == ALL_L2
    for result in results.values():
        assert not result.passed and result.points_earned == 0
        for text in expected:
            assert text in result.message, result.message


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


def test_check_results_round_trip_through_json(reference_results):
    for result in [*reference_results[L1].values(), *reference_results[L2].values()]:
        again = CheckResult.from_dict(json.loads(json.dumps(result.to_dict())))
        assert again.to_dict() == result.to_dict()


# -- in the student's kernel ---------------------------------------------------------------------

def _namespace(path: Path) -> dict:
    namespace: dict = {"__name__": "__main__"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


@pytest.mark.parametrize("check_id", [c.id for c in CHECKS.values() if not c.hidden])
def test_evaluate_check_on_live_functions_agrees_with_grading(check_id, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    level = CHECKS[check_id].notebook
    reference = _namespace({L1: LEVEL1_REFERENCE, L2: LEVEL2_REFERENCE,
                            L3: LEVEL3_REFERENCE, L4: LEVEL4_REFERENCE}[level])
    starter = _namespace({L1: LEVEL1_STARTER, L2: LEVEL2_STARTER, L3: LEVEL3_STARTER,
                          L4: LEVEL4_STARTER}[level])
    assert evaluate_check(check_id, reference).passed
    assert not evaluate_check(check_id, starter).passed


def test_run_check_shows_the_result_and_a_hidden_check_says_when_it_runs(capsys):
    points = run_check("l1_missing_fields", {"MISSING_FIELDS": {"version"}})
    assert points == 0 and points.out_of == 2 and "0 of 2 points" in points._repr_html_()
    out, err = capsys.readouterr()
    words = " ".join(out.split())
    assert "l1_missing_fields FAIL 0/2" in words and "has 1 of the 5" in words and err == ""
    assert run_check("l2_atomic_save_hidden", {}) is None
    out, err = capsys.readouterr()
    assert "runs only when" not in out and "when your work is graded" in out and err == ""
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
