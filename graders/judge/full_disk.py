"""A disk that fills during a save: the previous checkpoint must survive.

The sandbox fills the disk once tool :func:`fill_call` has been served
(:meth:`graders.sandbox.session.Session.fill_disk_at`): from then on a write that crosses the
limit writes part of its bytes and returns a short count, and the next one fails, as on a full
disk. A save that writes once and ignores the count renames a truncated file over the checkpoint;
a save that writes in place leaves a torn one. :func:`judge_full_disk` holds every state from
then on (at each call, at the end) to the checkpoint on disk when the disk filled: readable, and
recording no fewer results. ``run_agent`` raising an OSError there is fine.
"""

from __future__ import annotations

import json
from typing import Any

from graders.judge.budget import OverBudget
from graders.judge.matrix import build_matrix
from graders.judge.observation import describe_error
from graders.judge.recording import Recording
from graders.judge.restarts import disk_after, unreadable
from graders.judge.run_problems import run_problems
from graders.judge.verdict import Verdict
from graders.judge.verdicts import load_message
from graders.loop.conversation import tool_results

__all__ = ["FULL_DISK", "fill_call", "judge_full_disk"]

#: The kind of a full-disk run's verdict (one of Level 2's atomic-save checks' kinds).
FULL_DISK = "disk_full"


def fill_call(scenario) -> tuple[str, int]:
    """The call after which the disk fills: the tool in the middle of the run."""
    return "tool", max(1, (len(scenario.tool_calls) + 1) // 2)


def _results(moment) -> int | None:
    """How many tool results checkpoint.json at ``moment`` records (None: no checkpoint)."""
    if moment.kind != "file" or unreadable(moment):
        return None
    return tool_results(json.loads(moment.data.decode("utf-8")).get("messages") or [])


def judge_full_disk(rec: Recording, scenario) -> Verdict | None:
    """The verdict of the run ``rec`` whose disk filled at :func:`fill_call` (None when the
    disk could not be filled: the run never reached that call, or this machine refused)."""
    _op, k = fill_call(scenario)
    name = scenario.tool_calls[k - 1]["name"]
    point = f"{FULL_DISK}_after_tool_{k}"
    done = (f"Filled the disk while tool {k} ({name}) ran, so the saves after it could not "
            "write in full (a write that crossed the limit wrote part of its bytes, and the next "
            "one failed, as on a full disk)")
    evidence: dict[str, Any] = {"filled": rec.filled}

    def verdict(problem: str | None, text: str) -> Verdict:
        if problem:
            evidence.update(problem=problem, problems=[problem])
        return Verdict(scenario.name, point, FULL_DISK, problem is None, text, evidence)

    message = load_message(rec)
    if message:
        return verdict("disk_full_not_run", f"Could not run your code to fill its disk: {message}")
    if rec.filled is None or rec.filled.get("error"):
        # never reached (the recorded run's verdicts say why) or not fillable on this machine:
        # no verdict rather than one that fails the check for the grader's own limits
        return None
    try:
        matrix = build_matrix(rec, scenario)
    except OverBudget as exc:
        return verdict("over_budget", str(exc))
    whole = run_problems(rec, matrix.discrepancies, matrix.channel)
    if whole:
        return verdict(*whole[0])
    states = disk_after(matrix, 0)
    seqs = [(m.op.frame or {}).get("seq") if m.op else None for m, _ in states]
    if rec.filled["seq"] not in seqs:
        return verdict("disk_full_not_placed", f"{done}, but the grader could not place that "
                       "call among your file operations.")
    states = states[seqs.index(rec.filled["seq"]):]
    before = _results(states[0][0])
    for moment, where in states[1:]:
        problem = _after_the_fill(moment, before)
        if problem:
            what, resume = problem
            return verdict("disk_full_lost", (
                f"{done}: {where} checkpoint.json {what}, so resume would {resume}. Expected the "
                "checkpoint on disk when the disk filled (or a later complete save) to survive a "
                "save that cannot finish; run_agent raising an OSError there is fine."))
    if rec.ended == "hung":
        return verdict("hung", f"{done}: your code was {rec.detail}.")
    how = (f"raised {describe_error(rec.error)}" if rec.ended == "raised" and rec.error else
           "returned" if rec.ended == "finished" else rec.detail or "ended")
    return verdict(None, f"{done}: checkpoint.json stayed a complete save to the end, and your "
                         f"run_agent {how}.")


def _after_the_fill(moment, before: int | None) -> tuple[str, str] | None:
    """(what is wrong with checkpoint.json at ``moment``, what resume would do), or None."""
    problem = unreadable(moment)
    if problem:
        return problem, "find nothing to resume from"
    if moment.kind == "absent":
        return None if before is None else (
            "was gone, though there was one when the disk filled", "start the task over")
    results = _results(moment)
    if before is not None and results is not None and results < before:
        return (f"recorded {results} tool results, fewer than the {before} on disk when the "
                "disk filled", "run again tools that had already run")
    return None
