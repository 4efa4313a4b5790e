"""Level 2's checks (``02_two_latent_failures``): an atomic save and save point A, each judged on
its own crash points of the crash matrix, on the visible scenario and on a longer hidden one.
"""

from __future__ import annotations

from graders.checks.answer_cells import cell_code, relocate, split_cells, syntax_problem
from graders.checks.base import (
    ANSWER_CELLS,
    ATOMIC_KINDS,
    HIDDEN_SCENARIO,
    HINT_LINE,
    LEVEL2,
    SAVE_POINT_A_KINDS,
    VISIBLE_SCENARIO,
    Check,
    register,
)
from graders.checks.counting import counts_against, kind_of
from graders.checks.result import CheckResult, check_result, not_checked
from graders.submission import defined_names
from graders.text import plural

__all__ = [
    "grade_level2", "run_level2",
]


_ATOMIC = dict(success="after every crash checkpoint.json was one complete save")
_SAVE_POINT_A = dict(success="after every crash checkpoint.json accounted for every tool that "
                     "had run")

register(
    Check(
        "l2_atomic_save", LEVEL2, "an atomic save", 3, False,
        "runs your code on support-tickets, tears every save part-way and kills the process "
        "just before every rename, and reads checkpoint.json after each crash",
        ANSWER_CELLS[LEVEL2], VISIBLE_SCENARIO, ATOMIC_KINDS, **_ATOMIC,
    ),
    Check(
        "l2_save_point_a", LEVEL2, "save point A", 3, False,
        "runs your code on support-tickets, kills the process while each tool runs and while "
        "each model call is in flight, and compares checkpoint.json with the tool ledger",
        ANSWER_CELLS[LEVEL2], VISIBLE_SCENARIO, SAVE_POINT_A_KINDS, **_SAVE_POINT_A,
    ),
    Check(
        "l2_atomic_save_hidden", LEVEL2, "an atomic save, on a longer task", 2, True,
        "runs the whole crash matrix for the save (torn writes, kills before each rename) on "
        "the longer long-migration scenario when your work is graded",
        ANSWER_CELLS[LEVEL2], HIDDEN_SCENARIO, ATOMIC_KINDS, **_ATOMIC,
    ),
    Check(
        "l2_save_point_a_hidden", LEVEL2, "save point A, on a longer task", 2, True,
        "runs the whole crash matrix for the save points (kills while each tool runs and "
        "while each model call is in flight) on the longer long-migration scenario when your "
        "work is graded",
        ANSWER_CELLS[LEVEL2], HIDDEN_SCENARIO, SAVE_POINT_A_KINDS, **_SAVE_POINT_A,
    ),
)


_KIND_WORDS = {
    "torn_write": "torn writes",
    "killed_before_rename": "kills just before a rename",
    "killed_during_tool": "kills while a tool runs",
    "killed_during_model_call": "kills while the model is called",
}


def _judge_matrix(check: Check, verdicts: list) -> CheckResult:
    """Turn the verdicts of one scenario into this check's result."""
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
    kinds = " and ".join(_KIND_WORDS.get(k, k) for k in check.kinds)
    crash_points = plural(len(crashes), "crash point")
    done = f"Ran your code on {check.scenario} to the end and at {crash_points} ({kinds})"
    unfinished = [v for v in mine if kind_of(v) == "no_crash" and counts_against(check.id, v)]
    if unfinished:
        return check_result(check.id, False, f"Ran your code on {check.scenario} with no crash "
                            f"at all, and it did not get through: {unfinished[0].message}", mine)
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


def _level2_problem(cells: dict | None, source: str) -> tuple[str | None, str | None]:
    """(code, problem): the Level 2 code to run, or why it cannot run."""
    if cells is None:
        codes = {"your submission": source}
    else:
        codes = {}
        for grade_id in ANSWER_CELLS[LEVEL2]:
            code, problem = cell_code(cells, source, grade_id)
            if problem:
                return None, problem
            codes[f"the answer cell {grade_id}"] = code
    for where, code in codes.items():
        syntax = syntax_problem(code, where)
        if syntax:
            return None, syntax
    names = set().union(*(defined_names(c) for c in codes.values()))
    missing = [n for n in ("save_checkpoint", "run_agent") if n not in names]
    if missing:
        return None, (" and ".join(missing) + f" {'is' if len(missing) == 1 else 'are'} not "
                      "defined at the top level of your answer cells. Keep the names "
                      "save_checkpoint and run_agent, each defined with def at the top of its cell")
    return source, None


def run_level2(submission, checks: list[Check], timeout,
                fallback: bool = False) -> dict[str, CheckResult]:
    """Run ``checks`` on ``submission``: one harness per scenario, side by side for a source."""
    from concurrent.futures import ThreadPoolExecutor

    from graders.sandbox.engine import harness_for

    scenarios = list(dict.fromkeys(c.scenario for c in checks))

    def matrix(scenario: str) -> list:
        kinds = {"no_crash", *(k for c in checks if c.scenario == scenario for k in c.kinds)}
        harness, _note = harness_for(submission, timeout, allow_fallback=fallback)
        with harness:
            return harness.run_matrix(scenario, kinds)

    if submission.in_process or len(scenarios) == 1:
        verdicts = {scenario: matrix(scenario) for scenario in scenarios}
    else:
        # The work is in the harnesses' child processes; threads only wait for them.
        with ThreadPoolExecutor(len(scenarios)) as pool:
            verdicts = dict(zip(scenarios, pool.map(matrix, scenarios), strict=True))
    return {c.id: _judge_matrix(c, verdicts[c.scenario]) for c in checks}


def grade_level2(source: str, checks: list[Check], timeout,
                  fallback: bool = False) -> dict[str, CheckResult]:
    from graders.submission import Submission

    code, problem = _level2_problem(split_cells(source), source)
    if problem:
        return {c.id: check_result(c.id, False, f"Could not run your code: {problem}.")
                for c in checks}
    submission = Submission.from_source(code, name=LEVEL2, filename="<your answer cells>")
    return {check_id: relocate(result, code)
            for check_id, result in run_level2(submission, checks, timeout, fallback).items()}
