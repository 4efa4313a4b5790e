"""Level 1's ``l1_saves_all_six``: the student's save with the lesson's loop, to the end and
killed while each tool runs; checkpoint.json read back field by field.

The fields are held to what the lesson's loop (:mod:`graders.loop.lesson_loop`, the grader's own
code) saves on the same scenario, run in memory. Watched from outside, the run is also held to
what the grader read from disk at each call (``Observation.run_problems``), as Levels 2-4 are.
"""

from __future__ import annotations

import copy
from typing import Any

from graders.checks.base import CHECKS
from graders.checks.result import CheckResult, check_result, not_checked
from graders.loop import lesson_loop
from graders.loop.protocol import SIX_FIELDS
from graders.text import plural, short_json

__all__ = [
    "grade_saves_all_six", "MISSING_IN_STARTER", "WITHOUT",
]

#: The fields the Level 1 starter's checkpoint lacks.
MISSING_IN_STARTER = ("version", "task", "turns", "tokensUsed", "pendingToolUse")

#: Per field: what resume runs into without it (short, for check messages).
WITHOUT = {
    "version": "resume cannot tell which protocol version wrote the file, so it cannot refuse a "
    "format it does not know",
    "task": "resume cannot name the task the checkpoint belongs to, nor tell the user which task "
    "it is resuming",
    "turns": "the turn count restarts at zero, so a max-turn cap fires late or never",
    "tokensUsed": "the token count restarts at zero, so the compaction threshold is misjudged",
    "messages": "the model has no record of the conversation, so the task starts over",
    "pendingToolUse": "resume cannot tell a tool call was left dangling",
}


def _reference_saves(scenario_name: str) -> list[dict]:
    """The states the lesson's loop saves on ``scenario_name``, in order (run in memory)."""
    from fake_llm import load_scenario

    saves: list[dict] = []
    run_agent = lesson_loop.bound_to(lambda state: saves.append(copy.deepcopy(state)))
    scenario = load_scenario(scenario_name)
    run_agent(scenario.task, copy.deepcopy(scenario.tools), scenario.model(),
              scenario.executor())
    return saves


_TYPES = {
    "version": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "task": ("text", lambda v: isinstance(v, str)),
    "turns": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "tokensUsed": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "messages": ("a list of messages", lambda v: isinstance(v, list)),
    "pendingToolUse": ("null or {id, name, input}", lambda v: v is None or isinstance(v, dict)),
}


def _compare_fields(on_disk, expected: dict) -> list[str]:
    """What is wrong with a checkpoint read from disk, field by field (empty: nothing)."""
    if not isinstance(on_disk, dict):
        return [f"checkpoint.json holds {type(on_disk).__name__} JSON, not an object with the "
                "six fields"]
    absent = [f for f in SIX_FIELDS if f not in on_disk]
    problems = []
    if len(absent) == 1:
        problems.append(f"it lacks {absent[0]}")
    elif absent:
        # Naming them would answer MISSING_FIELDS (the check above) for the student.
        problems.append(f"it lacks {len(absent)} of the six fields (it has "
                        f"{len(SIX_FIELDS) - len(absent)}); compare the keys save_checkpoint "
                        "writes with the six fields of lesson 01")
    for name in SIX_FIELDS:
        if name in absent:
            continue
        value, want = on_disk[name], expected[name]
        kind, ok = _TYPES[name]
        if not ok(value):
            problems.append(f"{name} is {short_json(value)}, expected {kind} ({short_json(want)})")
        elif name == "pendingToolUse" and value is not None and want is not None:
            got = {k: value.get(k) for k in ("id", "name", "input")}
            if got != want:
                problems.append(f"pendingToolUse is {short_json(value)}, expected the "
                                f"dangling call {short_json(want)}")
        elif name == "messages" and value != want:
            problems.append(f"messages holds {len(value)} messages that differ from the "
                            f"{len(want)} the loop held")
        elif value != want:
            problems.append(f"{name} is {short_json(value)}, the loop held {short_json(want)}")
    return problems


def _read_checkpoint(observation) -> tuple[Any, str | None]:
    """(parsed checkpoint, problem) from a harness observation of the disk."""
    if observation.parse_error is not None:
        return None, f"checkpoint.json {observation.parse_error}"
    if observation.checkpoint is None:
        return None, "there was no checkpoint.json in the working directory"
    return observation.state, None


def _how_it_ended(observation) -> str | None:
    """Why a run that should have finished did not, from the observation (None: it finished)."""
    if observation.ended == "finished":
        return None
    return f"the run {observation.detail}"


def grade_saves_all_six(submission, where: str, timeout: float | None,
                         fallback: bool = False) -> CheckResult:
    """Run the student's save with the reference loop: to the end, and killed while each tool
    runs (a save that skips any save point is caught at its own tool)."""
    from graders.grading.observers import harness_for

    check_id = "l1_saves_all_six"
    scenario = CHECKS[check_id].scenario
    saves = _reference_saves(scenario)
    pending_saves = [i for i, s in enumerate(saves) if s["pendingToolUse"] is not None]
    done = f"Ran {where} with the lesson's loop on {scenario}"
    harness, _note = harness_for(submission, timeout, allow_fallback=fallback)
    with harness:
        finished = harness.run_point(scenario, "no_crash")
        if finished.ended == "skipped":
            return not_checked(check_id, f"Could not run this check here: {finished.detail}")
        if finished.ended == "not_loaded":
            return check_result(check_id, False, f"Could not run {where}: {finished.detail}")
        problem = _after_the_full_run(finished, saves[-1], done)
        if problem:
            return check_result(check_id, False, problem)
        failures = []
        for tool_k, at in enumerate(pending_saves, 1):
            failure = _killed_at_tool(harness, scenario, tool_k, saves[at], done)
            if failure:
                failures.append(failure)
    if failures:
        more = len(failures) - 1
        return check_result(check_id, False, failures[0] + (
            f" Killed while {plural(more, 'other tool')} ran, it failed too." if more else ""))
    final = saves[-1]
    calls = ", ".join(saves[at]["pendingToolUse"]["name"] for at in pending_saves)
    return check_result(check_id, True, (
        f"{done}: after the full run checkpoint.json holds all six fields as the loop held them "
        f"(version {final['version']}, turns {final['turns']}, tokensUsed {final['tokensUsed']}, "
        f"{len(final['messages'])} messages, pendingToolUse null), and killed while each of its "
        f"{len(pending_saves)} tools ran it names that call in pendingToolUse ({calls})."
    ))


def _after_the_full_run(finished, final: dict, done: str) -> str | None:
    """What is wrong with the run to its end (a student message), or None."""
    ended = _how_it_ended(finished)
    if ended:
        return (f"{done}: {ended}. Expected the run to finish and leave the six fields in "
                "checkpoint.json.")
    if finished.run_problems:
        return f"{done}. {finished.run_problems[0]['message']}"
    checkpoint, problem = _read_checkpoint(finished)
    if problem:
        return (f"{done}; after the full run {problem}. Expected save_checkpoint to write "
                "checkpoint.json in the current directory.")
    problems = _compare_fields(checkpoint, final)
    if problems:
        absent = [f for f in SIX_FIELDS if isinstance(checkpoint, dict) and f not in checkpoint]
        why = f"without {absent[0]}, {WITHOUT[absent[0]]}" if len(absent) == 1 else ""
        return (f"{done}. After the full run checkpoint.json: " + "; ".join(problems)
                + ". Expected all six fields as the loop held them"
                + (f" ({why})." if why else "."))
    return None


def _killed_at_tool(harness, scenario: str, tool_k: int, expected: dict, done: str
                    ) -> str | None:
    """What is wrong with checkpoint.json killed while tool ``tool_k`` ran, or None."""
    from graders.inprocess.support import HarnessError

    try:
        killed = harness.run_point(scenario, f"killed_during_tool_{tool_k}")
    except HarnessError as exc:
        return f"{done}, but could not kill it while tool {tool_k} ran: {exc}."
    checkpoint, problem = _read_checkpoint(killed)
    if problem:
        return (f"{done}, killed while tool {tool_k} ran: {problem}. Expected the save made "
                "just before the tool ran.")
    problems = _compare_fields(checkpoint, expected)
    if problems:
        return (f"{done}, killed while tool {tool_k} ran. checkpoint.json: "
                + "; ".join(problems) + ". Expected the fields the loop held at its last save, "
                "with pendingToolUse naming the call in flight (copy each field from state; do "
                "not write a fixed value).")
    return None
