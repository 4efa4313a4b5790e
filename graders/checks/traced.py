"""The engines an exercise's ``grade`` builds on: its program (`Exercise.program`) recorded once
per scenario, watched from outside, and each check judging its own verdicts of that recording.

- :func:`grade_crash_matrix`: every crash point of the kinds its checks judge (``Check.kinds``),
  each check judged on its own kinds (:func:`judge_crash_matrix`); the scenarios side by side.
- :func:`grade_recorded`: one recording per scenario, turned into verdicts by the exercise's own
  function (the power-cut states, a matrix held to other rules) and judged by its own ``judge``.
"""

from __future__ import annotations

from collections.abc import Callable

from graders.checks.answer_cells import AnswerCells
from graders.checks.base import HINT_LINE, Check, exercise
from graders.checks.counting import counts_against, kind_of
from graders.checks.result import CheckResult, check_result, not_checked
from graders.grading.observers import harness_for
from graders.grading.recorded import TracedHarness
from graders.sandbox.serve import SandboxUnavailable
from graders.text import plural

__all__ = ["grade_recorded", "grade_crash_matrix", "run_crash_matrix", "judge_crash_matrix",
           "lower_first", "unseen_here"]


def grade_recorded(cells: AnswerCells, checks: list, timeout: float | None, fallback: bool, *,
                   what: str, verdicts_of: Callable[[TracedHarness, str], list],
                   judge: Callable[[object, list], CheckResult]) -> dict[str, CheckResult]:
    """Grade ``cells`` on ``checks``: the exercise's program run once per scenario.

    ``verdicts_of(harness, scenario)`` gets the verdicts of one recording, each crash state held
    to the exercise's ``rules``; ``judge(check,
    verdicts)`` turns them into the check's result. ``what`` says what needs the sandbox, for
    the one line a machine without one gets. Lines in the messages are lines of the part they
    are in (the answer cell, or the code the grader added), as the runner's program was made of
    them. ``fallback`` (a self-check) runs it on the best observer this machine has instead.
    """
    record = exercise(cells.notebook)
    submission, problem = record.program(cells)
    if problem:
        return {c.id: check_result(c.id, False, f"Could not run this check: {problem.rstrip('.')}.")
                for c in checks}
    try:
        harness, _note = harness_for(submission, timeout, allow_fallback=fallback,
                                     rules=record.rules)
    except SandboxUnavailable as why:
        raise SandboxUnavailable(f"{what} by watching your code's file operations from outside, "
                                 f"which needs Linux with strace and bubblewrap ({why})") from None
    by_scenario: dict[str, list] = {}
    results = {}
    for check in checks:
        if check.scenario not in by_scenario:
            by_scenario[check.scenario] = verdicts_of(harness, check.scenario)
        results[check.id] = judge(check, by_scenario[check.scenario])
    return results


def grade_crash_matrix(cells: AnswerCells, checks: list[Check], timeout,
                       fallback: bool = False) -> dict[str, CheckResult]:
    """Grade ``cells`` on ``checks``, each judged on its own crash point kinds."""
    record = exercise(cells.notebook)
    submission, problem = record.program(cells)
    if problem:
        return {c.id: check_result(c.id, False, f"Could not run your code: {problem}.")
                for c in checks}
    return run_crash_matrix(submission, checks, timeout, fallback, rules=record.rules)


def run_crash_matrix(submission, checks: list[Check], timeout,
                     fallback: bool = False, *, rules=None) -> dict[str, CheckResult]:
    """Run ``checks`` on ``submission``: one harness per scenario, side by side for a source;
    each crash state held to ``rules`` (the exercise's; default the checkpoint rules)."""
    from graders.parallel import side_by_side

    scenarios = list(dict.fromkeys(c.scenario for c in checks))

    def matrix(scenario: str) -> list:
        kinds = {"no_crash", *(k for c in checks if c.scenario == scenario for k in c.kinds)}
        harness, _note = harness_for(submission, timeout, allow_fallback=fallback, rules=rules)
        with harness:
            return harness.run_matrix(scenario, kinds)

    if submission.in_process or len(scenarios) == 1:
        verdicts = {scenario: matrix(scenario) for scenario in scenarios}
    else:
        # The work is in the harnesses' child processes; threads only wait for them.
        verdicts = dict(zip(scenarios, side_by_side(matrix, scenarios), strict=True))
    return {c.id: unseen_here(judge_crash_matrix(c, verdicts[c.scenario]), fallback)
            for c in checks}


#: What the judge says of a file written through a shared memory map.
_MAPPED = "shared memory map (mmap)"
#: ... and of a run whose files it could not follow (what such a write leads to later).
_UNFOLLOWED = "in a way the grader could not follow"


def unseen_here(result: CheckResult, selfcheck: bool) -> CheckResult:
    """In a self-check, a failure that rests only on writes no observer can see (through a
    shared memory map) reads "not checked here", with the reason and what to change; grading
    fails it, saying the same."""
    failed = [v for v in result.verdicts if not v.passed]
    if not selfcheck or result.passed or not any(_MAPPED in v.message for v in failed) or not all(
            _MAPPED in v.message or _UNFOLLOWED in v.message for v in failed):
        return result
    return not_checked(result.check_id, (
        "Not checked here: your save writes its bytes through a shared memory map (mmap), "
        "which makes no write call, so neither this self-check nor grading can see what the "
        "file held at a crash, and grading fails such a save. Write the bytes with f.write "
        "(or os.write) into the temp file before you rename it, and this check can run."),
        result.verdicts)


_KIND_WORDS = {
    "torn_write": "torn writes",
    "killed_before_rename": "kills just before a rename",
    "killed_during_tool": "kills while a tool runs",
    "killed_during_model_call": "kills while the model is called",
    "restart": "restarts after a kill that left files behind",
    "disk_full": "a disk that fills during a save",
}


def judge_crash_matrix(check: Check, verdicts: list) -> CheckResult:
    """Turn the verdicts of one scenario into ``check``'s result (its own kinds only)."""
    mine = [v for v in verdicts if kind_of(v) in (*check.kinds, "no_crash", "load")]
    load = [v for v in mine if kind_of(v) == "load"]
    if load:
        return check_result(check.id, False, f"Could not run your code on {check.scenario}: "
                            f"{load[0].message}", load)
    skipped = [v for v in mine if getattr(v, "skipped", False)]
    if skipped or not mine:
        reason = skipped[0].message if skipped else "the crash harness ran no crash point"
        return not_checked(check.id, f"Could not run this check here: {reason}", mine)
    crashes = [v for v in mine if kind_of(v) != "no_crash"]
    words = [_KIND_WORDS.get(k, k) for k in check.kinds]
    kinds = ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + words[-1]
    crash_points = plural(len(crashes), "crash point")
    done = f"Ran your code on {check.scenario} to the end and at {crash_points} ({kinds})"
    unfinished = [v for v in mine if kind_of(v) == "no_crash" and counts_against(check.id, v)]
    if unfinished:
        summary = (f"Ran your code on {check.scenario} with no crash at all, and that run "
                   "already fails this check (no_crash, below).")
        cause = lower_first(unfinished[0].message)
        result = check_result(check.id, False, f"Ran your code on {check.scenario} with no crash "
                              f"at all, and that run already fails: {cause}", mine)
        result.summary = summary
        return result
    failed = [v for v in mine if counts_against(check.id, v)]
    if not failed:
        return check_result(check.id, True, f"{done}: {check.success}.", mine)
    first = failed[0]
    more = (f" ({plural(len(failed) - 1, 'more crash point')} failed too)"
            if len(failed) > 1 else "")
    summary = f"{done}; {len(failed)} of {len(crashes)} failed."
    result = check_result(check.id, False, f"{summary} At {first.point}: {first.message}{more}"
                          f" {HINT_LINE}", mine)
    result.summary = summary
    return result


def lower_first(text: str) -> str:
    """``text`` to follow a colon: its first letter in lower case (never an acronym's)."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text
