"""One answer cell graded from a single recording per scenario, watched from outside (Levels 3
and 4): the cell is read, joined with the code the grader adds, run once per scenario in the
sandbox, and each check judges its own verdicts of that recording."""

from __future__ import annotations

from collections.abc import Callable

from graders.checks.answer_cells import AnswerCells
from graders.checks.result import CheckResult, check_result
from graders.sandbox.engine import harness_for
from graders.sandbox.harness import TracedHarness
from graders.sandbox.serve import SandboxUnavailable
from graders.submission import Part, Submission

__all__ = ["grade_one_cell"]


def grade_one_cell(cells: AnswerCells | str, checks: list, timeout: float | None, *,
                   notebook: str, cell: str, name: str, what: str,
                   join: Callable[[Part], list[Part]],
                   verdicts_of: Callable[[TracedHarness, str], list],
                   judge: Callable[[object, list], CheckResult],
                   checker=None, fallback: bool = False) -> dict[str, CheckResult]:
    """Grade answer cell ``cell`` (which must define ``name``) of ``cells`` on ``checks``.

    ``join`` makes the graded program's parts from the cell; ``verdicts_of(harness, scenario)``
    gets the verdicts of one recording; ``judge(check, verdicts)`` turns them into the check's
    result. ``what`` says what needs the sandbox, for the one line a machine without one gets.
    Lines in the messages are lines of the part they are in (the answer cell, or the code the
    grader added), as the runner's program was made of them.
    ``fallback`` (a self-check) runs it on the best observer this machine has instead.
    """
    part, problem = AnswerCells.of(cells, notebook).readable(cell, name)
    if problem:
        return {c.id: check_result(c.id, False, f"Could not run this check: {problem.rstrip('.')}.")
                for c in checks}
    submission = Submission.from_parts(join(part), name=notebook)
    try:
        harness, _note = harness_for(submission, timeout, allow_fallback=fallback,
                                     checker=checker)
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
