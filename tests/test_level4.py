"""Level 4, several tool calls in one turn: the checks graded through the sandbox, as grading does.

Each fixture in tests/fixtures/04_parallel_tool_calls/ is a whole submission (the given save and
a run_agent); it must earn exactly what its name says, the hidden checks (release-audit) must
agree with their visible twins (incident-triage), and each fix of the starter earns its own check.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

from graders.checks import CHECKS, NOTEBOOKS, grade_submission
from graders.sandbox import sandbox_problem

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "tests" / "fixtures" / "04_parallel_tool_calls"
L4 = "04_parallel_tool_calls"
ALL = {"no_call_lost", "results_kept", "one_result_message"}

#: What each submission passes (check ids without ``l4_`` and ``_hidden``).
FIXTURES = {
    "solutions/04_parallel_tool_calls.py": ALL,
    "tests/fixtures/04_parallel_tool_calls/passes_all.py": ALL,
    "tests/fixtures/04_parallel_tool_calls/starter.py": set(),
    "tests/fixtures/04_parallel_tool_calls/pending_single_not_list.py": {"one_result_message"},
    "tests/fixtures/04_parallel_tool_calls/results_lost_on_crash.py": {"no_call_lost",
                                                                   "one_result_message"},
    "tests/fixtures/04_parallel_tool_calls/pending_after_first_tool.py": {"results_kept",
                                                                      "one_result_message"},
    "tests/fixtures/04_parallel_tool_calls/pending_never_reset.py": {"results_kept",
                                                                 "one_result_message"},
    "tests/fixtures/04_parallel_tool_calls/results_split_across_messages.py": {"no_call_lost",
                                                                           "results_kept"},
    "tests/fixtures/04_parallel_tool_calls/passes_results_in_another_order.py": ALL,
}

needs_sandbox = pytest.mark.skipif(bool(sandbox_problem()), reason=str(sandbox_problem()))
if sandbox_problem() and os.environ.get("CI") == "true":
    raise RuntimeError(f"CI needs the sandbox: {sandbox_problem()}")


@cache
def level4(path: str, include_hidden: bool = True):
    code = (ROOT / path).read_text()
    return grade_submission(f"# --- answer cell l4_run_agent ---\n{code}", L4,
                            include_hidden=include_hidden)


def passed(results) -> set[str]:
    return {cid.removeprefix("l4_").removesuffix("_hidden") for cid, r in results.items()
            if r.passed}


def test_every_level4_fixture_is_listed():
    on_disk = {f"tests/fixtures/04_parallel_tool_calls/{p.name}" for p in SUBMISSIONS.glob("*.py")}
    assert on_disk == {p for p in FIXTURES if p.startswith("tests/")}


def test_the_six_checks_are_registered_with_their_points():
    assert NOTEBOOKS[L4] == "Level 4: several tool calls in one turn"
    ids = {c.id: (c.points, c.hidden, c.scenario) for c in CHECKS.values() if c.notebook == L4}
    assert ids == {
        **{f"l4_{name}": (3, False, "incident-triage") for name in ALL},
        **{f"l4_{name}_hidden": (2, True, "release-audit") for name in ALL},
    }


@needs_sandbox
@pytest.mark.sandbox
@pytest.mark.parametrize("path", sorted(FIXTURES), ids=lambda p: Path(p).stem)
def test_each_fixture_earns_what_its_name_says(path):
    results = level4(path)
    assert passed(results) == FIXTURES[path], {k: r.message for k, r in results.items()}
    for cid, result in results.items():  # the hidden check agrees with its visible twin
        assert result.passed == results[cid.removesuffix("_hidden")].passed, cid


@needs_sandbox
@pytest.mark.sandbox
def test_both_directions_for_each_check_reference_passes_starter_fails():
    reference = level4("solutions/04_parallel_tool_calls.py")
    starter = level4("tests/fixtures/04_parallel_tool_calls/starter.py")
    for cid in reference:
        assert reference[cid].passed and reference[cid].points_earned == CHECKS[cid].points
        assert not starter[cid].passed and starter[cid].points_earned == 0
    message = starter["l4_no_call_lost"].message
    assert "tool_result_missing" in message and "3 tools at once" in message


@needs_sandbox
@pytest.mark.sandbox
def test_each_fix_of_the_starter_earns_its_own_check():
    """Starter -> every block, one message (pending still one call) -> pending a list ->
    results kept: each step adds exactly one check's points."""
    steps = ["tests/fixtures/04_parallel_tool_calls/starter.py",
             "tests/fixtures/04_parallel_tool_calls/pending_single_not_list.py",
             "tests/fixtures/04_parallel_tool_calls/results_lost_on_crash.py",
             "solutions/04_parallel_tool_calls.py"]
    earned = [sum(r.points_earned for r in level4(step).values()) for step in steps]
    gained = [passed(level4(b)) - passed(level4(a)) for a, b in zip(steps, steps[1:],
                                                                    strict=False)]
    assert gained == [{"one_result_message"}, {"no_call_lost"}, {"results_kept"}]
    assert earned == [0, 5, 10, 15]


@needs_sandbox
@pytest.mark.sandbox
def test_the_messages_name_the_moment_and_what_resume_runs_into_never_the_fix():
    lost = level4("tests/fixtures/04_parallel_tool_calls/results_lost_on_crash.py",
                  include_hidden=False)["l4_results_kept"].message
    assert "At killed_during_tool_2" in lost and "tool 1 (fetch_logs) had returned" in lost
    assert "run tool 1 again" in lost
    split = level4("tests/fixtures/04_parallel_tool_calls/results_split_across_messages.py",
                   include_hidden=False)["l4_one_result_message"].message
    assert "tool_results_split" in split and "400" in split
    single = level4("tests/fixtures/04_parallel_tool_calls/pending_single_not_list.py",
                    include_hidden=False)["l4_no_call_lost"].message
    assert "one call" in single and "resume reads pendingToolUse as the list" in single
    for message in (lost, split, single):
        assert "hint()" in message
        assert "save_checkpoint(state)" not in message and '["result"] =' not in message


def test_a_missing_or_broken_answer_cell_fails_every_check_with_a_message():
    results = grade_submission("# --- answer cell l4_run_agent ---\ndef run_agent(:\n", L4)
    assert all(not r.passed and "Python could not read the answer cell l4_run_agent" in r.message
               for r in results.values())
    results = grade_submission("# --- answer cell l4_run_agent (missing) ---\n", L4)
    assert all("no answer cell l4_run_agent" in r.message for r in results.values())


def test_the_lesson_view_walks_one_multi_call_turn_from_the_reference():
    from graders.teaching.parallel_turn import show_turn, turn_moments, turn_table

    moments = turn_moments("incident-triage", 1)
    assert [m.label for m in moments] == [
        "model call 1 asks for 3 tools", "save point A: every call listed",
        "tool 1 (fetch_logs) runs", "save: tool 1's result kept",
        "tool 2 (fetch_metrics) runs", "save: tool 2's result kept",
        "tool 3 (list_deploys) runs",
        "save point B: one result message, pendingToolUse null",
        "model call 2 (after the turn)"]
    while_3 = moments[6]
    assert [("result" in e) for e in while_3.checkpoint["pendingToolUse"]] == [True, True, False]
    assert "reuses the result of tools 1 and 2" in while_3.resume
    assert "reconciles tool 3" in while_3.resume
    assert "pendingToolUse null" in moments[7].on_disk
    text = repr(turn_table())
    assert text.startswith("One turn with several tool calls (incident-triage, turn 1):")
    assert "<th scope='col'>killed here, resume</th>" in turn_table()._repr_html_()
    view = show_turn()
    view.slider.value = 6
    assert "tool 3 (list_deploys) runs" in view.pane.value and "reconciles tool 3" in (
        view.pane.value)
    assert view._repr_mimebundle_()[0]["text/plain"] == text
    with pytest.raises(ValueError, match="tool turns 1 to 3"):
        turn_moments("incident-triage", 4)


def test_a_hidden_check_in_the_notebook_names_the_visible_scenario(capsys):
    from graders.checks import run_check

    assert run_check("l4_results_kept_hidden", {}) is None
    out = " ".join(capsys.readouterr().out.split())
    assert "on release-audit" in out and "how your code does on incident-triage" in out
