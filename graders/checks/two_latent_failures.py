"""Level 2's checks (``02_two_latent_failures``): an atomic save and save point A, each judged on
its own crash points of the crash matrix, on the visible scenario and on a longer hidden one.
"""

from __future__ import annotations

from graders.checks.answer_cells import AnswerCells, syntax_problem
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
from graders.submission import Submission, defined_names
from graders.text import plural

__all__ = [
    "grade_level2", "run_level2",
]


_ATOMIC = dict(success="after every crash checkpoint.json was one complete save")
_SAVE_POINT_A = dict(success="after every crash checkpoint.json accounted for every tool that "
                     "had run")

# The titles and descriptions say what is checked, never the fix: the ids stay as the gradebook
# knows them (a student reads them in the notebook's check cells).
register(
    Check(
        "l2_atomic_save", LEVEL2, "survives a kill during a save", 3, False,
        "runs your code on support-tickets, kills it in the middle of every save, and reads "
        "checkpoint.json after each kill; restarts it after a kill that left files behind, and "
        "fills its disk during a save",
        ANSWER_CELLS[LEVEL2], VISIBLE_SCENARIO, ATOMIC_KINDS, **_ATOMIC,
    ),
    Check(
        "l2_save_point_a", LEVEL2, "a kill during a tool leaves a true record", 3, False,
        "runs your code on support-tickets, kills the process while each tool runs and while "
        "each model call is in flight, and compares checkpoint.json with the tool ledger",
        ANSWER_CELLS[LEVEL2], VISIBLE_SCENARIO, SAVE_POINT_A_KINDS, **_SAVE_POINT_A,
    ),
    Check(
        "l2_atomic_save_hidden", LEVEL2, "survives a kill during a save, on a longer task", 2,
        True,
        "kills your code in the middle of every save on the longer long-migration scenario, "
        "restarts it after such a kill, and fills its disk during a save, when your work is "
        "graded",
        ANSWER_CELLS[LEVEL2], HIDDEN_SCENARIO, ATOMIC_KINDS, **_ATOMIC,
    ),
    Check(
        "l2_save_point_a_hidden", LEVEL2, "a kill during a tool leaves a true record, on a "
        "longer task", 2, True,
        "kills your code while each tool runs and while each model call is in flight on the "
        "longer long-migration scenario when your work is graded",
        ANSWER_CELLS[LEVEL2], HIDDEN_SCENARIO, SAVE_POINT_A_KINDS, **_SAVE_POINT_A,
    ),
)


_KIND_WORDS = {
    "torn_write": "torn writes",
    "killed_before_rename": "kills just before a rename",
    "killed_during_tool": "kills while a tool runs",
    "killed_during_model_call": "kills while the model is called",
    "restart": "restarts after a kill that left files behind",
    "disk_full": "a disk that fills during a save",
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
    words = [_KIND_WORDS.get(k, k) for k in check.kinds]
    kinds = ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + words[-1]
    crash_points = plural(len(crashes), "crash point")
    done = f"Ran your code on {check.scenario} to the end and at {crash_points} ({kinds})"
    unfinished = [v for v in mine if kind_of(v) == "no_crash" and counts_against(check.id, v)]
    if unfinished:
        summary = (f"Ran your code on {check.scenario} with no crash at all, and it did not get "
                   "through (no_crash, below).")
        cause = _lower_first(unfinished[0].message)
        result = check_result(check.id, False, f"Ran your code on {check.scenario} with no crash "
                              f"at all, and it did not get through: {cause}", mine)
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


def _lower_first(text: str) -> str:
    """``text`` to follow a colon: its first letter in lower case (never an acronym's)."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


def _level2_problem(cells: AnswerCells) -> tuple[Submission | None, str | None]:
    """(the program to run, None), or (None, why the Level 2 code cannot run)."""
    grade_ids = ANSWER_CELLS[LEVEL2][:1] if cells.whole else ANSWER_CELLS[LEVEL2]
    parts = []
    for grade_id in grade_ids:
        part, problem = cells.part(grade_id)
        if problem:
            return None, problem
        parts.append(part)
    for part in parts:
        syntax = syntax_problem(part.code, part.where)
        if syntax:
            return None, syntax
    names = set().union(*(defined_names(p.code) for p in parts))
    missing = [n for n in ("save_checkpoint", "run_agent") if n not in names]
    if missing:
        return None, (" and ".join(missing) + f" {'is' if len(missing) == 1 else 'are'} not "
                      "defined at the top level of your answer cells. Keep the names "
                      "save_checkpoint and run_agent, each defined with def at the top of its cell")
    return Submission.from_parts(parts, name=LEVEL2), None


def run_level2(submission, checks: list[Check], timeout,
                fallback: bool = False) -> dict[str, CheckResult]:
    """Run ``checks`` on ``submission``: one harness per scenario, side by side for a source."""
    from graders.parallel import side_by_side
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
        verdicts = dict(zip(scenarios, side_by_side(matrix, scenarios), strict=True))
    return {c.id: _judge_matrix(c, verdicts[c.scenario]) for c in checks}


def grade_level2(cells: AnswerCells | str, checks: list[Check], timeout,
                  fallback: bool = False) -> dict[str, CheckResult]:
    submission, problem = _level2_problem(AnswerCells.of(cells, LEVEL2))
    if problem:
        return {c.id: check_result(c.id, False, f"Could not run your code: {problem}.")
                for c in checks}
    return run_level2(submission, checks, timeout, fallback)
