"""Resume's second step: check the six fields in the lesson's order, noting where each falls over.

Each check appends to the report (a step when the field is usable, a `Problem` when it is not) and
says whether resume can go on. :func:`check_version` comes first, on its own: resume refuses a
format it does not know before it reads anything else. :func:`starting_state` checks the five
others and builds the state the loop runs on from, or ``None`` when resume stops there.
"""

from __future__ import annotations

import json

from graders.loop.conversation import dangling_tool_use, describe_call, tool_results
from graders.loop.resume_report import Problem, ResumeReport
from graders.text import plural

__all__ = ["KNOWN_VERSIONS", "check_version", "starting_state", "finish"]

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
            "only, and compaction runs late or never. Re-estimating would need the usage of every "
            "past response, which is no longer there."
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
