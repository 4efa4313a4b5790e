"""Level 3's checks: a save that survives a power cut, graded on power-cut crash states.

The student's ``save_checkpoint`` (answer cell ``l3_save_checkpoint``) runs with the lesson's
loop once per scenario, in the sandbox, watched from outside (:mod:`graders.sandbox`); from that
one recording :func:`graders.judge.power.judge_power` builds every state a power cut could leave
at every moment. Two checks, each judging its own failures: the bytes reach the disk before the
rename (``data_not_synced``), and the rename reaches the disk before the loop runs the next tool
(``rename_not_synced``). A failure of neither kind (the save is not atomic, the run raises)
counts against both.
"""

from __future__ import annotations

from graders.judge.power import DATA_NOT_SYNCED, RENAME_NOT_SYNCED

__all__ = ["grade_level3", "counts_against_power", "POWER_PROBLEMS"]

#: The two power-cut problems, each judged by its own check.
POWER_PROBLEMS = frozenset({DATA_NOT_SYNCED, RENAME_NOT_SYNCED})


def counts_against_power(check, verdict) -> bool:
    """Whether ``verdict`` fails ``check`` (a Level 3 check, judging ``check.problem``)."""
    if verdict.passed or getattr(verdict, "skipped", False):
        return False
    problems = set((verdict.evidence or {}).get("problems") or ())
    return not problems or check.problem in problems or bool(problems - POWER_PROBLEMS)


def _message(check, verdict) -> str:
    messages = (verdict.evidence or {}).get("messages") or {}
    return messages.get(check.problem) or verdict.message


def _judge(check, verdicts: list):
    from graders.checks import HINT_LINE, _result
    from graders.text import plural

    load = [v for v in verdicts if v.kind == "load"]
    if load:
        return _result(check.id, False, f"Could not run your save on {check.scenario}: "
                       f"{load[0].message}", load)
    cuts = [v for v in verdicts if v.kind == "power_cut"]
    done = (f"Ran your save with the lesson's loop on {check.scenario} and cut the power at "
            f"{plural(len(cuts), 'moment')} of the run")
    end = [v for v in verdicts if v.kind == "no_crash" and not v.passed]
    if end:
        return _result(check.id, False, f"Ran your save with the lesson's loop on "
                       f"{check.scenario}, and it did not get through: {end[0].message}",
                       verdicts)
    failed = [v for v in cuts if counts_against_power(check, v)]
    if not failed:
        return _result(check.id, True, f"{done}: {check.success}.", verdicts)
    first = failed[0]
    summary = f"{done}; {len(failed)} of {len(cuts)} failed."
    result = _result(check.id, False, f"{summary} At {first.point}: {_message(check, first)} "
                     f"{HINT_LINE}", verdicts)
    result.summary = summary
    return result


def grade_level3(source: str, checks: list, timeout: float | None) -> dict:
    """Grade the Level 3 answer cell in ``source`` on ``checks``; check id -> CheckResult."""
    from graders.checks import (
        LEVEL3,
        _level1_save_source,
        _one_answer_cell,
        _relocate,
        _result,
    )
    from graders.sandbox.engine import grading_problem
    from graders.sandbox.harness import TracedHarness
    from graders.sandbox.serve import SandboxUnavailable
    from graders.submission import Submission

    code, problem = _one_answer_cell(source, "l3_save_checkpoint", "save_checkpoint")
    if problem:
        return {c.id: _result(c.id, False, f"Could not run this check: {problem.rstrip('.')}.")
                for c in checks}
    why = grading_problem()
    if why:
        raise SandboxUnavailable(
            f"a power cut can only be checked by watching your save's file operations from "
            f"outside, which needs Linux with strace and bubblewrap ({why})")
    joined = _level1_save_source(code)
    harness = TracedHarness(Submission.from_source(joined, name=LEVEL3,
                                                   filename="<your answer cells>"),
                            timeout=timeout)
    results = {}
    by_scenario: dict[str, list] = {}
    for check in checks:
        if check.scenario not in by_scenario:
            by_scenario[check.scenario] = harness.power_verdicts(check.scenario)
        results[check.id] = _relocate(_judge(check, by_scenario[check.scenario]), joined)
    return results
