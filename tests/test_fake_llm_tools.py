"""fake_llm's tools: scripted results, a ledger of every execution, and clear refusals."""

from __future__ import annotations

import json

import pytest

from fake_llm import FakeLLMError, FakeTools, LedgerEntry, ToolError, load_scenario


@pytest.fixture
def sc():
    return load_scenario("support-tickets")


def test_each_scripted_call_returns_its_result(sc):
    execute_tool = sc.executor()
    assert isinstance(execute_tool, FakeTools)
    for call, result in zip(sc.tool_calls, sc.tool_results, strict=True):
        assert execute_tool(call["name"], call["input"]) == result


def test_the_ledger_records_every_execution_in_order_including_a_repeat(sc):
    execute_tool = sc.executor()
    first, second = sc.tool_calls
    results = [
        execute_tool(first["name"], first["input"]),
        execute_tool(second["name"], second["input"]),
        execute_tool(first["name"], first["input"]),
    ]
    assert results[0] == results[2] == sc.tool_results[0]
    ledger = execute_tool.ledger
    assert [e.index for e in ledger] == [1, 2, 3]
    assert [e.name for e in ledger] == ["list_tickets", "build_table", "list_tickets"]
    assert [e.input for e in ledger] == [first["input"], second["input"], first["input"]]
    assert [e.result for e in ledger] == results


def test_input_is_compared_by_value_whatever_the_key_order(sc):
    execute_tool = sc.executor()
    reordered = dict(reversed(list(sc.tool_calls[0]["input"].items())))
    assert execute_tool("list_tickets", reordered) == sc.tool_results[0]
    assert execute_tool("list_tickets", json.loads(json.dumps(reordered))) == sc.tool_results[0]


def test_the_ledger_keeps_copies(sc):
    execute_tool = sc.executor()
    tool_input = sc.tool_calls[0]["input"]
    execute_tool("list_tickets", tool_input)
    tool_input["period"] = "last_month"
    execute_tool.ledger[0].input["status"] = "open"
    execute_tool.ledger.clear()
    assert execute_tool.ledger[0].input == {"period": "last_quarter", "status": "all"}


def test_executors_have_their_own_ledgers(sc):
    one, two = sc.executor(), sc.executor()
    one("list_tickets", sc.tool_calls[0]["input"])
    assert len(one.ledger) == 1 and two.ledger == []


def test_ledger_entries_serialize_and_come_back(sc):
    execute_tool = sc.executor()
    execute_tool("build_table", sc.tool_calls[1]["input"])
    entry = execute_tool.ledger[0]
    data = json.loads(json.dumps(entry.to_dict()))
    assert data == {
        "index": 1,
        "name": "build_table",
        "input": sc.tool_calls[1]["input"],
        "result": sc.tool_results[1],
    }
    assert LedgerEntry.from_dict(data) == entry


def test_on_execute_sees_each_entry_before_the_result_is_returned(sc):
    seen = []
    execute_tool = sc.executor(on_execute=lambda entry: seen.append(entry.to_dict()))
    execute_tool("list_tickets", sc.tool_calls[0]["input"])
    assert seen == [execute_tool.ledger[0].to_dict()]

    def crash(entry):
        raise KeyboardInterrupt

    execute_tool = sc.executor(on_execute=crash)
    with pytest.raises(KeyboardInterrupt):
        execute_tool("list_tickets", sc.tool_calls[0]["input"])
    assert len(execute_tool.ledger) == 1


def refused(execute_tool, name, tool_input) -> ToolError:
    with pytest.raises(ToolError) as caught:
        execute_tool(name, tool_input)
    assert isinstance(caught.value, FakeLLMError)
    assert execute_tool.ledger == []
    return caught.value


def test_an_unknown_tool_names_the_known_ones(sc):
    error = refused(sc.executor(), "delete_tickets", {})
    assert "delete_tickets" in str(error) and error.tool == "delete_tickets"
    assert "list_tickets, build_table" in error.expected


@pytest.mark.parametrize(
    ("tool_input", "what"),
    [
        ("last_quarter", "is a str, not a dict"),
        ({}, "missing the required key 'period'"),
        ({"period": 3}, "input.period must be of type string, got integer 3"),
        ({"period": "last_year"}, 'must be one of "last_month", "last_quarter", "this_quarter"'),
        ({"period": "last_quarter", "owner": "me"}, "unknown key 'owner'"),
        ({"period": "last_quarter", "status": None}, "input.status must be of type string"),
    ],
)
def test_an_input_that_does_not_fit_the_schema_says_what_was_wrong(sc, tool_input, what):
    error = refused(sc.executor(), "list_tickets", tool_input)
    assert what in str(error)
    assert '{"period": "last_quarter", "status": "all"}' in error.expected


def test_nested_schema_problems_name_the_path():
    sc = load_scenario("long-migration")
    call = next(c for c in sc.tool_calls if c["name"] == "create_table")
    call["input"]["columns"][1]["type"] = "varchar"
    del call["input"]["columns"][2]["name"]
    error = refused(sc.executor(), "create_table", call["input"])
    assert "input.columns[1].type must be one of" in str(error)
    assert "input.columns[2] is missing the required key 'name'" in str(error)


def test_a_valid_input_the_script_has_no_result_for(sc):
    error = refused(sc.executor(), "list_tickets", {"period": "last_month"})
    assert 'no result for list_tickets with input {"period": "last_month"}' in str(error)
    assert "the script calls list_tickets with" in error.expected
    assert "unchanged" in error.expected


def test_booleans_are_not_integers():
    sc = load_scenario("long-migration")
    call = next(c for c in sc.tool_calls if c["name"] == "copy_rows")
    call["input"]["batch_size"] = True
    error = refused(sc.executor(), "copy_rows", call["input"])
    assert "batch_size must be of type integer, got boolean" in str(error)


def test_tool_errors_survive_pickling(sc):
    import pickle

    error = refused(sc.executor(), "delete_tickets", {})
    again = pickle.loads(pickle.dumps(error))
    assert (again.tool, again.expected, str(again)) == (error.tool, error.expected, str(error))


def test_an_input_with_values_json_cannot_hold(sc):
    error = refused(
        sc.executor(), "build_table", {"ticket_ids": {"T-1041"}, "group_by": "issue_type"}
    )
    assert "input.ticket_ids must be of type array, got set" in str(error)
