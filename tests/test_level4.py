"""Level 4, several tool calls in one turn: what the checks say, graded through the sandbox as
grading does.

Each fixture in tests/fixtures/04_parallel_tool_calls/ is a whole submission (the given save and
a run_agent); what it earns, check by check, is the folder's ``expected.json``, graded by
``checkpoint-lab dev check``. Here: the fixes of the starter form a ladder in that table (each
earns its own check), and what the messages say.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from graders.checks import CHECKS, NOTEBOOKS, grade_submission
from graders.cli.dev import truth_of

ROOT = Path(__file__).resolve().parents[1]
L4 = "04_parallel_tool_calls"
FIXTURE_DIR = f"tests/fixtures/{L4}"
SUBMISSIONS = ROOT / FIXTURE_DIR
ALL = {"no_call_lost", "results_kept", "one_result_message"}

needs_sandbox = pytest.mark.usefixtures("sandbox_here")


@cache
def level4(path: str, include_hidden: bool = True):
    code = (ROOT / path).read_text()
    return grade_submission(f"# --- answer cell l4_run_agent ---\n{code}", L4,
                            include_hidden=include_hidden)


def passed_in(row: dict[str, bool]) -> set[str]:
    """The checks a row of expected.json passes (ids without ``l4_`` and ``_hidden``)."""
    return {cid.removeprefix("l4_").removesuffix("_hidden") for cid, ok in row.items() if ok}


def test_the_six_checks_are_registered_with_their_points():
    assert NOTEBOOKS[L4] == "Level 4: several tool calls in one turn"
    ids = {c.id: (c.points, c.hidden, c.scenario) for c in CHECKS.values() if c.notebook == L4}
    assert ids == {
        **{f"l4_{name}": (3, False, "incident-triage") for name in ALL},
        **{f"l4_{name}_hidden": (2, True, "release-audit") for name in ALL},
    }


@needs_sandbox
@pytest.mark.sandbox
def test_the_starter_is_told_which_calls_it_lost():
    message = level4(f"{FIXTURE_DIR}/starter.py", include_hidden=False)["l4_no_call_lost"].message
    assert "tool_result_missing" in message and "3 tools at once" in message


def test_each_fix_of_the_starter_earns_its_own_check():
    """Starter -> every block, one message (pending still one call) -> pending a list ->
    results kept: in the fixtures' table, each step adds exactly one check and its points."""
    truth = truth_of(SUBMISSIONS)
    steps = ["starter", "fails_no_call_lost_pending_single_not_list",
             "fails_results_kept_lost_on_crash", "passes_all"]
    earned = [sum(CHECKS[c].points for c, ok in truth[step].items() if ok) for step in steps]
    gained = [passed_in(truth[b]) - passed_in(truth[a])
              for a, b in zip(steps, steps[1:], strict=False)]
    assert gained == [{"one_result_message"}, {"no_call_lost"}, {"results_kept"}]
    assert earned == [0, 5, 10, 15]


@needs_sandbox
@pytest.mark.sandbox
def test_the_messages_name_the_moment_and_what_resume_runs_into_never_the_fix():
    lost = level4(f"{FIXTURE_DIR}/fails_results_kept_lost_on_crash.py",
                  include_hidden=False)["l4_results_kept"].message
    assert "At killed_during_tool_2" in lost and "tool 1 (fetch_logs) had returned" in lost
    assert "run tool 1 again" in lost
    split = level4(f"{FIXTURE_DIR}/fails_one_result_message_split_across_messages.py",
                   include_hidden=False)["l4_one_result_message"].message
    assert "tool_results_split" in split and "400" in split
    single = level4(f"{FIXTURE_DIR}/fails_no_call_lost_pending_single_not_list.py",
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
        "model call 1 asks for 3 tools", "after save point A: every call listed",
        "tool 1 (fetch_logs) runs", "after a save: tool 1's result kept",
        "tool 2 (fetch_metrics) runs", "after a save: tool 2's result kept",
        "tool 3 (list_deploys) runs",
        "tool 3 returned, its result in memory only (save point B being written)",
        "after save point B: one result message, pendingToolUse null",
        "model call 2 (after the turn)"]
    while_3 = moments[6]
    assert [("result" in e) for e in while_3.checkpoint["pendingToolUse"]] == [True, True, False]
    assert "reuses the result of tools 1 and 2" in while_3.resume
    assert "reconciles tool 3" in while_3.resume
    # Issue 30, F9: the moment between tool 3's return and save point B, where it would rerun.
    assert "reconciles tool 3" in moments[7].resume
    assert moments[7].checkpoint == while_3.checkpoint
    assert "pendingToolUse null" in moments[8].on_disk
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
