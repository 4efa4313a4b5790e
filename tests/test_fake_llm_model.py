"""fake_llm's model: a correct loop runs every scenario to the end, deterministically."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import subprocess
import sys

import pytest

from fake_llm import FakeModel, list_scenarios, load_scenario

SCENARIOS = list_scenarios()


def run_loop(call_model, execute_tool, task, tools, messages=None):
    """The lesson's loop (without checkpoints), ported to Python; optionally resumed.

    Every tool_use block of a turn is run, and all their results go in one user message (a
    one-call turn is the lesson's loop exactly)."""
    messages = [{"role": "user", "content": task}] if messages is None else messages
    responses = [call_model(tools=tools, messages=messages)]
    while responses[-1]["stop_reason"] == "tool_use":
        response = responses[-1]
        messages.append({"role": "assistant", "content": response["content"]})
        blocks = [b for b in response["content"] if b["type"] == "tool_use"]
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": b["id"],
                     "content": execute_tool(b["name"], b["input"])}
                    for b in blocks
                ],
            }
        )
        responses.append(call_model(tools=tools, messages=messages))
    return messages, responses


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def test_the_three_required_scenarios_ship():
    assert {"support-tickets", "long-migration", "large-results"} <= set(SCENARIOS)


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_correct_loop_builds_exactly_the_scripted_conversation(name):
    sc = load_scenario(name)
    execute_tool = sc.executor()
    messages, responses = run_loop(sc.model(), execute_tool, sc.task, sc.tools)
    assert messages == sc.conversation()
    assert responses == sc.responses()
    assert responses[-1] == sc.final_response()
    assert responses[-1]["stop_reason"] == "end_turn"
    assert [r["stop_reason"] for r in responses[:-1]] == ["tool_use"] * (sc.turn_count - 1)
    assert [(e.name, e.input, e.result) for e in execute_tool.ledger] == [
        (c["name"], c["input"], r) for c, r in zip(sc.tool_calls, sc.tool_results, strict=True)
    ]


@pytest.mark.parametrize("name", SCENARIOS)
def test_responses_are_shaped_like_the_messages_api(name):
    sc = load_scenario(name)
    for turn, response in enumerate(sc.responses(), start=1):
        assert list(response) == [
            "id",
            "type",
            "role",
            "model",
            "content",
            "stop_reason",
            "stop_sequence",
            "usage",
        ]
        assert re.fullmatch(r"msg_01[0-9A-Za-z]{22}", response["id"])
        assert response["type"] == "message" and response["role"] == "assistant"
        assert response["model"] == sc.model_name == "fake-claude"
        assert response["stop_sequence"] is None
        usage = response["usage"]
        assert set(usage) == {"input_tokens", "output_tokens"}
        assert all(type(v) is int and v > 0 for v in usage.values())
        tool_uses = [b for b in response["content"] if b["type"] == "tool_use"]
        assert all(b["type"] in ("text", "tool_use") for b in response["content"])
        if turn < sc.turn_count:
            calls = sc.turn_calls(turn)
            assert len(tool_uses) == len(calls) >= 1
            assert len(calls) == 1 or sc.parallel
            for block, call in zip(tool_uses, calls, strict=True):
                assert set(block) == {"type", "id", "name", "input"}
                assert re.fullmatch(r"toolu_01[0-9A-Za-z]{22}", block["id"])
                assert block["id"] == call["id"]
        else:
            assert tool_uses == [] and response["stop_reason"] == "end_turn"
        json.dumps(response)


def test_ids_are_unique_across_every_scenario_and_turn():
    tool_ids = [c["id"] for name in SCENARIOS for c in load_scenario(name).tool_calls]
    message_ids = [r["id"] for name in SCENARIOS for r in load_scenario(name).responses()]
    assert len(set(tool_ids)) == len(tool_ids)
    assert len(set(message_ids)) == len(message_ids)


def test_usage_is_computed_from_the_conversation():
    sc = load_scenario("large-results")
    responses = sc.responses()
    inputs = [r["usage"]["input_tokens"] for r in responses]
    assert inputs == sorted(inputs) and len(set(inputs)) == len(inputs)
    # Each day of log (25-60 KB) adds thousands of input tokens, at about four characters each.
    result_chars = sum(len(r) for r in sc.tool_results)
    assert inputs[-1] - inputs[0] == pytest.approx(result_chars / 4, rel=0.2)
    for response in responses:
        content_chars = len(json.dumps(response["content"]))
        assert response["usage"]["output_tokens"] == pytest.approx(content_chars / 4, abs=2)


@pytest.mark.parametrize("name", SCENARIOS)
def test_two_fresh_models_give_identical_responses(name):
    first, second = load_scenario(name).model(), load_scenario(name).model()
    conversation = load_scenario(name).conversation()
    for turn in range(load_scenario(name).turn_count):
        prefix = conversation[: 2 * turn + 1]
        tools = load_scenario(name).tools
        assert first(tools=tools, messages=prefix) == second(tools=tools, messages=prefix)


def test_responses_are_the_same_in_processes_with_other_hash_seeds():
    program = (
        "import hashlib, json\n"
        "from fake_llm import list_scenarios, load_scenario\n"
        "out = {}\n"
        "for name in list_scenarios():\n"
        "    sc = load_scenario(name)\n"
        "    data = [sc.responses(), sc.conversation(), sc.tool_calls]\n"
        "    out[name] = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()\n"
        "print(json.dumps(out))\n"
    )
    here = {
        name: digest(
            [
                load_scenario(name).responses(),
                load_scenario(name).conversation(),
                load_scenario(name).tool_calls,
            ]
        )
        for name in SCENARIOS
    }
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
        )
        assert json.loads(out.stdout) == here


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_model_never_mutates_what_it_is_given(name):
    sc = load_scenario(name)
    call_model = sc.model()
    conversation, tools = sc.conversation(), sc.tools
    for turn in range(sc.turn_count):
        prefix = conversation[: 2 * turn + 1]
        before_messages, before_tools = copy.deepcopy(prefix), copy.deepcopy(tools)
        response = call_model(tools=tools, messages=prefix)
        assert prefix == before_messages and tools == before_tools
        # The response is a copy too: changing it changes neither the script nor the next one.
        response["content"][0]["text"] = "changed"
        response["content"].append({"type": "text", "text": "more"})
        assert call_model(tools=tools, messages=prefix) == sc.responses()[turn]
    assert sc.conversation() == load_scenario(name).conversation()


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_json_round_trip_of_the_messages_is_accepted(name):
    sc = load_scenario(name)
    call_model = sc.model()
    conversation = sc.conversation()
    for turn in range(sc.turn_count):
        prefix = conversation[: 2 * turn + 1]
        restored = json.loads(json.dumps(prefix))
        assert call_model(tools=json.loads(json.dumps(sc.tools)), messages=restored) == call_model(
            tools=sc.tools, messages=prefix
        )


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_loop_resumed_mid_script_gets_the_next_turn_and_finishes(name):
    sc = load_scenario(name)
    conversation = sc.conversation()
    for done in range(sc.turn_count):
        prefix = json.loads(json.dumps(conversation[: 2 * done + 1]))
        call_model = sc.model()
        assert call_model(tools=sc.tools, messages=prefix) == sc.responses()[done]
        execute_tool = sc.executor()
        messages, responses = run_loop(sc.model(), execute_tool, sc.task, sc.tools, prefix)
        assert messages == conversation
        assert responses[-1] == sc.final_response()
        assert [e.name for e in execute_tool.ledger] == [
            c["name"] for t in range(done + 1, sc.turn_count) for c in sc.turn_calls(t)
        ]


def test_the_task_may_be_sent_as_a_text_block_and_results_as_text_blocks():
    sc = load_scenario("support-tickets")
    conversation = sc.conversation()
    conversation[0]["content"] = [{"type": "text", "text": sc.task}]
    result = conversation[2]["content"][0]["content"]
    conversation[2]["content"][0]["content"] = [{"type": "text", "text": result}]
    response = sc.model()(tools=sc.tools, messages=conversation[:3])
    assert response["content"] == sc.responses()[1]["content"]


def test_extra_keyword_arguments_are_ignored_and_calls_are_counted():
    sc = load_scenario("support-tickets")
    call_model = sc.model()
    assert isinstance(call_model, FakeModel) and call_model.calls == 0
    messages = sc.conversation()[:1]
    response = call_model(
        tools=sc.tools, messages=messages, model="claude-x", max_tokens=1024, system="Be brief."
    )
    assert response["content"] == sc.responses()[0]["content"]
    call_model(tools=sc.tools, messages=messages)
    assert call_model.calls == 2


def test_tools_and_messages_must_be_passed_by_keyword():
    sc = load_scenario("support-tickets")
    with pytest.raises(TypeError):
        sc.model()(sc.tools, sc.conversation()[:1])


def test_response_by_turn_matches_the_list_and_checks_its_range():
    sc = load_scenario("long-migration")
    responses = sc.responses()
    assert [sc.response(turn) for turn in range(1, sc.turn_count + 1)] == responses
    assert sc.final_response() == responses[-1]
    for bad in (0, sc.turn_count + 1):
        with pytest.raises(ValueError, match="turn must be between 1 and 9"):
            sc.response(bad)
