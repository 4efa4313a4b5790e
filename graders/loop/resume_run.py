"""Resume's last step: run the loop on from the checked state, in memory, never saving.

A pending tool call is run again first (whether it had already run is the course's next lesson's
reconciliation); then the fake model is asked turn by turn until it answers, the max-turn cap
stops the loop, or the model or a tool refuses the resumed conversation.
"""

from __future__ import annotations

import copy

from fake_llm import ConversationError, FakeLLMError
from graders.loop.conversation import describe_call, tool_results
from graders.loop.resume_fields import finish
from graders.loop.resume_report import Problem, ResumeReport
from graders.text import plural

__all__ = ["run_on"]


def run_on(state: dict, sc, report: ResumeReport, *, max_turns: int,
           compaction_threshold: int) -> ResumeReport:
    """Run the loop on from ``state`` against scenario ``sc``'s fresh fake model and tools."""
    call_model = sc.model()
    execute_tool = sc.executor()
    report.state = state
    pending = state["pendingToolUse"]
    if pending is not None:
        report.steps.append(
            f"pendingToolUse: {describe_call(pending)} was in flight when the process died. "
            "Whether it finished is for the course's next lesson to reconcile; this routine runs "
            "it again."
        )
        if not _run_tool(pending, execute_tool, state, report):
            return finish(report, state["messages"], state["turns"])
    while not _capped(state, report, max_turns):
        _note_compaction(state, report, compaction_threshold)
        if not _one_turn(state, sc, call_model, execute_tool, report):
            break
    return finish(report, state["messages"], state["turns"])


def _run_tool(call: dict, execute_tool, state: dict, report: ResumeReport) -> bool:
    """Run ``call`` and record its result as the next turn; False when the tool refused it."""
    try:
        result = execute_tool(call["name"], call["input"])
    except FakeLLMError as err:
        report.problems.append(Problem("pendingToolUse", f"the tool refused the call: {err}"))
        return False
    report.ledger.append((call["name"], copy.deepcopy(call["input"])))
    state["messages"].append({
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": result}],
    })
    state["turns"] += 1
    state["pendingToolUse"] = None
    return True


def _capped(state: dict, report: ResumeReport, max_turns: int) -> bool:
    """True (and a step saying so) when the counted turns reached the max-turn cap."""
    if state["turns"] < max_turns:
        return False
    report.capped_at_turn = state["turns"]
    real = tool_results(state["messages"])
    note = "" if real == state["turns"] else f" (but {plural(real, 'turn')} really ran)"
    report.steps.append(f"The max-turn cap stopped the loop at turn {state['turns']}{note}.")
    return True


def _note_compaction(state: dict, report: ResumeReport, compaction_threshold: int) -> None:
    """Note the first turn at which tokensUsed reaches the threshold: compaction would run."""
    if report.compaction_at_turn is None and state["tokensUsed"] >= compaction_threshold:
        report.compaction_at_turn = state["turns"]
        report.steps.append(
            f"tokensUsed reached {state['tokensUsed']:,} (threshold "
            f"{compaction_threshold:,}): compaction would run here, at turn {state['turns']}."
        )


def _one_turn(state: dict, sc, call_model, execute_tool, report: ResumeReport) -> bool:
    """Ask the model once and run the tool it names; False when the loop is over."""
    messages = state["messages"]
    try:
        response = call_model(tools=sc.tools, messages=messages)
    except ConversationError as err:
        field_name = "pendingToolUse" if err.rule == "tool_result_missing" else "messages"
        report.problems.append(Problem(field_name, (
            f"the model refused the resumed conversation: {err.problem} "
            f"Expected: {err.expected}"
        )))
        return False
    state["tokensUsed"] += response["usage"]["output_tokens"]
    if response["stop_reason"] != "tool_use":
        report.finished = True
        report.steps.append(
            f"The model gave its final answer after turn {state['turns']}: task finished.")
        return False
    messages.append({"role": "assistant", "content": response["content"]})
    block = next(b for b in response["content"] if b["type"] == "tool_use")
    report.steps.append(f"Turn {state['turns'] + 1}: the model named {describe_call(block)}; "
                        "resume ran it.")
    return _run_tool({"id": block["id"], "name": block["name"], "input": block["input"]},
                     execute_tool, state, report)
