"""A small reference resume routine: read ``checkpoint.json`` and run the loop on from it.

Lesson 2 uses it to show, field by field, where resuming falls over when a checkpoint lacks one
of the six fields (Lesson 3 treats resume fully). It runs the rest of the task against a fresh
fake model and fake tools of a `fake_llm` scenario, in memory, and never saves anything.

``resume`` never raises on a bad checkpoint: everything it finds wrong is a `Problem` in the
report (:mod:`graders.loop.resume_report`), with the field it concerns and what resume ran into,
in the lesson's words. Its steps, in order: read what it was given (:func:`read_checkpoint`),
refuse a version it does not know before reading anything else (:func:`check_version`), check
the five other fields in the lesson's order and build the state to run on
(:func:`starting_state`), then run the loop on from it, in memory, never saving
(:func:`run_on`): a pending tool call is run again first (whether it had already run is the
course's next lesson's reconciliation), then the fake model is asked turn by turn until it
answers, the max-turn cap stops the loop, or the model or a tool refuses the resumed
conversation.

    >>> report = resume("checkpoint.json")          # a path, JSON text, or a dict
    >>> report.ok, report.finished
    (True, True)
    >>> print(report.to_text())
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from fake_llm import ConversationError, FakeLLMError, load_scenario
from graders.loop.protocol import SIX_FIELDS
from graders.loop.resume_report import (
    Problem,
    ResumeReport,
    dangling_tool_use,
    describe_call,
    tool_results,
)
from graders.text import plural

__all__ = ["resume", "ResumeReport", "Problem", "KNOWN_VERSIONS", "SIX_FIELDS",
           "DEFAULT_COMPACTION_THRESHOLD", "read_checkpoint", "check_version", "starting_state",
           "run_on"]

#: Where the context-engineering course's compaction would run, in tokens used so far.
DEFAULT_COMPACTION_THRESHOLD = 100_000


def resume(
    checkpoint: Any,
    *,
    scenario: str = "support-tickets",
    max_turns: int = 10,
    compaction_threshold: int = DEFAULT_COMPACTION_THRESHOLD,
) -> ResumeReport:
    """Resume the loop from ``checkpoint`` against ``scenario``'s fake model and tools.

    ``checkpoint`` is a dict, the JSON text of checkpoint.json, or a path to it (``None``: there
    is no checkpoint.json, as the harness reports a run that never saved). Resume checks
    the fields in the lesson's order, then runs the loop on (without saving): a pending tool
    call is run again (whether it had already run is Lesson 3's reconciliation), the loop stops
    at ``max_turns`` counted turns, and it notes the turn where ``tokensUsed`` first reaches
    ``compaction_threshold`` (where compaction would run). It never raises on a bad checkpoint.
    """
    report = ResumeReport()
    data = read_checkpoint(checkpoint, report)
    if data is None or not check_version(data, report):
        return report
    try:
        sc = load_scenario(scenario)
    except FakeLLMError as err:
        report.problems.append(Problem(None, f"cannot load the scenario to resume against: {err}"))
        return report
    state = starting_state(data, sc.task, report, max_turns=max_turns,
                           compaction_threshold=compaction_threshold)
    if state is None:
        return report
    return run_on(state, sc, report, max_turns=max_turns,
                  compaction_threshold=compaction_threshold)


def read_checkpoint(checkpoint: Any, report: ResumeReport) -> dict | None:
    """Turn a dict, JSON text or a path into the checkpoint dict, or record why not."""
    if checkpoint is None:
        report.problems.append(Problem(None, (
            "there is no checkpoint.json: nothing to resume from, so the task has to begin again "
            "from its first step."
        )))
        return None
    if isinstance(checkpoint, dict):
        return copy.deepcopy(checkpoint)
    if isinstance(checkpoint, bytes):
        checkpoint = checkpoint.decode("utf-8", errors="replace")
    if isinstance(checkpoint, os.PathLike) or (
        isinstance(checkpoint, str) and checkpoint.strip()
        and not checkpoint.lstrip().startswith(("{", "[")) and "\n" not in checkpoint
    ):
        path = Path(checkpoint)
        if not path.exists():
            report.problems.append(Problem(None, (
                f"there is no checkpoint at {path}: nothing to resume from, so the task has to "
                "begin again from its first step."
            )))
            return None
        try:
            checkpoint = path.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            report.problems.append(Problem(None, (
                f"{path} could not be read ({err.strerror}): nothing to resume from."
            )))
            return None
        report.steps.append(f"Read {path} ({len(checkpoint.encode()):,} bytes).")
    if not isinstance(checkpoint, str):
        report.problems.append(Problem(None, (
            f"resume was given a {type(checkpoint).__name__}; it reads a checkpoint as a dict, "
            "JSON text or a path to checkpoint.json."
        )))
        return None
    try:
        data = json.loads(checkpoint)
    except json.JSONDecodeError as err:
        report.problems.append(Problem(None, (
            f"it is not valid JSON ({err.msg}, character {err.pos:,} of {len(checkpoint):,}): "
            "a torn write. The parse fails, and this file was the only copy of the scene, so the "
            "task has to begin again from its first step."
        )))
        return None
    if not isinstance(data, dict):
        report.problems.append(Problem(None, (
            f"it holds a JSON {type(data).__name__}, not an object with the six fields."
        )))
        return None
    report.steps.append("Parsed the checkpoint: fields " + ", ".join(data) + ".")
    return data


#: The protocol versions this routine knows how to read.
KNOWN_VERSIONS = (1,)


def check_version(data: dict, report: ResumeReport) -> bool:
    """version: refuse what we do not know, before reading anything else."""
    if "version" not in data:
        report.problems.append(Problem("version", (
            "there is no version, so resume cannot tell whether it knows this checkpoint's "
            "format. It refuses to load it rather than parse ahead and misread it."
        )))
        return False
    if data["version"] not in KNOWN_VERSIONS:
        report.problems.append(Problem("version", (
            f"version {data['version']!r} is not one this resume knows "
            f"({', '.join(map(str, KNOWN_VERSIONS))}). It refuses to load it and says so, "
            "rather than parse ahead and misread it."
        )))
        return False
    report.steps.append(f"version {data['version']}: a format this resume knows.")
    return True


def starting_state(data: dict, scenario_task: str, report: ResumeReport, *, max_turns: int,
                   compaction_threshold: int) -> dict | None:
    """The state to run on from, after checking task, messages, turns, tokensUsed and
    pendingToolUse; ``None`` when one of them stops resume (the report says why)."""
    task = data.get("task")
    if not check_task(task, scenario_task, report):
        return None
    messages = check_messages(data, task, report)
    if messages is None:
        return None
    turns = check_turns(data, messages, report, max_turns)
    tokens = check_tokens(data, report, compaction_threshold)
    if not check_pending(data, messages, report):
        finish(report, messages, turns)
        return None
    pending = data.get("pendingToolUse")
    return {
        "version": data["version"],
        "task": task,
        "turns": turns,
        "tokensUsed": tokens,
        "messages": messages,
        "pendingToolUse": pending if isinstance(pending, dict) else None,
    }


def check_task(task, scenario_task: str, report: ResumeReport) -> bool:
    """task: which task is this? False when it belongs to another task."""
    if not isinstance(task, str):
        report.problems.append(Problem("task", (
            "there is no task, so resume cannot say which task this checkpoint belongs to, nor "
            "report to anyone what it is resuming."
        )))
        report.steps.append("Resuming an unnamed task.")
    elif task != scenario_task:
        report.problems.append(Problem("task", (
            f"the checkpoint's task is {task!r}, but this run is for {scenario_task!r}: "
            "it belongs to another task, so resume stops."
        )))
        return False
    else:
        report.steps.append(f"Resuming the task {task!r}.")
    return True


def check_messages(data: dict, task, report: ResumeReport) -> list | None:
    """messages: the conversation the model knows the task by (a new one from the task alone if
    there is none); ``None`` when there is neither messages nor a task to start from."""
    messages = data.get("messages")
    if isinstance(messages, list) and messages:
        report.steps.append(f"messages: {plural(len(messages), 'message')}, "
                            f"{plural(tool_results(messages), 'tool result')} recorded.")
        return messages
    start = task if isinstance(task, str) else None
    if start is None:
        report.problems.append(Problem("messages", (
            "there are no messages and no task: nothing to start the model from."
        )))
        return None
    report.problems.append(Problem("messages", (
        "there are no messages, so the model starts the task from nothing: a brand-new task "
        "from zero, while every side effect of the tool calls already made remains (see the "
        "ledger: they run again)."
    )))
    report.steps.append("No messages: started a new conversation from the task alone.")
    if isinstance(data.get("pendingToolUse"), dict):
        report.steps.append("Dropped pendingToolUse: a new conversation has no call to answer.")
    data["pendingToolUse"] = None
    return [{"role": "user", "content": start}]


def check_turns(data: dict, messages: list, report: ResumeReport, max_turns: int) -> int:
    """turns: where the turn counter carries on from (0 if there is none)."""
    turns_run = tool_results(messages)
    turns = data.get("turns")
    if not isinstance(turns, int) or isinstance(turns, bool):
        turns = 0
        late = f" {plural(turns_run, 'turn')} late" if turns_run else " late"
        report.problems.append(Problem("turns", (
            f"there is no turn count, so it restarts at 0 although {plural(turns_run, 'turn')} "
            f"already ran: the max-turn cap of {max_turns} fires{late}."
        )))
    elif turns != turns_run and "messages" in data:
        report.problems.append(Problem("turns", (
            f"turns says {turns}, but messages record {plural(turns_run, 'tool result')}: "
            "the counter and "
            "the conversation disagree, so the max-turn cap fires at the wrong turn."
        )))
    else:
        report.steps.append(f"turns: {plural(turns, 'turn')} ran; counting on from there "
                            f"(the cap is {max_turns}).")
    return turns


def check_tokens(data: dict, report: ResumeReport, compaction_threshold: int) -> int:
    """tokensUsed: what compaction is judged against (0 if there is none)."""
    tokens = data.get("tokensUsed")
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        report.problems.append(Problem("tokensUsed", (
            "there is no token count, so it restarts at 0: the compaction threshold "
            f"({compaction_threshold:,} tokens) is judged against the tokens spent since resuming "
            "only, and compaction runs late or never. It can be re-estimated from the messages, "
            "not exactly: the usage figures of the past responses are no longer there."
        )))
        return 0
    report.steps.append(f"tokensUsed: {tokens:,} tokens so far "
                        f"(compaction at {compaction_threshold:,}).")
    return tokens


def check_pending(data: dict, messages: list, report: ResumeReport) -> bool:
    """pendingToolUse: was a tool call in flight? False when the record cannot be used."""
    dangling = dangling_tool_use(messages)
    pending = data.get("pendingToolUse")
    if "pendingToolUse" not in data or pending is None:
        if dangling is not None:
            what = "is missing" if "pendingToolUse" not in data else "is null"
            report.problems.append(Problem("pendingToolUse", (
                f"pendingToolUse {what}, yet the last message names {describe_call(dangling)} "
                "with no result: a tool call was in flight when the process died, and resume "
                "does not see it, so it cannot reconcile it."
            )))
        elif "pendingToolUse" not in data:
            report.problems.append(Problem("pendingToolUse", (
                "there is no pendingToolUse, so resume cannot tell whether a tool call was in "
                "flight when the process died; it assumes none was."
            )))
        else:
            report.steps.append("pendingToolUse: null, no tool call was in flight.")
    elif not isinstance(pending, dict) or not {"id", "name", "input"} <= set(pending):
        report.problems.append(Problem("pendingToolUse", (
            f"pendingToolUse is {json.dumps(pending)}, not a record {{id, name, input}}: resume "
            "cannot tell which call was in flight."
        )))
        return False
    elif dangling is None or dangling.get("id") != pending["id"]:
        report.problems.append(Problem("pendingToolUse", (
            f"pendingToolUse names {describe_call(pending)}, but the last message does not: "
            "the record and the conversation disagree."
        )))
        return False
    return True


def finish(report: ResumeReport, messages: list, turns: int) -> ResumeReport:
    """Note where resume stopped: the turns the messages hold and the turns counted."""
    report.turns_run = tool_results(messages)
    report.turns_counted = turns
    return report


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
