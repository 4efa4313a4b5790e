"""graders.judge.checkpoint_rules on hand-made observations: no processes, just the rules and their
messages."""

from __future__ import annotations

import json

import pytest

from graders.judge.checkpoint_rules import check
from graders.judge.recording import Observation, Verdict
from tests.traces import CALLS, SC, observe, state, torn_point

TOOLS = len(CALLS)


def verdict(point: str, checkpoint, ran: int, **fields) -> Verdict:
    return check(observe(point, checkpoint, ran, **fields), SC, point)


# -- what passes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("point", "checkpoint", "ran"),
    [
        ("killed_during_model_call_1", None, 0),
        ("killed_during_tool_1", state(0, pending=1), 1),
        ("killed_during_model_call_2", state(1), 1),
        ("killed_during_tool_2", state(1, pending=2), 2),
        ("killed_during_model_call_3", state(2), 2),
    ],
)
def test_the_states_a_correct_loop_leaves_pass(point, checkpoint, ran):
    v = verdict(point, checkpoint, ran)
    assert v.passed, v.message
    assert v.message.startswith("Killed while")


def test_a_finished_run_passes_and_says_what_the_file_holds():
    v = verdict("no_crash", state(TOOLS), TOOLS, ended="finished")
    assert v.passed
    assert "holds all 2 tool results" in v.message


def test_a_temp_file_left_after_a_finished_run_is_a_warning_not_a_failure():
    v = verdict("no_crash", state(TOOLS), TOOLS, ended="finished",
                files={"checkpoint.abc.tmp": 120})
    assert v.passed
    assert "checkpoint.abc.tmp was left" in v.message


def test_a_temp_file_outside_the_checkpoints_directory_is_advice():
    from graders.judge.recording import SaveRecord

    saves = [SaveRecord(n=1, phase="A", tool=1, completed=True,
                        renames=[["/tmp/tmpab12cd", "checkpoint.json"]])]
    v = verdict("no_crash", state(TOOLS), TOOLS, ended="finished", saves=saves)
    assert v.passed
    assert "(tmpab12cd) is made outside checkpoint.json's directory" in v.message
    assert "EXDEV" in v.message


def test_tokens_used_never_counted_is_advice_not_a_failure():
    v = verdict("no_crash", state(TOOLS, tokensUsed=0), TOOLS, ended="finished")
    assert v.passed
    assert "tokensUsed stayed 0" in v.message
    assert v.evidence["advice"]


# -- the protocol ------------------------------------------------------------------------------


def test_another_version_is_refused_as_resume_must():
    v = verdict("killed_during_model_call_2", state(1, version=2), 1)
    assert not v.passed
    assert "version 2" in v.message and "refuse" in v.message


def test_a_missing_field_is_named():
    data = state(1)
    del data["tokensUsed"]
    v = verdict("killed_during_model_call_2", data, 1)
    assert not v.passed
    assert "lacks tokensUsed" in v.message


def test_a_field_of_the_wrong_type_is_named():
    v = verdict("killed_during_model_call_2", state(1, turns="1"), 1)
    assert not v.passed
    assert "turns is" in v.message and "not an integer" in v.message


def test_the_task_must_be_the_scenarios():
    v = verdict("killed_during_model_call_2", state(1, task="something else"), 1)
    assert not v.passed
    assert v.evidence["problem"] == "task"


def test_turns_must_count_the_recorded_results():
    v = verdict("killed_during_model_call_2", state(1, turns=0), 1)
    assert not v.passed
    assert "turns is 0, but messages record 1 tool result" in v.message


def test_messages_the_api_would_refuse_are_named_with_the_rule():
    data = state(1)
    data["messages"] = data["messages"][:2]  # the tool_use without its tool_result
    data["messages"].append({"role": "user", "content": "hello"})
    v = verdict("killed_during_model_call_2", data, 1)
    assert not v.passed
    assert "not a conversation the API would accept" in v.message


def test_a_result_recorded_twice_is_named():
    data = state(1)
    data["messages"][2]["content"].append(dict(data["messages"][2]["content"][0]))
    v = verdict("killed_during_model_call_2", data, 1)
    assert not v.passed
    assert v.evidence["problem"] == "recorded_twice"
    assert "2 times" in v.message


def test_messages_that_depart_from_the_script_are_named():
    data = state(1)
    data["messages"][2]["content"][0]["content"] = "a result the tool never returned"
    v = verdict("killed_during_model_call_2", data, 1)
    assert not v.passed
    assert "messages[2]" in v.message


def test_what_the_rules_work_out_once_per_file_is_never_carried_to_another_file():
    # the conversation's facts are kept per distinct checkpoint.json (by its digest): two files
    # of the same length that differ in one byte of one result each get their own verdict, in
    # whatever order they are judged, again and again
    good = state(1)
    bad = state(1)
    text = bad["messages"][2]["content"][0]["content"]
    bad["messages"][2]["content"][0]["content"] = text[:-1] + ("x" if text[-1] != "x" else "y")
    assert len(json.dumps(good)) == len(json.dumps(bad))
    for _ in range(2):
        for data, passes in ((good, True), (bad, False), (good, True)):
            v = verdict("killed_during_model_call_2", data, 1)
            assert v.passed is passes, v.message
            assert passes or (v.evidence["problem"] == "script_mismatch"
                              and "messages[2]" in v.message)


def test_a_result_for_a_tool_that_never_ran_is_refused():
    v = verdict("killed_during_model_call_2", state(1), 0)
    assert not v.passed
    assert v.evidence["problem"] == "never_ran"


def test_a_result_on_record_before_the_tool_returned_is_refused():
    """Issue 16 item 7a: killed while tool 2 ran, checkpoint.json already records tool 2's
    result (the save wrote it before the tool had run): the record claims what has not
    happened."""
    claimed = state(2)
    v = verdict("killed_during_tool_2", claimed, 2)
    assert not v.passed and v.evidence["problem"] == "result_not_returned"
    assert "tool 2 (" in v.message and "had not returned yet" in v.message
    assert verdict("killed_during_model_call_3", claimed, 2).passed  # after it returned: fine


# -- the invariants tied to the crash point ----------------------------------------------------


def test_a_tool_in_flight_with_no_trace_is_missing_save_point_a():
    v = verdict("killed_during_tool_2", state(1), 2)
    assert not v.passed
    assert "left no trace" in v.message
    assert "nothing on disk covered the window" in v.message


def test_a_tool_in_flight_and_no_checkpoint_at_all_is_missing_save_point_a():
    v = verdict("killed_during_tool_1", None, 1)
    assert not v.passed
    assert "no checkpoint.json at all" in v.message
    assert "nothing on disk covered the window" in v.message


def test_no_checkpoint_is_fine_while_nothing_has_run():
    v = verdict("killed_during_model_call_1", None, 0)
    assert v.passed
    assert "nothing lost" in v.message


def test_pending_that_names_a_recorded_call_was_never_reset():
    data = state(1, pendingToolUse=dict(CALLS[0]))
    v = verdict("killed_during_model_call_2", data, 1)
    assert not v.passed
    assert "never reset to None" in v.message


def test_pending_without_input_is_named():
    data = state(1, pending=2)
    del data["pendingToolUse"]["input"]
    v = verdict("killed_during_tool_2", data, 2)
    assert not v.passed
    assert v.evidence["problem"] == "pending_without_input"
    assert "no input" in v.message


def test_pending_must_be_the_call_the_model_named():
    data = state(1, pending=2)
    data["pendingToolUse"]["input"] = {"something": "else"}
    v = verdict("killed_during_tool_2", data, 2)
    assert not v.passed
    assert v.evidence["problem"] == "pending_mismatch"


def test_pending_needs_the_assistant_message_that_named_it():
    data = state(1, pendingToolUse=dict(CALLS[1]))  # no assistant message appended
    v = verdict("killed_during_tool_2", data, 2)
    assert not v.passed
    assert v.evidence["problem"] == "pending_before_message"


def test_a_request_in_messages_with_no_pending_is_named():
    data = state(1, pending=2, pendingToolUse=None)
    v = verdict("killed_during_tool_2", data, 2)
    assert not v.passed
    assert v.evidence["problem"] == "pending_missing"


def test_a_finished_tool_still_pending_at_the_next_model_call_misses_save_point_b():
    v = verdict("killed_during_model_call_2", state(0, pending=1), 1)
    assert not v.passed
    assert "no save point B" in v.message


def test_a_finished_run_must_record_every_result():
    v = verdict("no_crash", state(1), 2, ended="finished")
    assert not v.passed
    assert v.evidence["problem"] in ("incomplete", "no_save_point_b")


def test_a_finished_run_without_any_checkpoint_fails():
    v = verdict("no_crash", None, 2, ended="finished")
    assert not v.passed


# -- torn writes: the file must be one complete save --------------------------------------------


def test_a_torn_in_place_write_says_how_many_bytes_were_on_disk():
    after = state(1)
    point = torn_point(state(0, pending=1), after, ["checkpoint.json"])
    half = point.after[: len(point.after) // 2]
    v = check(observe(point.id, half, 1), SC, point)
    assert not v.passed
    assert f"held {len(half):,} of its {len(point.after):,} bytes" in v.message
    assert "not valid JSON" in v.message
    assert "a torn write" in v.message
    assert v.evidence["bytes_on_disk"] == len(half)
    assert v.evidence["bytes_expected"] == len(point.after)


def test_a_torn_copy_over_is_named():
    point = torn_point(state(0, pending=1), state(1), ["checkpoint.json.tmp", "checkpoint.json"])
    v = check(observe(point.id, point.after[:100], 1), SC, point)
    assert not v.passed
    assert "copies it over checkpoint.json" in v.message


def test_the_previous_complete_save_passes_a_torn_write():
    point = torn_point(state(0, pending=1), state(1), ["checkpoint.123.tmp"])
    v = check(observe(point.id, point.before, 1), SC, point)
    assert v.passed, v.message
    assert "still held save 1, complete" in v.message


def test_a_complete_file_is_judged_by_what_resume_reads_not_by_its_bytes():
    point = torn_point(state(0, pending=1), state(1), ["checkpoint.123.tmp"])
    # another run's bytes (a different token count, as a timestamp would be) but a complete save
    v = check(observe(point.id, json.dumps(state(0, pending=1, tokensUsed=7)), 1), SC, point)
    assert v.passed, v.message
    # a complete file that resume cannot use fails for what is wrong in it
    broken = state(0, pending=1)
    broken["task"] = "another task"
    v = check(observe(point.id, json.dumps(broken), 1), SC, point)
    assert not v.passed and v.evidence["problem"] == "task"


# -- how the run ended -------------------------------------------------------------------------


def test_a_hang_is_reported_as_one():
    v = verdict("no_crash", None, 0, ended="hung", detail="still running after 5 s, so it was "
                "killed")
    assert not v.passed
    assert "still running after 5 s" in v.message


def test_an_exception_names_the_line_of_the_students_code():
    error = {"type": "KeyError", "message": "'stop_reason'", "line": 12,
             "code": "while response['stop_reason'] == 'tool_use':"}
    v = verdict("no_crash", None, 0, ended="raised", error=error)
    assert not v.passed
    assert "KeyError" in v.message and "line 12 of your code" in v.message
    assert "Traceback" not in v.message


def test_a_skipped_observation_gives_a_skipped_verdict():
    obs = Observation(SC.name, "no_crash", "no_crash", ended="skipped",
                      detail="The crash harness needs Linux or macOS")
    v = check(obs, SC, "no_crash")
    assert v.skipped and not v.passed
    assert "needs Linux or macOS" in v.message


# -- data --------------------------------------------------------------------------------------


def test_verdicts_and_observations_round_trip_through_json():
    obs = observe("killed_during_tool_2", state(1, pending=2), 2)
    v = check(obs, SC, "killed_during_tool_2")
    assert Verdict.from_dict(json.loads(json.dumps(v.to_dict()))) == v
    assert Observation.from_dict(json.loads(json.dumps(obs.to_dict()))) == obs


def test_check_accepts_a_scenario_name():
    v = check(observe("killed_during_model_call_2", state(1), 1), "support-tickets",
              "killed_during_model_call_2")
    assert v.passed


def test_every_problem_code_the_checker_can_give_is_documented():
    import re
    from pathlib import Path

    import graders.judge.check_state
    import graders.judge.checkpoint_rules
    import graders.judge.crash_check

    # the rules of one call per turn, and the ones they share with several calls in one turn
    source = "".join(Path(module.__file__).read_text() for module in (
        graders.judge.checkpoint_rules, graders.judge.crash_check, graders.judge.check_state))
    used = set(re.findall(r'fail\("([a-z_]+)"', source))
    used |= set(re.findall(r'return "([a-z_]+)", \(', source))
    used |= {"pending_incomplete", "not_loaded", "skipped"}
    known = set(graders.judge.checkpoint_rules.PROBLEMS)
    assert used <= known, used - known
    assert {"no_save_point_a", "save_point_a_after_tool"} <= used
