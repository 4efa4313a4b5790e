"""fake_llm's strictness: the API's structural rules and the script, each with its own error."""

from __future__ import annotations

import copy
import json

import pytest

from fake_llm import RULES, ConversationError, FakeLLMError, load_scenario, validate_conversation


@pytest.fixture
def sc():
    return load_scenario("support-tickets")


@pytest.fixture
def conv(sc):
    return sc.conversation()


def refused(sc, messages, tools=None) -> ConversationError:
    with pytest.raises(ConversationError) as caught:
        sc.model()(tools=sc.tools if tools is None else tools, messages=messages)
    error = caught.value
    assert isinstance(error, FakeLLMError)
    assert error.rule in RULES
    assert f"[{error.rule}]" in str(error) and error.expected in str(error)
    if error.index is not None:
        assert f"messages[{error.index}]" in str(error)
    return error


def invalid(messages, tools=None, **kwargs) -> ConversationError:
    with pytest.raises(ConversationError) as caught:
        validate_conversation(messages, tools, **kwargs)
    assert caught.value.rule in RULES
    return caught.value


# The script: drop, reorder, duplicate, change.


def test_a_dropped_turn_is_named_with_what_the_script_expected(sc, conv):
    error = refused(sc, conv[:1] + conv[3:])
    assert (error.rule, error.index) == ("script_mismatch", 1)
    assert "dropped" in error.problem and "turn 2" in error.problem
    assert "turn 1" in error.expected and "list_tickets" in error.expected
    assert sc.tool_calls[0]["id"] in error.expected


def test_reordered_turns_are_refused_at_the_first_message_that_departs():
    sc = load_scenario("long-migration")
    conv = sc.conversation()
    swapped = conv[:1] + conv[3:5] + conv[1:3] + conv[5:9]
    error = refused(sc, swapped)
    assert (error.rule, error.index) == ("script_mismatch", 1)
    assert "reordered" in error.problem
    assert "describe_table" in error.problem and "list_tables" in error.expected


def test_a_duplicated_turn_is_named_as_a_repeat(sc, conv):
    error = refused(sc, conv[:3] + conv[1:3])
    assert (error.rule, error.index) == ("script_mismatch", 3)
    assert "repeats" in error.problem and "messages[1]" in error.problem
    assert "turn 2" in error.expected and "build_table" in error.expected


def test_a_changed_tool_result_is_refused(sc, conv):
    conv[2]["content"][0]["content"] = conv[2]["content"][0]["content"].upper()
    error = refused(sc, conv)
    assert (error.rule, error.index) == ("tool_result_changed", 2)
    assert f"{len(sc.tool_results[0])} characters" in error.expected
    assert "list_tickets" in error.problem


def test_a_tool_result_swapped_with_another_calls_result_says_whose_it_is(sc, conv):
    conv[2]["content"][0]["content"] = sc.tool_results[1]
    error = refused(sc, conv[:3])
    assert error.rule == "tool_result_changed" and "tool call 2" in error.problem


def test_a_tool_result_marked_as_an_error_departs_from_the_script(sc, conv):
    conv[2]["content"][0]["is_error"] = True
    error = refused(sc, conv[:3])
    assert (error.rule, error.index) == ("script_mismatch", 2) and "is_error" in error.problem


def test_an_edited_assistant_turn_is_refused(sc, conv):
    conv[1]["content"][1]["input"]["period"] = "this_quarter"
    error = refused(sc, conv[:3])
    assert (error.rule, error.index) == ("script_mismatch", 1)
    assert "response['content']" in error.expected


def test_the_first_message_must_be_the_task(sc, conv):
    conv[0]["content"] = "Sort this quarter's tickets"
    error = refused(sc, conv[:1])
    assert (error.rule, error.index) == ("task_mismatch", 0)
    assert sc.task in error.expected


def test_calling_again_after_the_final_answer_says_the_script_has_ended(sc, conv):
    final = {"role": "assistant", "content": sc.final_response()["content"]}
    for messages in (conv + [final], conv + [final, {"role": "user", "content": "Thanks!"}]):
        error = refused(sc, messages)
        assert (error.rule, error.index) == ("script_ended", len(conv))
        assert "end_turn" in error.expected and "ended" in error.problem


# The API's structural rules, through the model.


def test_a_tool_use_without_a_tool_result_in_the_next_message(sc, conv):
    error = refused(sc, conv[:2] + [{"role": "user", "content": "Carry on."}])
    assert (error.rule, error.index) == ("tool_result_missing", 2)
    assert sc.tool_calls[0]["id"] in error.expected and "tool_result" in error.expected


def test_a_conversation_ending_with_an_unanswered_tool_use(sc, conv):
    error = refused(sc, conv[:2])
    assert (error.rule, error.index) == ("tool_result_missing", 1)
    assert sc.tool_calls[0]["id"] in error.expected and "messages[2]" in error.expected


def test_a_tool_result_for_an_unknown_id(sc, conv):
    conv[2]["content"][0]["tool_use_id"] = "toolu_01NotTheRightId0000000"
    error = refused(sc, conv[:3])
    assert (error.rule, error.index) == ("tool_result_unknown_id", 2)
    assert sc.tool_calls[0]["id"] in error.expected


def test_a_tool_result_for_an_earlier_turns_id(sc, conv):
    conv[4]["content"][0]["tool_use_id"] = sc.tool_calls[0]["id"]
    error = refused(sc, conv)
    assert (error.rule, error.index) == ("tool_result_duplicate", 4)
    assert "messages[2]" in error.problem


def test_a_tool_result_where_no_tool_was_asked_for(sc, conv):
    stray = {"role": "user", "content": [copy.deepcopy(conv[2]["content"][0])]}
    error = refused(sc, [stray])
    assert (error.rule, error.index) == ("tool_result_unknown_id", 0)


def test_tools_the_request_does_not_declare(sc, conv):
    error = refused(sc, conv[:1], tools=sc.tools[:1])
    assert (error.rule, error.index) == ("tool_undeclared", None)
    assert "build_table" in error.problem and "tools=scenario.tools" in error.expected
    error = refused(sc, conv[:1], tools=[])
    assert error.rule == "tool_undeclared" and "list_tickets" in error.problem


def test_tools_must_be_a_list_of_definitions(sc, conv):
    assert refused(sc, conv[:1], tools="list_tickets").rule == "tools_invalid"
    assert refused(sc, conv[:1], tools=[{"description": "no name"}]).rule == "tools_invalid"


def test_roles_out_of_order(sc, conv):
    error = refused(sc, [conv[0], conv[0]])
    assert (error.rule, error.index) == ("roles_not_alternating", 1)
    assert "'assistant' message at messages[1]" in error.expected
    error = refused(sc, [conv[0], conv[1], conv[1]])
    assert (error.rule, error.index) == ("roles_not_alternating", 2)
    error = refused(sc, conv[1:3])
    assert (error.rule, error.index) == ("first_not_user", 0)


def test_a_dropped_tool_result_message_breaks_the_alternation(sc, conv):
    error = refused(sc, conv[:2] + conv[3:5])
    assert (error.rule, error.index) == ("roles_not_alternating", 2)


@pytest.mark.parametrize(
    ("messages", "rule", "index"),
    [
        ([], "messages_invalid", None),
        ("Sort the tickets", "messages_invalid", None),
        ([["user", "hi"]], "message_invalid", 0),
        ([{"role": "user"}], "message_invalid", 0),
        ([{"role": "system", "content": "x"}], "message_invalid", 0),
        ([{"role": "user", "content": "x", "turn": 1}], "message_invalid", 0),
        ([{"role": "user", "content": ""}], "content_invalid", 0),
        ([{"role": "user", "content": []}], "content_invalid", 0),
        ([{"role": "user", "content": [{"type": "image"}]}], "content_invalid", 0),
        ([{"role": "user", "content": [{"type": "text", "text": ""}]}], "content_invalid", 0),
        ([{"role": "user", "content": [{"type": "text"}]}], "content_invalid", 0),
        (
            [{"role": "user", "content": [{"type": "text", "text": "x", "x": 1}]}],
            "content_invalid",
            0,
        ),
    ],
)
def test_malformed_requests(sc, messages, rule, index):
    error = refused(sc, messages)
    assert (error.rule, error.index) == (rule, index)


def test_a_tool_result_in_an_assistant_message_is_malformed(sc, conv):
    bad = {"role": "assistant", "content": conv[2]["content"]}
    error = refused(sc, [conv[0], bad, conv[2]])
    assert (error.rule, error.index) == ("content_invalid", 1)
    assert "'text' or 'tool_use'" in error.expected


# validate_conversation: the structural rules alone, as the checkpoint checker uses them.


@pytest.mark.parametrize("name", ["support-tickets", "long-migration", "large-results"])
def test_every_scripted_conversation_is_valid(name):
    sc = load_scenario(name)
    conv = sc.conversation()
    validate_conversation(conv, sc.tools)
    validate_conversation(json.loads(json.dumps(conv)))
    for end in range(1, len(conv) + 1, 2):
        validate_conversation(conv[:end], sc.tools)
        validate_conversation(conv[:end], sc.tools, allow_pending=True)


def test_allow_pending_accepts_an_unanswered_last_tool_use_and_nothing_else(conv):
    error = invalid(conv[:4])
    assert (error.rule, error.index) == ("tool_result_missing", 3)
    validate_conversation(conv[:4], allow_pending=True)
    validate_conversation(conv[:2], allow_pending=True)
    text_only = {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}
    for allow_pending in (False, True):
        error = invalid(conv[:3] + [text_only], allow_pending=allow_pending)
        assert (error.rule, error.index) == ("last_not_user", 3)
    # Pending is only allowed at the very end: a later user message must still answer it.
    error = invalid(conv[:2] + [{"role": "user", "content": "Next?"}], allow_pending=True)
    assert error.rule == "tool_result_missing"


def test_validate_conversation_checks_declared_tools_by_name(sc, conv):
    error = invalid(conv, tools=sc.tools[:1])
    assert (error.rule, error.index) == ("tool_undeclared", 3) and "build_table" in error.problem
    validate_conversation(conv, [{"name": "list_tickets"}, {"name": "build_table"}])


def test_tool_use_ids_must_be_unique(conv):
    error = invalid(conv[:3] + conv[1:3])
    assert (error.rule, error.index) == ("tool_use_id_duplicate", 3)
    assert "messages[1]" in error.problem


def test_tool_results_come_first_and_only_once(conv):
    result = conv[2]["content"][0]
    text = {"type": "text", "text": "Here is the result."}
    error = invalid(conv[:2] + [{"role": "user", "content": [text, result]}])
    assert (error.rule, error.index) == ("tool_result_not_first", 2)
    validate_conversation(conv[:2] + [{"role": "user", "content": [result, text]}])
    error = invalid(conv[:2] + [{"role": "user", "content": [result, result]}])
    assert (error.rule, error.index) == ("tool_result_duplicate", 2)


def test_tool_result_content_must_be_text(conv):
    conv[2]["content"][0]["content"] = {"rows": 8}
    error = invalid(conv[:3])
    assert (error.rule, error.index) == ("content_invalid", 2)


def test_every_rule_has_a_description():
    assert all(isinstance(text, str) and text for text in RULES.values())
    assert {
        "tool_result_missing",
        "tool_result_unknown_id",
        "tool_undeclared",
        "script_ended",
    } <= set(RULES)


def test_an_assistant_turn_naming_an_undeclared_tool(sc, conv):
    conv[1]["content"][1]["name"] = "delete_tickets"
    error = refused(sc, conv[:3])
    assert (error.rule, error.index) == ("tool_undeclared", 1)
    assert "delete_tickets" in error.problem and "list_tickets" in error.expected


def test_errors_survive_pickling(sc, conv):
    """The crash harness may send an error from a child process to its parent."""
    import pickle

    error = refused(sc, conv[:2])
    again = pickle.loads(pickle.dumps(error))
    assert (again.rule, again.index, again.expected, str(again)) == (
        error.rule,
        error.index,
        error.expected,
        str(error),
    )


def test_values_json_cannot_hold_are_refused_not_crashed_on(sc, conv):
    conv[1]["content"][1]["input"]["period"] = {"last_quarter"}
    error = refused(sc, conv[:3])
    assert (error.rule, error.index) == ("script_mismatch", 1)


# Several tool calls in one turn (Level 4's scenarios).


@pytest.fixture
def par():
    return load_scenario("incident-triage")


def _turn1(par):
    """The task, turn 1's three tool_use blocks, and their results in block order."""
    conv = par.conversation()
    return conv[:2], conv[2]["content"]


def test_a_parallel_turn_answered_in_one_message_in_block_order_is_accepted(par):
    conv = par.conversation()
    assert [len(par.turn_calls(t)) for t in range(1, par.turn_count)] == [3, 1, 2]
    assert [b["tool_use_id"] for b in conv[2]["content"]] == [c["id"] for c in par.turn_calls(1)]
    assert par.model()(tools=par.tools, messages=conv)["stop_reason"] == "end_turn"
    ids = [c["id"] for c in par.tool_calls]
    assert len(set(ids)) == len(ids) == 6
    assert ids[0] == load_scenario("incident-triage").tool_calls[0]["id"]


def test_a_follow_up_lacking_one_of_the_turns_results_is_refused_naming_it(par):
    head, results = _turn1(par)
    error = refused(par, [*head, {"role": "user", "content": results[:2]}])
    assert (error.rule, error.index) == ("tool_result_missing", 2)
    assert "3 tools at once" in error.problem and "answers 2 of them" in error.problem
    assert "list_deploys" in error.problem and par.turn_calls(1)[2]["id"] in error.problem
    assert "all in this one user message" in error.expected
    assert error.status_code == 400
    assert error.body == {"type": "error", "error": {"type": "invalid_request_error",
                                                     "message": str(error)}}


def test_results_split_across_two_user_messages_are_refused_as_split(par):
    head, results = _turn1(par)
    split = [*head, {"role": "user", "content": results[:1]},
             {"role": "user", "content": results[1:]}]
    error = refused(par, split)
    assert (error.rule, error.index) == ("tool_results_split", 2)
    assert "answers 1 of them" in error.problem and "messages[3]" in error.problem
    assert "one user message" in error.expected and "in any order" in error.expected
    assert invalid(split).rule == "tool_results_split"  # an API rule: no script needed


def test_results_in_another_order_than_the_blocks_are_the_same_request(par):
    """The API pairs each result with its call by tool_use_id and prescribes no order among one
    turn's results (issue 18, E1): any order gets the next turn."""
    head, results = _turn1(par)
    for order in ([1, 0, 2], [2, 1, 0], [2, 0, 1]):
        swapped = [*head, {"role": "user", "content": [results[i] for i in order]}]
        validate_conversation(swapped)
        response = par.model()(tools=par.tools, messages=swapped)
        assert response == par.model()(tools=par.tools, messages=par.conversation()[:3])
    assert "tool_results_out_of_order" not in RULES


def test_a_parallel_result_changed_is_refused_naming_its_block(par):
    head, results = _turn1(par)
    changed = copy.deepcopy(results)
    changed[2]["content"] = "[]"
    error = refused(par, [*head, {"role": "user", "content": changed}])
    assert error.rule == "tool_result_changed" and "list_deploys" in error.problem
    assert error.expected.startswith("a tool_result for list_deploys")


def test_the_turn_after_a_parallel_one_is_a_single_call(par):
    conv = par.conversation()
    response = par.model()(tools=par.tools, messages=conv[:3])
    uses = [b for b in response["content"] if b["type"] == "tool_use"]
    assert [b["name"] for b in uses] == ["read_deploy"]


def test_a_one_call_loop_on_a_parallel_scenario_is_refused_at_its_second_call(par):
    """The Level 2 loop (first tool_use only) cannot get past the first parallel turn."""
    model, tools = par.model(), par.executor()
    messages = [{"role": "user", "content": par.task}]
    response = model(tools=par.tools, messages=messages)
    block = next(b for b in response["content"] if b["type"] == "tool_use")
    messages += [{"role": "assistant", "content": response["content"]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block["id"],
                                               "content": tools(block["name"], block["input"])}]}]
    with pytest.raises(ConversationError) as caught:
        model(tools=par.tools, messages=messages)
    assert caught.value.rule == "tool_result_missing"


@pytest.mark.parametrize("name", ["incident-triage", "release-audit"])
def test_every_parallel_scripted_conversation_is_valid(name):
    sc = load_scenario(name)
    assert sc.parallel and any(len(sc.turn_calls(t)) == 1 for t in range(1, sc.turn_count))
    validate_conversation(sc.conversation(), sc.tools)
    assert sc.model()(tools=sc.tools, messages=sc.conversation())["stop_reason"] == "end_turn"
