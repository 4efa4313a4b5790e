"""What a student reads when a check fails: one row per distinct cause, then the crash points
where it happened (issue 18, "Check output"); and Level 2's findings held back until part 1 is
written (issue 18.2, issue 30 G1/G2)."""

from __future__ import annotations

import pytest

from graders.checks import CHECKS, CheckResult, evaluate_check, grade_submission
from graders.checks.table import MAX_POINT_ROWS, ResultTable
from graders.judge.recording import Verdict
from graders.teaching.variants import load_function
from tests.conftest import ROOT

needs_sandbox = pytest.mark.usefixtures("sandbox_here")


def _verdict(point: str, message: str, problems=("in_place_write",)) -> Verdict:
    return Verdict("support-tickets", point, point.rsplit("_save_", 1)[0], False, message,
                   {"problems": list(problems)})


def test_one_row_per_cause_then_the_crash_points_where_it_happened():
    verdicts = [_verdict("torn_write_save_1", "torn in place, save 1"),
                _verdict("torn_write_save_2", "torn in place, save 2"),
                _verdict("killed_before_rename_save_2", "gone before the rename",
                         ("deleted_before_rename",))]
    table = ResultTable([CheckResult("l2_atomic_save", False, 0, "m", verdicts, "3 of 3.")])
    rows = table.rows()
    assert [r.name for r in rows] == ["l2_kill_during_save", "torn_write_save_1",
                                      "killed_before_rename_save_2"]
    assert rows[1].message == ("torn in place, save 1 The same at 1 more crash point: "
                               "torn_write_save_2.")
    assert "save 2" not in rows[2].message and "The same" not in rows[2].message


def test_a_cause_shown_under_one_check_is_named_not_repeated_under_the_next():
    error = "Your run_agent raised FakeModelError: [tool_result_missing] " + "x" * 400
    first = CheckResult("l4_no_call_lost", False, 0, "m",
                        [_verdict("no_crash", error, ())], summary="did not get through")
    second = CheckResult("l4_results_kept", False, 0, "m",
                         [_verdict("no_crash", error, ())], summary="did not get through")
    text = str(ResultTable([first, second]))
    assert text.count("FakeModelError") == 1
    assert "The same as under l4_no_call_lost (no_crash), above." in text


def test_one_copy_of_an_error_across_the_check_cells_of_one_kernel():
    """Issue 30: each check cell printed the same FakeModelError; the later cells (and the
    self-check) refer to the cell that showed it, and a cell run again shows it in full."""
    error = ("Your run_agent raised FakeModelError: [tool_result_missing] messages[1] asked for "
             "fetch_logs (id toolu_01AAA), fetch_metrics (id toolu_01BBB)")
    results = {cid: CheckResult(cid, False, 0, "m", [_verdict("no_crash", error, ())],
                                summary="did not get through")
               for cid in ("l4_no_call_lost", "l4_results_kept")}
    seen: dict = {}
    first = str(ResultTable([results["l4_no_call_lost"]], seen=seen, cell="l4_no_call_lost"))
    second = str(ResultTable([results["l4_results_kept"]], seen=seen, cell="l4_results_kept"))
    again = str(ResultTable([results["l4_no_call_lost"]], seen=seen, cell="l4_no_call_lost"))
    assert "FakeModelError" in first and "FakeModelError" in again
    assert "FakeModelError" not in second and "l4_no_call_lost (no_crash), above" in second
    assert "toolu_01AAA" not in first and "fetch_logs, fetch_metrics" in first, "names suffice"
    whole = str(ResultTable(list(results.values()), hidden=[CHECKS["l4_no_call_lost_hidden"]],
                            seen=dict(seen), cell="self_check"))
    assert "FakeModelError" not in whole and "l4_no_call_lost_hidden" not in whole
    assert whole.count("in the check's own cell, above") == 2
    alone = str(ResultTable(list(results.values()), seen={}, cell="self_check"))
    assert alone.count("FakeModelError") == 1, "a self-check run alone shows everything once"


def test_an_id_stays_where_one_name_has_two():
    from graders.checks.table import short_ids

    assert short_ids("a (id toolu_1), b (id toolu_2)") == "a, b"
    assert short_ids("a (id toolu_1), a (id toolu_2)") == "a (id toolu_1), a (id toolu_2)"


def test_at_most_a_few_causes_under_one_check():
    verdicts = [_verdict(f"torn_write_save_{i}", f"cause {i}", (f"p{i}",))
                for i in range(1, MAX_POINT_ROWS + 4)]
    rows = ResultTable([CheckResult("l2_atomic_save", False, 0, "m", verdicts, "s")]).rows()
    assert len(rows) == 1 + MAX_POINT_ROWS + 1
    assert rows[-1].message.startswith("3 more crash points failed, for 3 other causes")


@needs_sandbox
@pytest.mark.sandbox
def test_level_4s_starter_shows_its_error_once_and_each_cause_once():
    starter = (ROOT / "tests/fixtures/04_parallel_tool_calls/starter.py").read_text()
    results = grade_submission(f"# --- answer cell l4_run_agent ---\n{starter}",
                               "04_parallel_tool_calls", include_hidden=False)
    text = str(ResultTable(results.values()))
    assert text.count("Your run_agent raised FakeModelError") == 1, text
    assert "at all: Your" not in " ".join(r.message for r in results.values())
    assert len(text.splitlines()) < 60, len(text.splitlines())


@needs_sandbox
@pytest.mark.sandbox
def test_level_2s_starter_names_each_cause_once():
    starter = (ROOT / "tests/fixtures/02_two_latent_failures/starter.py").read_text()
    results = grade_submission(starter, "02_two_latent_failures", include_hidden=False)
    rows = ResultTable(results.values()).rows()
    assert [r.name for r in rows] == ["l2_kill_during_save", "torn_write_save_1",
                                      "disk_full_after_tool_1", "l2_kill_during_tool",
                                      "killed_during_tool_1"]
    assert rows[1].message.endswith("The same at 1 more crash point: torn_write_save_2.")


# -- Level 2: part 1 first (the gate itself: tests/test_gate.py) -------------------------------

@pytest.fixture()
def starter(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no saved notebook here: the gate is closed
    monkeypatch.delenv("CHECKPOINT_LAB_NOTEBOOK", raising=False)
    monkeypatch.delenv("CHECKPOINT_LAB_SHOW_ALL", raising=False)
    return {"run_agent": load_function("starter", "run_agent"),
            "save_checkpoint": load_function("starter", "save_checkpoint")}


#: What the checks would give away before part 1 is written: the diagnosis, in the judge's words.
DIAGNOSIS = ("torn write", "in place", "save point a", "pendingtooluse", "no trace", "rename",
             "json.load", "torn_write", "killed_during_tool")


@pytest.mark.sandbox
@pytest.mark.parametrize("check_id", ["l2_atomic_save", "l2_save_point_a"])
def test_level_2s_checks_hold_their_findings_back_until_part_1_is_written(starter, check_id,
                                                                          tmp_path):
    from tests.test_gate import save_with_answer

    held = evaluate_check(check_id, starter)
    assert not held.passed and held.points_earned == 0
    shown = " ".join(str(held).lower().split())
    assert "it ran and did not pass" in shown and "findings appear once" in shown
    assert not [w for w in DIAGNOSIS if w in shown], shown
    save_with_answer("02_two_latent_failures", tmp_path)
    told = " ".join(str(evaluate_check(check_id, starter)).lower().split())
    assert "findings appear once" not in told
    assert any(w in told for w in DIAGNOSIS), told


def test_the_button_under_part_1_reads_the_saved_notebook_and_unlocks_nothing_itself(
        starter, tmp_path):
    from graders.teaching.predict import lock_answer
    from tests.test_gate import save_with_answer

    lock = lock_answer("l2_name_the_failures")
    assert "cl-answer-lock" in lock.lock._dom_classes and not lock.is_open()
    lock.lock.click()
    assert not lock.is_open() and "Not yet" in lock.status.value
    save_with_answer("02_two_latent_failures", tmp_path)
    lock.lock.click()
    assert lock.is_open() and "Your saved answer is in" in lock.status.value
    with pytest.raises(KeyError, match="no check waits for"):
        lock_answer("l1_missing_fields")


def test_every_level_waits_for_its_own_answer(starter):
    from graders.checks.gate import GATES, gated

    assert dict(GATES) == {"01_incomplete_checkpoint": "l1_where_resume_falls_over",
                           "02_two_latent_failures": "l2_name_the_failures",
                           "03_power_cut": "l3_predict_table",
                           "04_parallel_tool_calls": "l4_why_keep_results"}
    assert all(gated(c, None) for c in CHECKS)
