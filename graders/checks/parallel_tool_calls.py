"""Level 4's checks: several tool calls in one turn, graded on the crash matrix.

The student's ``run_agent`` (answer cell ``l4_run_agent``) runs with the given atomic save (Level
2's reference ``save_checkpoint``, a locked cell before it) once per scenario, in the sandbox,
watched from outside; every crash state of that one recording is judged by
:func:`graders.judge.parallel_rules.check`. Three checks, each judging its own problems
(``Check.problem`` names the group): every call in flight is on record (``in_flight``), every
finished call is kept with its result (``kept``), one result message per turn in block order
(``message``). A failure of none of these kinds (the run raised, hung, the save was torn)
counts against all three.
"""

from __future__ import annotations

from graders.judge.parallel_rules import IN_FLIGHT_PROBLEMS, KEPT_PROBLEMS, MESSAGE_PROBLEMS

__all__ = ["grade_level4", "counts_against_parallel", "GROUPS", "given_save_source"]

#: Each Level 4 check's group of problems (``Check.problem``) and its problem codes.
GROUPS: dict[str, frozenset[str]] = {
    "in_flight": frozenset(IN_FLIGHT_PROBLEMS),
    "kept": frozenset(KEPT_PROBLEMS),
    "message": frozenset(MESSAGE_PROBLEMS),
}
_ALL = frozenset().union(*GROUPS.values())
_GIVEN_MARK = "# --- the given save_checkpoint (locked cell), added by the grader ---"


def counts_against_parallel(check, verdict) -> bool:
    """Whether ``verdict`` fails ``check`` (a Level 4 check, judging group ``check.problem``)."""
    if verdict.passed or getattr(verdict, "skipped", False):
        return False
    problems = set((verdict.evidence or {}).get("problems") or ())
    return not problems or bool(problems & GROUPS[check.problem]) or bool(problems - _ALL)


def given_save_source() -> str:
    """Level 2's reference ``save_checkpoint`` with the imports and constant it uses: the code
    of the notebook's locked cell, extracted as the build extracts it."""
    from graders.checks import ROOT
    from graders.nbgrader_plumbing.build import extract_code

    return extract_code("solutions/level2_reference.py:CHECKPOINT,save_checkpoint", ROOT)


def _message(check, verdict) -> str:
    messages = (verdict.evidence or {}).get("messages") or {}
    own = [key for key in (verdict.evidence or {}).get("problems") or ()
           if key in GROUPS[check.problem] and key in messages]
    return messages[own[0]] if own else verdict.message


def _judge(check, verdicts: list):
    from graders.checks import HINT_LINE, _result
    from graders.text import plural

    load = [v for v in verdicts if v.kind == "load"]
    if load:
        return _result(check.id, False, f"Could not run your code on {check.scenario}: "
                       f"{load[0].message}", load)
    crashes = [v for v in verdicts if v.kind != "no_crash"]
    done = (f"Ran your run_agent on {check.scenario} to the end and at "
            f"{plural(len(crashes), 'crash point')} (kills while each tool runs, while each "
            "model call is in flight, and in every save)")
    end = [v for v in verdicts if v.kind == "no_crash" and counts_against_parallel(check, v)]
    if end:
        return _result(check.id, False, f"Ran your run_agent on {check.scenario} with no crash "
                       f"at all: {_message(check, end[0])} "
                       f"{HINT_LINE}", verdicts)
    failed = [v for v in crashes if counts_against_parallel(check, v)]
    if not failed:
        return _result(check.id, True, f"{done}: {check.success}.", verdicts)
    first = failed[0]
    summary = f"{done}; {len(failed)} of {len(crashes)} failed."
    result = _result(check.id, False, f"{summary} At {first.point}: "
                     f"{_message(check, first)} {HINT_LINE}", verdicts)
    result.summary = summary
    return result


def submission_source(code: str) -> str:
    """The source graded for answer cell ``code``: the given save, then the student's cell.

    A ``from __future__`` import in the cell goes first, where Python requires it.
    """
    lines = code.splitlines()
    future = [line for line in lines if line.startswith("from __future__ import")]
    head = "".join(f"{line}\n" for line in future)
    if future:  # moved up; an empty line keeps the cell's line numbers
        code = "\n".join("" if line in future else line for line in lines) + "\n"
    return (f"{head}{_GIVEN_MARK}\n{given_save_source()}\n\n"
            f"# --- answer cell l4_run_agent ---\n{code}")


def grade_level4(source: str, checks: list, timeout: float | None) -> dict:
    """Grade the Level 4 answer cell in ``source`` on ``checks``; check id -> CheckResult."""
    from graders.checks import (
        LEVEL4,
        _one_answer_cell,
        _relocate,
        _result,
    )
    from graders.judge import parallel_rules as checker_parallel
    from graders.sandbox.engine import grading_problem
    from graders.sandbox.harness import TracedHarness
    from graders.sandbox.serve import SandboxUnavailable
    from graders.submission import Submission

    code, problem = _one_answer_cell(source, "l4_run_agent", "run_agent")
    if problem:
        return {c.id: _result(c.id, False, f"Could not run this check: {problem.rstrip('.')}.")
                for c in checks}
    why = grading_problem()
    if why:
        raise SandboxUnavailable(
            f"several tool calls in one turn are checked by watching your loop's file "
            f"operations from outside, which needs Linux with strace and bubblewrap ({why})")
    joined = submission_source(code)
    harness = TracedHarness(Submission.from_source(joined, name=LEVEL4,
                                                   filename="<your answer cells>"),
                            timeout=timeout, checker=checker_parallel.check)
    results = {}
    by_scenario: dict[str, list] = {}
    for check in checks:
        if check.scenario not in by_scenario:
            by_scenario[check.scenario] = harness.run_matrix(check.scenario)
        results[check.id] = _relocate(_judge(check, by_scenario[check.scenario]), joined)
    return results
