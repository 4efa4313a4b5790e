"""Level 2's exercise (``02_two_latent_failures``): an atomic save and save point A, each judged
on its own crash points of the crash matrix, on the visible scenario and on a longer hidden one.

The student's two answer cells (``save_checkpoint``, ``run_agent``) are the whole program; its
record (``EXERCISE``) grades them with :func:`graders.checks.traced.grade_crash_matrix`.
"""

from __future__ import annotations

from functools import partial

from graders.checks.answer_cells import AnswerCells, program_from
from graders.checks.base import AnswerCell, Check, Exercise, register
from graders.checks.counting import kind_of
from graders.checks.live import live_from_cells
from graders.checks.result import CheckResult
from graders.checks.traced import grade_crash_matrix, run_crash_matrix
from graders.submission import Submission

__all__ = [
    "EXERCISE", "NOTEBOOK", "ATOMIC_KINDS", "SAVE_POINT_A_KINDS", "WRITE_PROBLEMS",
    "SAVE_POINT_A_PROBLEMS",
]

NOTEBOOK = "02_two_latent_failures"
VISIBLE_SCENARIO = "support-tickets"
HIDDEN_SCENARIO = "long-migration"
ANSWER_CELLS = (AnswerCell("l2_save_checkpoint", "save_checkpoint"),
                AnswerCell("l2_run_agent", "run_agent"))
_GRADE_IDS = tuple(cell.grade_id for cell in ANSWER_CELLS)

#: The crash point kinds each check judges.
ATOMIC_KINDS = ("torn_write", "killed_before_rename", "restart", "disk_full")
SAVE_POINT_A_KINDS = ("killed_during_tool", "killed_during_model_call")

#: The judge's problems (``Verdict.evidence["problems"]``) that come from how a save writes.
WRITE_PROBLEMS = frozenset({"copy_over", "in_place_write", "partial_write", "invalid_json",
                            "not_a_save", "deleted_before_rename"})
#: The judge's problems that come from a missing or misplaced save point A.
SAVE_POINT_A_PROBLEMS = frozenset({"no_save_point_a", "save_point_a_after_tool",
                                   "pending_missing", "pending_mismatch", "pending_never_reset",
                                   "pending_before_message", "pending_without_input",
                                   "pending_incomplete"})

_ATOMIC = dict(success="after every crash checkpoint.json was one complete save")
_SAVE_POINT_A = dict(success="after every crash checkpoint.json accounted for every tool that "
                     "had run")

# The titles, descriptions and labels say what is checked, never the fix: the ids stay as the
# gradebook knows them, and a student reads the labels (check cells, the table, hints).
CHECKS = (
    Check(
        id="l2_atomic_save", notebook=NOTEBOOK, title="survives a kill during a save", points=3,
        hidden=False,
        description=("runs your code on support-tickets, kills it at every moment of every save "
                     "(before each write, and part-way through its bytes), and reads "
                     "checkpoint.json after each kill; restarts it after a kill that left files "
                     "behind, and fills its disk during a save"),
        answer_cells=_GRADE_IDS, scenario=VISIBLE_SCENARIO, kinds=ATOMIC_KINDS, **_ATOMIC,
        label="l2_kill_during_save",
    ),
    Check(
        id="l2_save_point_a", notebook=NOTEBOOK, title="a kill during a tool leaves a true record",
        points=3, hidden=False,
        description=("runs your code on support-tickets, kills the process while each tool runs "
                     "and while each model call is in flight, and compares checkpoint.json with "
                     "the tool ledger"),
        answer_cells=_GRADE_IDS, scenario=VISIBLE_SCENARIO, kinds=SAVE_POINT_A_KINDS,
        **_SAVE_POINT_A,
        label="l2_kill_during_tool",
    ),
    Check(
        id="l2_atomic_save_hidden", notebook=NOTEBOOK,
        title="survives a kill during a save, on a longer task", points=2, hidden=True,
        description=("kills your code at every moment of every save on the longer long-migration "
                     "scenario, restarts it after such a kill, and fills its disk during a save, "
                     "when your work is graded"),
        answer_cells=_GRADE_IDS, scenario=HIDDEN_SCENARIO, kinds=ATOMIC_KINDS, **_ATOMIC,
        twin="l2_atomic_save",
        label="l2_kill_during_save_hidden",
    ),
    Check(
        id="l2_save_point_a_hidden", notebook=NOTEBOOK,
        title="a kill during a tool leaves a true record, on a "
        "longer task",
        points=2, hidden=True,
        description=("kills your code while each tool runs and while each model call is in "
                     "flight on the longer long-migration scenario when your work is graded"),
        answer_cells=_GRADE_IDS, scenario=HIDDEN_SCENARIO, kinds=SAVE_POINT_A_KINDS,
        **_SAVE_POINT_A, twin="l2_save_point_a",
        label="l2_kill_during_tool_hidden",
    ),
)


def counts_by_kind(check: Check, verdict) -> bool:
    """Whether failed ``verdict`` fails ``check``: the end of the run is shared, and a save point
    problem found there is save point A's, not the atomic save's."""
    if kind_of(verdict) == "no_crash":
        problems = set((verdict.evidence or {}).get("problems") or ())
        if problems and problems <= SAVE_POINT_A_PROBLEMS | {"no_save_point_b", "incomplete"}:
            return check.kinds != ATOMIC_KINDS
    return True


def program(cells: AnswerCells) -> tuple[Submission | None, str | None]:
    """The student's two cells are the program (no code of the grader's joins them)."""
    return program_from(cells, _GRADE_IDS)


def _run_live_functions(check: Check, functions: dict) -> CheckResult:
    """The live functions themselves, where their cells' source is not to be had (forked
    children of the kernel)."""
    submission = Submission.from_functions(functions["l2_run_agent"],
                                           functions["l2_save_checkpoint"])
    return run_crash_matrix(submission, [check], None, True,
                            rules=EXERCISE.rules)[check.id]


EXERCISE = register(Exercise(
    notebook=NOTEBOOK,
    title="Level 2: two latent failures",
    answer_cells=ANSWER_CELLS,
    checks=CHECKS,
    grade=grade_crash_matrix,
    live=partial(live_from_cells, without_source=_run_live_functions),
    program=program,
    counts_against=counts_by_kind,
    gate="l2_name_the_failures",
    hints=f"{NOTEBOOK}.md",
))
