"""A recording's verdicts: every moment of every crash point checked as resume would read it."""

from __future__ import annotations

import dataclasses

from graders.judge.budget import OverBudget, over_budget_message
from graders.judge.checkpoint_rules import check, load_error_verdict
from graders.judge.crash_points import NO_CRASH
from graders.judge.matrix import Matrix, build_matrix
from graders.judge.moments import in_save, moment_words
from graders.judge.observation import describe_error
from graders.judge.recording import Recording
from graders.judge.run_problems import CHANNEL, UNOBSERVED, run_problems
from graders.judge.verdict import LOAD_POINT, Verdict

__all__ = ["judge", "load_message", "over_budget_verdict", "UNOBSERVED", "CHANNEL",
           "OVER_BUDGET"]

#: The problem code of a run that cost the grader more than one run may.
OVER_BUDGET = "over_budget"


def over_budget_verdict(scenario: str, message: str) -> Verdict:
    """The single verdict of a run that cost the grader more than one run may."""
    return Verdict(scenario, LOAD_POINT, LOAD_POINT, False, message,
                   {"problem": OVER_BUDGET, "problems": [OVER_BUDGET]})


def load_message(rec: Recording) -> str | None:
    """Why the submission could not even be loaded, or its run not graded (a student
    message), or None."""
    if rec.over_budget:
        return over_budget_message(rec.over_budget)
    if rec.ended != "not_loaded":
        if rec.ended in ("hung", "died") and not rec.loaded:
            if rec.ended == "hung":
                return ("Your code was still running when its time was up, before run_agent was "
                        "ever called: something at the top level never finishes (an infinite "
                        "loop, or a call that waits for input). Keep top-level code to "
                        "definitions.")
            return ("Your code ended the process while it was being loaded, before run_agent "
                    "was ever called: remove the top-level call that ends it (os._exit, "
                    "sys.exit, a signal).")
        return None
    load = rec.load or {}
    if load.get("missing"):
        names = " and ".join(f"`{m}`" for m in load["missing"])
        verb = "is" if len(load["missing"]) == 1 else "are"
        return (f"{names} {verb} not defined at the top level of your code: the grader calls "
                "`run_agent(task, tools, call_model, execute_tool)`, and `run_agent` saves "
                "through `save_checkpoint(state)`.")
    error = load.get("error") or {}
    if error.get("type") == "SystemExit":
        return ("Your code called sys.exit() while it was being loaded, before run_agent was "
                "ever called. Top-level code runs once when the file is loaded: keep it to "
                "definitions.")
    return (f"Your code raised {describe_error(error)} while it was being loaded, before "
            "run_agent was ever called. Top-level code runs once when the file is loaded: keep "
            "it to definitions.")


def _label(point, moment) -> str:
    """The crash point's label, made exact for one moment inside a save ("after 1 of 2,913
    bytes of a write in save 2 (...)", "just before a rename in save 2 (...)")."""
    if point.kind not in ("torn_write", "killed_before_rename") or moment.op is None:
        return point.label
    where = point.label[point.label.find("("):] if "(" in point.label else ""
    return in_save(moment_words(moment), point.index, where)


def judge(rec: Recording, scenario, kinds=None, *,
          checker=check) -> tuple[list[Verdict], Matrix | None]:
    """Check every moment of every crash point of ``rec`` (of ``kinds``, if given).

    Returns the verdicts in timeline order (a crash point fails at its first moment that fails)
    and the matrix they came from (None when the submission could not be loaded). ``checker``
    judges one moment: ``checker(observation, scenario, crash_point) -> Verdict`` (by default
    :func:`graders.judge.checkpoint_rules.check`; an exercise with other rules, such as several tool
    calls in one turn, passes its own).
    """
    if rec.over_budget:
        return [over_budget_verdict(scenario.name, load_message(rec))], None
    problem = load_message(rec)
    if problem:
        return [load_error_verdict(scenario.name, problem)], None
    try:
        matrix = build_matrix(rec, scenario)
    except OverBudget as exc:
        return [over_budget_verdict(scenario.name, str(exc))], None
    verdicts = []
    for pm in matrix.points:
        if kinds is not None and pm.point.kind not in kinds and pm.point.kind != NO_CRASH:
            continue
        chosen = None
        checked = 0
        seen: set = set()
        for moment in pm.moments:
            # inside one crash point the calls are the same: one disk state, one verdict
            disk = (moment.kind, moment.data)
            if disk in seen:
                continue
            seen.add(disk)
            point = dataclasses.replace(pm.point, label=_label(pm.point, moment))
            verdict = checker(matrix.observation(pm, moment), scenario, point)
            checked += 1
            if chosen is None or (chosen.passed and not verdict.passed):
                chosen = verdict
                if not verdict.passed:
                    break
        chosen.evidence["moments_checked"] = checked
        chosen.evidence["moments"] = len(pm.moments)
        verdicts.append(chosen)
    final = verdicts[-1]
    problems = run_problems(rec, matrix.discrepancies, matrix.channel)
    if problems:
        final.passed = False
        keys = [k for k, _ in problems]
        final.evidence["problems"] = keys + list(final.evidence.get("problems") or [])
        final.evidence["problem"] = keys[0]
        final.message = " ".join(text for _, text in problems) + (
            f" Also: {final.message}" if final.message else "")
    return verdicts, matrix
