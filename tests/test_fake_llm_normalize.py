"""One reading of a conversation (``fake_llm.normalize``), shared by the fake model and the judge.

Every way of writing a conversation that the Messages API reads alike (issue 16 item 1; issue 18
E1) gets the same answer from the fake model and the same verdict from the judge, on Level 2's
one-call turns and Level 4's several-call turns; every way the API reads differently, or refuses,
is refused by both.
"""

from __future__ import annotations

import copy
import json

import pytest

from fake_llm import ConversationError, load_scenario, validate_conversation
from fake_llm.normalize import (
    canonical_message,
    normalize_content,
    normalize_conversation,
    result_text,
    same_message,
)
from graders.judge import checkpoint_rules, parallel_rules
from graders.judge.recording import Observation

ONE = load_scenario("support-tickets")
MANY = load_scenario("incident-triage")  # turns of 3, 1 and 2 calls


def _text_blocks(conv):
    for message in conv[2::2]:
        for block in message["content"]:
            block["content"] = [{"type": "text", "text": block["content"]}]
    return conv


def _is_error_false(conv):
    for message in conv[2::2]:
        for block in message["content"]:
            block["is_error"] = False
    return conv


def _task_block(conv):
    conv[0]["content"] = [{"type": "text", "text": conv[0]["content"]}]
    return conv


def _task_in_two_blocks(conv):
    task = conv[0]["content"]
    conv[0]["content"] = [{"type": "text", "text": task[:10]}, {"type": "text", "text": task[10:]}]
    return conv


def _result_in_two_blocks(conv):
    block = conv[2]["content"][0]
    text = block["content"]
    block["content"] = [{"type": "text", "text": text[:5]}, {"type": "text", "text": text[5:]}]
    return conv


def _cache_control(conv):
    conv[2]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return conv


def _reversed_results(conv):
    for message in conv[2::2]:
        message["content"].reverse()
    return conv


def _all_at_once(conv):
    return _reversed_results(_cache_control(_is_error_false(_text_blocks(_task_block(conv)))))


#: Rewrites the API reads as the same conversation.
SAME = {
    "tool results as text blocks": _text_blocks,
    "is_error false": _is_error_false,
    "the task as a text block": _task_block,
    "the task in two text blocks": _task_in_two_blocks,
    "a tool result in two text blocks": _result_in_two_blocks,
    "cache_control on a block": _cache_control,
    "a turn's results in another order": _reversed_results,
    "all of them at once": _all_at_once,
}


def _is_error_true(conv):
    conv[2]["content"][0]["is_error"] = True
    return conv


def _result_stripped(conv):
    block = conv[2]["content"][0]
    block["content"] = block["content"][:-1]
    return conv


def _text_after_results(conv):
    conv[2]["content"].append({"type": "text", "text": "Here are the results."})
    return conv


def _task_changed(conv):
    conv[0]["content"] = conv[0]["content"] + " please"
    return conv


#: Rewrites that change what the model reads: the script departs.
DIFFERENT = {
    "is_error true": _is_error_true,
    "a tool result changed": _result_stripped,
    "text beside the results": _text_after_results,
    "another task": _task_changed,
}


def _model_accepts(sc, conv) -> bool:
    try:
        sc.model()(tools=sc.tools, messages=conv)
    except ConversationError:
        return False
    return True


def _judge(sc, conv):
    """The verdict on a checkpoint holding ``conv`` at the last model call of the run."""
    results = sum(len(m["content"]) for m in conv[2::2])
    state = {"version": 1, "task": sc.task, "turns": (len(conv) - 1) // 2, "tokensUsed": 10,
             "messages": conv, "pendingToolUse": None}
    pairs = list(zip(sc.tool_calls, sc.tool_results, strict=True))[:results]
    ledger = [{"index": k, "name": c["name"], "input": c["input"], "result": r}
              for k, (c, r) in enumerate(pairs, 1)]
    point = f"killed_during_model_call_{sc.turn_count}"
    text = json.dumps(state)
    obs = Observation(sc.name, point, "killed_during_model_call", "killed", checkpoint=text,
                      checkpoint_bytes=len(text), ledger=ledger)
    rules = parallel_rules if sc.parallel else checkpoint_rules
    return rules.check(obs, sc, point)


@pytest.mark.parametrize(("sc", "rewrite"), [
    (sc, rewrite) for sc in (ONE, MANY) for rewrite in SAME
    if sc.parallel or rewrite != "a turn's results in another order"],
    ids=lambda v: getattr(v, "name", v))
def test_what_the_api_reads_alike_the_model_and_the_judge_accept_alike(sc, rewrite):
    conv = SAME[rewrite](sc.conversation())
    assert conv != sc.conversation()
    validate_conversation(conv, sc.tools)
    assert normalize_conversation(conv) == normalize_conversation(sc.conversation())
    response = sc.model()(tools=sc.tools, messages=conv)
    assert response == sc.final_response()
    verdict = _judge(sc, conv)
    assert verdict.passed, verdict.message


@pytest.mark.parametrize("sc", [ONE, MANY], ids=lambda sc: sc.name)
@pytest.mark.parametrize("rewrite", DIFFERENT, ids=str)
def test_what_the_api_reads_differently_both_refuse(sc, rewrite):
    conv = DIFFERENT[rewrite](sc.conversation())
    assert not _model_accepts(sc, conv)
    verdict = _judge(sc, conv)
    assert not verdict.passed
    assert set(verdict.evidence["problems"]) & {"script_mismatch", "conversation"}, verdict.message


def test_what_the_api_refuses_stays_refused_with_its_400():
    conv = ONE.conversation()
    conv[2]["content"][0]["content"] = {"text": "a dict is not a tool result"}
    with pytest.raises(ConversationError) as caught:
        ONE.model()(tools=ONE.tools, messages=conv)
    assert caught.value.rule == "content_invalid" and caught.value.status_code == 400
    assert caught.value.body["error"]["type"] == "invalid_request_error"
    conv = ONE.conversation()
    conv[2]["content"][0]["is_error"] = "no"
    with pytest.raises(ConversationError) as caught:
        validate_conversation(conv)
    assert caught.value.rule == "content_invalid"
    conv = MANY.conversation()
    conv[2]["content"].insert(0, {"type": "text", "text": "results:"})
    with pytest.raises(ConversationError) as caught:
        MANY.model()(tools=MANY.tools, messages=conv)
    assert caught.value.rule == "tool_result_not_first"
    assert not _judge(MANY, conv).passed


def test_the_reading_itself():
    assert normalize_content("hi") == [{"type": "text", "text": "hi"}]
    assert normalize_content([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == [
        {"type": "text", "text": "ab"}]
    assert result_text(None) == result_text("") == result_text([]) == ""
    assert result_text([{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]) == "xy"
    image = [{"type": "image", "source": {}}]
    assert result_text(image) == image
    a = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "1"},
                                     {"type": "tool_result", "tool_use_id": "a", "content": "2"}]}
    b = copy.deepcopy(a)
    b["content"].reverse()
    b["content"][0]["is_error"] = False
    assert same_message(a, b) and canonical_message(a) == canonical_message(b)
    b["content"][0]["is_error"] = True
    assert not same_message(a, b)
    # shapes it does not know are kept, and equal nothing else
    for odd in (None, 3, "text", {"role": "user"}, {"role": "user", "content": {"x": 1}},
                {"role": "user", "content": ["text", 2]}, {"role": "user", "content": {1, 2}}):
        assert canonical_message(odd) == canonical_message(copy.copy(odd))
        assert not same_message(odd, a)
