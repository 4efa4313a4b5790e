"""graders.judge.parallel_rules, several tool calls in one turn: crash states built here, judged
against the ledger (no sandbox: each Observation is what a kill at that point would leave on
disk)."""

from __future__ import annotations

import copy
import importlib.util
import json

import pytest

from fake_llm import load_scenario
from graders.judge.parallel_rules import (
    IN_FLIGHT_PROBLEMS,
    KEPT_PROBLEMS,
    MESSAGE_PROBLEMS,
    PROBLEMS,
    check,
)
from graders.judge.recording import Observation, SaveRecord
from tests.conftest import ROOT

SC = load_scenario("incident-triage")  # turns of 3, 1 and 2 calls
CALLS = SC.tool_calls
RESULTS = SC.tool_results


def reference_saves() -> list[dict]:
    """Every state the reference loop saves on incident-triage, in order."""
    spec = importlib.util.spec_from_file_location(
        "level4_reference", ROOT / "solutions" / "04_parallel_tool_calls.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    saves: list[dict] = []
    module.save_checkpoint = lambda state: saves.append(copy.deepcopy(state))
    module.run_agent(SC.task, SC.tools, SC.model(), SC.executor())
    return saves


SAVES = reference_saves()


def ledger(ran: int, returned: int) -> list[dict]:
    """Tools 1..ran ran; 1..returned returned their result."""
    return [{"index": k, "name": CALLS[k - 1]["name"], "input": CALLS[k - 1]["input"],
             **({"result": RESULTS[k - 1]} if k <= returned else {})}
            for k in range(1, ran + 1)]


def judge(point: str, state, ran: int, returned: int, saves: list[SaveRecord] | None = None):
    kind = point.rstrip("_0123456789") if point != "no_crash" else "no_crash"
    obs = Observation("incident-triage", point, kind, "finished" if kind == "no_crash"
                      else "killed", checkpoint=json.dumps(state),
                      checkpoint_bytes=len(json.dumps(state)), ledger=ledger(ran, returned),
                      saves=saves or [])
    return check(obs, SC, point)


def saves_of(*placed: tuple[str, int, dict]) -> list[SaveRecord]:
    """SaveRecords of a run: (phase, the last tool call before the save, what it left)."""
    return [SaveRecord(n, phase, tool, completed=True, checkpoint_text=json.dumps(left))
            for n, (phase, tool, left) in enumerate(placed, 1)]


def with_results(*numbers: int) -> dict:
    """Turn 1's save point A state with the results of these tools kept (any order)."""
    state = copy.deepcopy(SAVES[0])
    for k in numbers:
        state["pendingToolUse"][k - 1]["result"] = RESULTS[k - 1]
    return state


def problems(verdict) -> set[str]:
    return set(verdict.evidence["problems"])


def while_tool_3():
    """The reference's checkpoint while tool 3 (list_deploys) runs: save 3."""
    state = copy.deepcopy(SAVES[2])
    assert [("result" in e) for e in state["pendingToolUse"]] == [True, True, False]
    return state


def after_turn_1():
    state = copy.deepcopy(SAVES[3])
    assert state["pendingToolUse"] is None and len(state["messages"]) == 3
    return state


def test_the_reference_states_pass_at_their_crash_points():
    assert judge("killed_during_tool_1", SAVES[0], 1, 0).passed
    verdict = judge("killed_during_tool_3", while_tool_3(), 3, 2)
    assert verdict.passed, verdict.message
    assert "pendingToolUse listing tools 1, 2 and 3 (the result of tools 1 and 2 kept)" in (
        verdict.message)
    assert judge("killed_during_model_call_2", after_turn_1(), 3, 3).passed
    assert judge("no_crash", SAVES[-1], 6, 6).passed


def test_a_finished_result_kept_nowhere_is_a_lost_call():
    state = while_tool_3()
    for entry in state["pendingToolUse"]:
        entry.pop("result", None)
    verdict = judge("killed_during_tool_3", state, 3, 2)
    assert problems(verdict) == {"result_lost"}
    assert "tool 1 (fetch_logs) had returned its result" in verdict.message
    assert "run tool 1 again" in verdict.message


def test_a_single_call_pending_is_not_a_list_and_loses_the_earlier_results():
    state = while_tool_3()
    state["pendingToolUse"] = {k: CALLS[2][k] for k in ("id", "name", "input")}
    verdict = judge("killed_during_tool_3", state, 3, 2)
    assert problems(verdict) == {"pending_not_list", "result_lost"}
    messages = verdict.evidence["messages"]
    assert "one call" in messages["pending_not_list"]
    assert "tool 1" in messages["result_lost"]


def test_a_pending_list_missing_calls_or_empty_or_in_another_order():
    state = copy.deepcopy(SAVES[1])  # while tool 2 runs: tool 1 kept with its result
    state["pendingToolUse"] = state["pendingToolUse"][:2]
    verdict = judge("killed_during_tool_2", state, 2, 1)
    assert problems(verdict) == {"pending_missing_calls"}
    assert "tool 3 is not listed" in verdict.message
    state["pendingToolUse"] = []
    assert problems(judge("killed_during_tool_1", state, 1, 0)) >= {"pending_empty"}
    state = while_tool_3()
    state["pendingToolUse"].reverse()
    assert "pending_mismatch" in problems(judge("killed_during_tool_3", state, 3, 2))


def test_a_result_kept_before_its_tool_returned_is_a_claim_of_what_has_not_happened():
    """Issue 16 item 7a: killed while tool 2 ran, pendingToolUse already keeps its result."""
    verdict = judge("killed_during_tool_2", with_results(1, 2), 2, 1)
    assert problems(verdict) == {"result_not_returned"}
    assert "had not returned yet" in verdict.message
    state = after_turn_1()  # in messages too: killed while tool 3 ran, its result recorded
    assert "result_not_returned" in problems(judge("killed_during_tool_3", state, 3, 2))


# The turn's tools run concurrently (threads): calls 1, 2 and 3 all start before any result is
# saved, each result is saved as its tool returns (in any order, saves serialized by a lock),
# then save point B. The judge places each save after the last call that came before it.
CONCURRENT = [("A", 1, SAVES[0]), ("B", 3, with_results(2)), ("B", 3, with_results(1, 2)),
              ("B", 3, with_results(1, 2, 3)), ("B", 3, SAVES[3])]


@pytest.mark.parametrize("point, ran, returned", [
    ("killed_during_tool_2", 2, 1), ("killed_during_tool_3", 3, 2)])
def test_concurrent_tools_caught_between_return_and_save_are_not_lost(point, ran, returned):
    """A kill can catch a tool that finished before its result was saved, exactly as it can
    catch a tool in flight: when a later save keeps it before save point B, it passes."""
    verdict = judge(point, SAVES[0], ran, returned, saves_of(*CONCURRENT))
    assert verdict.passed, verdict.message
    verdict = judge(point, with_results(1), ran, returned, saves_of(*CONCURRENT))
    assert verdict.passed, verdict.message


def test_concurrent_tools_whose_results_wait_for_save_point_b_are_lost():
    """Tools in threads, every result held in memory until save point B: tool 1 had returned
    by the time tool 3 was called, and no save keeps it before B."""
    only_b = saves_of(("A", 1, SAVES[0]), ("B", 3, SAVES[3]))
    for point, ran, returned in (("killed_during_tool_2", 2, 1), ("killed_during_tool_3", 3, 2)):
        verdict = judge(point, SAVES[0], ran, returned, only_b)
        assert problems(verdict) == {"result_lost"}, verdict.message
        assert "tool 1 (fetch_logs) had returned" in verdict.message


def test_a_result_once_saved_stays_saved_until_save_point_b():
    """A save that drops a kept result (a stale copy of the state saved by another thread)."""
    dropped = saves_of(("A", 1, SAVES[0]), ("B", 1, with_results(1)), ("B", 2, SAVES[0]),
                       ("B", 3, with_results(1, 2, 3)), ("B", 3, SAVES[3]))
    verdict = judge("killed_during_tool_3", SAVES[0], 3, 2, dropped)
    assert problems(verdict) == {"result_lost"}
    assert "save 2 had kept its result" in verdict.message and "stay saved" in verdict.message


def _threaded(point: str, ran: int, returned: int, callers: list[int], saves: list,
              savers: list[int]):
    """The verdict when tool k was called from thread ``callers[k - 1]`` and save n made by
    thread ``savers[n - 1]``, as a recording that knows threads says."""
    for save, thread in zip(saves, savers, strict=True):
        save.thread = thread
    obs = Observation("incident-triage", point, "killed_during_tool", "killed",
                      checkpoint=json.dumps(SAVES[0]), checkpoint_bytes=1,
                      ledger=[{**e, "thread": callers[e["index"] - 1]}
                              for e in ledger(ran, returned)], saves=saves)
    return check(obs, SC, point)


def test_a_result_the_caller_saves_only_after_calling_the_next_tool_is_lost():
    """One thread calls tools 1, 2 and 3 and keeps their results in one save before save point
    B: killed while tool 2 runs, tool 1 had returned and its caller went on instead of saving.
    A pool whose worker calls the next tool while another thread saves is not that."""
    late = [("A", 1, SAVES[0]), ("B", 3, with_results(1, 2, 3)), ("B", 3, SAVES[3])]
    verdict = _threaded("killed_during_tool_2", 2, 1, [7, 7, 7], saves_of(*late), [7, 7, 7])
    assert problems(verdict) == {"result_lost"}
    assert "went on to call tool 2 before keeping its result" in verdict.message
    pool = [("A", 1, SAVES[0]), ("B", 3, with_results(1)), ("B", 3, with_results(1, 2)),
            ("B", 3, with_results(1, 2, 3)), ("B", 3, SAVES[3])]
    verdict = _threaded("killed_during_tool_3", 3, 2, [11, 12, 11], saves_of(*pool),
                        [1, 1, 1, 1, 1])
    assert verdict.passed, verdict.message
    # without threads in the recording, the late save cannot be told from a delayed one
    assert judge("killed_during_tool_2", SAVES[0], 2, 1, saves_of(*late)).passed


def test_a_tool_that_ran_with_nothing_on_disk_left_no_trace():
    state = copy.deepcopy(SAVES[0])
    state["messages"] = state["messages"][:1]
    state["pendingToolUse"] = None
    verdict = judge("killed_during_tool_1", state, 1, 0)
    assert problems(verdict) == {"no_save_point_a"}
    assert "left no trace" in verdict.message


def test_a_kept_result_must_be_the_one_the_tool_returned_by_a_tool_that_ran():
    state = while_tool_3()
    state["pendingToolUse"][1]["result"] = "made up"
    assert problems(judge("killed_during_tool_3", state, 3, 2)) == {"result_changed"}
    state = while_tool_3()
    state["pendingToolUse"][2]["result"] = RESULTS[2]
    assert problems(judge("killed_during_tool_2", state, 2, 1)) >= {"result_never_ran"}


def test_results_split_across_messages_or_partial_but_in_any_order():
    state = after_turn_1()
    blocks = state["messages"][2]["content"]
    split = copy.deepcopy(state)
    split["messages"][2:] = [{"role": "user", "content": [b]} for b in blocks]
    verdict = judge("killed_during_model_call_2", split, 3, 3)
    assert "results_split" in problems(verdict) and "400" in verdict.message
    swapped = copy.deepcopy(state)
    swapped["messages"][2]["content"] = blocks[::-1]
    verdict = judge("killed_during_model_call_2", swapped, 3, 3)
    assert verdict.passed and not problems(verdict), verdict.message  # any order (18 E1)
    partial = copy.deepcopy(state)
    partial["messages"][2]["content"] = blocks[:2]
    assert "partial_result_message" in problems(judge("killed_during_model_call_2", partial,
                                                      3, 3))


def test_the_model_called_again_before_save_point_b():
    verdict = judge("killed_during_model_call_2", while_tool_3(), 3, 3)
    assert problems(verdict) == {"no_save_point_b"}
    assert "tools 1, 2 and 3 had returned" in verdict.message


def test_pending_never_reset_after_save_point_b():
    state = after_turn_1()
    state["pendingToolUse"] = copy.deepcopy(SAVES[2]["pendingToolUse"])
    verdict = judge("killed_during_model_call_2", state, 3, 3)
    assert problems(verdict) == {"pending_never_reset"}
    assert "run it a second time" in verdict.message


def test_turns_counts_finished_turns_not_tool_results():
    state = after_turn_1()
    state["turns"] = 3
    assert problems(judge("killed_during_model_call_2", state, 3, 3)) == {"turns"}


def test_a_finished_run_must_hold_every_turn():
    verdict = judge("no_crash", after_turn_1(), 6, 6)
    assert "incomplete" in problems(verdict)


def test_every_problem_code_is_listed_once_in_its_group():
    groups = [set(IN_FLIGHT_PROBLEMS), set(KEPT_PROBLEMS), set(MESSAGE_PROBLEMS)]
    assert not (groups[0] & groups[1] or groups[0] & groups[2] or groups[1] & groups[2])
    assert set().union(*groups) <= set(PROBLEMS)
    assert all(PROBLEMS[code] for code in PROBLEMS)


@pytest.mark.parametrize("point, make, ran, returned", [
    ("killed_during_tool_3", lambda: {**while_tool_3(), "pendingToolUse": None}, 3, 2),
    ("killed_during_model_call_2", while_tool_3, 3, 3),
])
def test_messages_say_what_resume_runs_into_never_the_fix(point, make, ran, returned):
    verdict = judge(point, make(), ran, returned)
    assert not verdict.passed
    for text in verdict.evidence["messages"].values():
        assert "esume" in text
        assert "save_checkpoint(state)" not in text and "append(" not in text


@pytest.mark.parametrize("field", ["pendingToolUse", "messages", "turns", "task"])
@pytest.mark.parametrize("junk", [None, [], {}, "x", 3, [1], [{}], ["junk"],
                                  [{"id": "a", "name": "b", "input": {}, "result": 5}]])
def test_any_value_in_a_field_gets_a_verdict_not_an_exception(field, junk):
    state = while_tool_3()
    state[field] = junk
    verdict = judge("killed_during_tool_3", state, 3, 2)
    assert verdict.message and set(verdict.evidence["problems"]) <= set(PROBLEMS)
