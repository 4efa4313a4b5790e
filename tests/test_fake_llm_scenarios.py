"""fake_llm's scenarios: the shipped ones, loading by path, and errors that name file and field."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from fake_llm import Scenario, ScenarioError, list_scenarios, load_scenario
from fake_llm.scenario import SCENARIO_DIR

SHIPPED = json.loads((SCENARIO_DIR / "support-tickets.json").read_text(encoding="utf-8"))


def test_list_scenarios_is_sorted_and_matches_the_files():
    names = list_scenarios()
    assert names == sorted(names)
    assert names == sorted(p.stem for p in SCENARIO_DIR.glob("*.json"))


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ScenarioError) as caught:
        load_scenario("support-ticket")
    message = str(caught.value)
    assert "'support-ticket'" in message
    for name in list_scenarios():
        assert name in message


def test_support_tickets_is_the_lessons_task_with_two_calls_in_a_row():
    sc = load_scenario("support-tickets")
    assert isinstance(sc, Scenario) and sc.name == "support-tickets" and sc.description
    assert (
        sc.task == "Sort last quarter's support tickets by issue type and roll them into one table"
    )
    assert [c["name"] for c in sc.tool_calls] == ["list_tickets", "build_table"]
    assert all(100 <= len(result) <= 2000 for result in sc.tool_results)
    assert sc.turn_count == 3


def test_the_long_scenario_has_at_least_eight_calls():
    sc = load_scenario("long-migration")
    assert len(sc.tool_calls) >= 8


def test_large_results_are_tens_of_kilobytes_each():
    sc = load_scenario("large-results")
    sizes = [len(result.encode()) for result in sc.tool_results]
    assert len(sizes) >= 6
    assert all(20_000 <= size <= 60_000 for size in sizes), sizes
    assert len(set(sc.tool_results)) == len(sizes)


@pytest.mark.parametrize("name", list_scenarios())
def test_every_scenario_is_self_consistent(name):
    sc = load_scenario(name)
    ids = [c["id"] for c in sc.tool_calls]
    assert len(set(ids)) == len(ids)
    per_turn = [sc.turn_calls(t) for t in range(1, sc.turn_count)]
    assert all(per_turn) and sc.turn_calls(sc.turn_count) == []
    assert [c for calls in per_turn for c in calls] == sc.tool_calls
    assert sc.parallel == any(len(calls) > 1 for calls in per_turn)
    assert len(sc.tool_results) == len(sc.tool_calls)
    if not sc.parallel:
        assert len(sc.tool_calls) == sc.turn_count - 1
    assert {c["name"] for c in sc.tool_calls} <= set(sc.tool_names)
    conversation = sc.conversation()
    assert len(conversation) == 1 + 2 * (sc.turn_count - 1)
    assert conversation[0] == {"role": "user", "content": sc.task}
    assert conversation[-1]["content"][0]["type"] == "tool_result"
    assert sc.final_response()["stop_reason"] == "end_turn"
    execute_tool = sc.executor()
    for call in sc.tool_calls:
        execute_tool(call["name"], call["input"])
    assert Path(sc.path).is_file() and Path(sc.path).stem == name


def test_accessors_return_fresh_copies():
    sc = load_scenario("support-tickets")
    sc.tools[0]["name"] = "changed"
    sc.tool_calls[0]["input"]["period"] = "changed"
    sc.conversation()[1]["content"].clear()
    sc.final_response()["content"].clear()
    again = load_scenario("support-tickets")
    assert sc.tools[0]["name"] == again.tools[0]["name"] == "list_tickets"
    assert sc.tool_calls[0]["input"]["period"] == "last_quarter"
    assert sc.conversation()[1]["content"] and sc.final_response()["content"]


def test_a_scenario_file_loads_by_path(tmp_path):
    target = tmp_path / "support-tickets.json"
    shutil.copy(SCENARIO_DIR / "support-tickets.json", target)
    for spec in (target, str(target)):
        sc = load_scenario(spec)
        assert sc.conversation() == load_scenario("support-tickets").conversation()
        assert sc.path == target.resolve()
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario(tmp_path / "missing.json")


def test_an_edited_file_is_reloaded(tmp_path):
    target = tmp_path / "support-tickets.json"
    data = copy.deepcopy(SHIPPED)
    target.write_text(json.dumps(data), encoding="utf-8")
    assert load_scenario(target).task == SHIPPED["task"]
    data["task"] = "Sort this quarter's tickets, please"
    target.write_text(json.dumps(data), encoding="utf-8")
    assert load_scenario(target).task == data["task"]


def test_generated_results_are_expanded_deterministically(tmp_path):
    data = copy.deepcopy(SHIPPED)
    data["name"] = "generated"
    data["turns"][0]["result"] = {
        "generate": {
            "header": "id,kind,size",
            "row": "T-{n:03d},{kind},{size}",
            "rows": 50,
            "choices": {"kind": ["bug", "billing"]},
            "ranges": {"size": [1, 9]},
            "footer": "# end",
        }
    }
    (tmp_path / "generated.json").write_text(json.dumps(data), encoding="utf-8")
    result = load_scenario(tmp_path / "generated.json").tool_results[0]
    lines = result.split("\n")
    assert lines[0] == "id,kind,size" and lines[-1] == "# end" and len(lines) == 52
    assert lines[1].startswith("T-001,") and lines[50].startswith("T-050,")
    kinds = {line.split(",")[1] for line in lines[1:-1]}
    assert kinds == {"bug", "billing"}
    assert all(1 <= int(line.split(",")[2]) <= 9 for line in lines[1:-1])
    copy_path = tmp_path / "other" / "generated.json"
    copy_path.parent.mkdir()
    copy_path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    assert load_scenario(copy_path).tool_results[0] == result


def _set(data, path, value):
    *parents, last = path
    for key in parents:
        data = data[key]
    if value is _DELETE:
        del data[last]
    else:
        data[last] = value


_DELETE = object()

BAD = [
    ("missing task", [(("task",), _DELETE)], "task: missing required field"),
    ("empty task", [(("task",), "  ")], "task: must not be empty"),
    ("unknown top-level field", [(("colour",), "blue")], "colour: unknown field"),
    ("tools not a list", [(("tools",), {})], "tools: must be a list"),
    ("no tools", [(("tools",), [])], "tools: must declare at least one tool"),
    ("bad tool name", [(("tools", 0, "name"), "list tickets")], "tools[0].name: must match"),
    (
        "duplicate tool",
        [(("tools", 1, "name"), "list_tickets")],
        "tools[1].name: 'list_tickets' is declared twice",
    ),
    (
        "schema not an object",
        [(("tools", 0, "input_schema", "type"), "array")],
        'tools[0].input_schema.type: must be "object"',
    ),
    (
        "unsupported keyword",
        [(("tools", 0, "input_schema", "properties", "period", "pattern"), "^q")],
        "tools[0].input_schema.properties.period.pattern: keyword not supported",
    ),
    (
        "required not in properties",
        [(("tools", 0, "input_schema", "required"), ["period", "owner"])],
        "tools[0].input_schema.required: 'owner' is required but not in properties",
    ),
    ("too few turns", [(("turns",), [])], "turns: needs at least one tool turn"),
    (
        "tool turn without result",
        [(("turns", 0, "result"), _DELETE)],
        "turns[0].result: missing required field",
    ),
    ("final turn with a result", [(("turns", 2, "result"), "x")], "turns[2].result: unknown field"),
    ("empty content", [(("turns", 0, "content"), [])], "turns[0].content: must hold at least one"),
    (
        "bad block type",
        [(("turns", 0, "content", 0, "type"), "image")],
        'turns[0].content[0].type: must be "text" or "tool_use"',
    ),
    (
        "empty text",
        [(("turns", 0, "content", 0, "text"), "")],
        "turns[0].content[0].text: must not be empty",
    ),
    (
        "block with an id",
        [(("turns", 0, "content", 1, "id"), "toolu_x")],
        "turns[0].content[1].id: unknown field",
    ),
    (
        "undeclared tool",
        [(("turns", 0, "content", 1, "name"), "delete_tickets")],
        "turns[0].content[1].name: 'delete_tickets' is not declared",
    ),
    (
        "input breaks the schema",
        [(("turns", 1, "content", 1, "input", "group_by"), "colour")],
        "turns[1].content[1].input: input.group_by must be one of",
    ),
    (
        "input misses a required key",
        [(("turns", 0, "content", 1, "input"), {"status": "all"})],
        "turns[0].content[1].input: input is missing the required key 'period'",
    ),
    (
        "tool turn without tool_use",
        [(("turns", 0, "content", 1), {"type": "text", "text": "hm"})],
        "turns[0].content: a tool turn has exactly one tool_use",
    ),
    (
        "final turn with a tool_use",
        [
            (
                ("turns", 2, "content", 0),
                {"type": "tool_use", "name": "list_tickets", "input": {"period": "last_month"}},
            )
        ],
        "turns[2].content: the last turn is the final answer",
    ),
    (
        "name differs from the file",
        [(("name",), "tickets")],
        "name: is 'tickets', but the file is named",
    ),
    (
        "result of the wrong type",
        [(("turns", 0, "result"), 42)],
        "turns[0].result: must be a string or an object",
    ),
    (
        "conflicting results for one call",
        [(("turns", 1, "content", 1), copy.deepcopy(SHIPPED["turns"][0]["content"][1]))],
        "turns[1].result: turns[0] calls list_tickets with the same input but a different result",
    ),
    (
        "generate: unknown key",
        [(("turns", 0, "result"), {"generate": {"rows": 2, "row": "x", "cols": 3}})],
        "turns[0].result.generate.cols: unknown field",
    ),
    (
        "generate: bad placeholder",
        [(("turns", 0, "result"), {"generate": {"rows": 2, "row": "{n} {who}"}})],
        "turns[0].result.generate.row: unknown placeholder {who}",
    ),
    (
        "generate: too many rows",
        [(("turns", 0, "result"), {"generate": {"rows": 0, "row": "x"}})],
        "turns[0].result.generate.rows: must be between",
    ),
    (
        "generate: bad range",
        [
            (
                ("turns", 0, "result"),
                {"generate": {"rows": 2, "row": "{a}", "ranges": {"a": [5, 1]}}},
            )
        ],
        "turns[0].result.generate.ranges.a: must be [low, high]",
    ),
    (
        "generate: bad choices",
        [(("turns", 0, "result"), {"generate": {"rows": 2, "row": "{a}", "choices": {"a": []}}})],
        "turns[0].result.generate.choices.a: must be a non-empty list",
    ),
    (
        "generate: other key",
        [(("turns", 0, "result"), {"rows": 2})],
        "turns[0].result.rows: unknown field",
    ),
]


@pytest.mark.parametrize(("label", "edits", "message"), BAD, ids=[case[0] for case in BAD])
def test_a_bad_scenario_file_names_the_file_and_the_field(tmp_path, label, edits, message):
    data = copy.deepcopy(SHIPPED)
    for path, value in edits:
        _set(data, path, value)
    target = tmp_path / "support-tickets.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(target)
    assert str(caught.value).startswith("support-tickets.json: ")
    assert message in str(caught.value)


def test_a_file_that_is_not_json_or_not_an_object(tmp_path):
    target = tmp_path / "broken.json"
    target.write_text('{"name": "broken",', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"^broken\.json: not valid JSON"):
        load_scenario(target)
    target.write_text("[]", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"^broken\.json: must be an object"):
        load_scenario(target)


def test_a_parallel_turn_needs_one_result_per_block(tmp_path):
    data = json.loads((SCENARIO_DIR / "incident-triage.json").read_text(encoding="utf-8"))
    data["turns"][0]["results"] = data["turns"][0]["results"][:2]
    target = tmp_path / "incident-triage.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(target)
    assert "turns[0].results: has 2 results for 3 tool_use blocks" in str(caught.value)


def test_results_with_a_single_block_or_result_beside_results_are_refused(tmp_path):
    data = json.loads((SCENARIO_DIR / "incident-triage.json").read_text(encoding="utf-8"))
    one = copy.deepcopy(data)
    one["turns"][1]["results"] = [one["turns"][1].pop("result")]
    both = copy.deepcopy(data)
    both["turns"][0]["result"] = "x"
    for variant, words in ((one, "two or more tool_use blocks, found 1"),
                           (both, "not both")):
        target = tmp_path / "incident-triage.json"
        target.write_text(json.dumps(variant), encoding="utf-8")
        with pytest.raises(ScenarioError) as caught:
            load_scenario(target)
        assert words in str(caught.value)
