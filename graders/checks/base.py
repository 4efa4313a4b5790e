"""What every exercise's checks share: the exercises, their answer cells, the `Check` and the
registry of checks (``CHECKS``).

Each exercise's module (``incomplete_checkpoint``, ``two_latent_failures``, ``power_cut``,
``parallel_tool_calls``) registers its checks here with :func:`register`, in the order they
appear in its notebook; ``graders.checks`` imports the four, so ``CHECKS`` is whole as soon as
any part of the package is imported.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "LEVEL1", "LEVEL2", "LEVEL3", "LEVEL4", "NOTEBOOKS", "ANSWER_CELLS", "VISIBLE_SCENARIO",
    "HIDDEN_SCENARIO", "L4_VISIBLE", "L4_HIDDEN", "L4_KINDS", "MISSING_IN_STARTER", "WITHOUT",
    "ATOMIC_KINDS", "SAVE_POINT_A_KINDS", "WRITE_PROBLEMS", "SAVE_POINT_A_PROBLEMS",
    "HINT_LINE", "GRADING_ENV", "ANSWER_CELL_TIMEOUT", "Check", "CHECKS", "register",
    "checks_for",
]


LEVEL1 = "01_incomplete_checkpoint"
LEVEL2 = "02_two_latent_failures"
LEVEL3 = "03_power_cut"
LEVEL4 = "04_parallel_tool_calls"

#: The exercise notebooks (without ``.ipynb``) and a short name for each.
NOTEBOOKS: dict[str, str] = {
    LEVEL1: "Level 1: an incomplete checkpoint",
    LEVEL2: "Level 2: two latent failures",
    LEVEL3: "Level 3: survive a power cut",
    LEVEL4: "Level 4: several tool calls in one turn",
}

#: The grade_ids of each notebook's autograded answer cells, in the order their code is joined.
ANSWER_CELLS: dict[str, tuple[str, ...]] = {
    LEVEL1: ("l1_missing_fields_answer", "l1_save_checkpoint"),
    LEVEL2: ("l2_save_checkpoint", "l2_run_agent"),
    LEVEL3: ("l3_save_checkpoint",),
    LEVEL4: ("l4_run_agent",),
}

VISIBLE_SCENARIO = "support-tickets"
HIDDEN_SCENARIO = "long-migration"
#: Level 4's scenarios: several tool calls in one turn.
L4_VISIBLE = "incident-triage"
L4_HIDDEN = "release-audit"
L4_KINDS = ("killed_during_tool", "killed_during_model_call", "torn_write",
            "killed_before_rename")

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

#: Said after a failed crash matrix: the fix is in the opt-in hints, never in the message.
HINT_LINE = "Stuck? hint() in your notebook shows one hint at a time."

#: Set to "1" in a grading kernel's environment: run_check then runs nothing (see run_check).
GRADING_ENV = "CHECKPOINT_LAB_GRADING"

#: How long the Level 1 answer cell may run in its fresh process, in seconds.
ANSWER_CELL_TIMEOUT = 20.0



@dataclass(frozen=True)
class Check:
    """One autograded check: the ``grade_id`` of its test cell, and what it checks.

    Attributes:
        id: the check id, also the ``grade_id`` of its test cell.
        notebook: the exercise notebook it belongs to (without ``.ipynb``).
        title: what it checks, in a few words.
        points: the points it is worth.
        hidden: whether it runs only at grading time.
        description: what it does, for the student (shown when a hidden check is met).
        answer_cells: the grade_ids of the answer cells whose code it runs.
        scenario: the ``fake_llm`` scenario it runs on, if any.
        kinds: the crash point kinds it judges (``no_crash`` always counts too), if any.
        success: what a pass means, in words.
    """

    id: str
    notebook: str
    title: str
    points: int
    hidden: bool
    description: str
    answer_cells: tuple[str, ...]
    scenario: str | None = None
    kinds: tuple[str, ...] = ()
    success: str = ""
    problem: str = ""


#: Every check by id, in notebook order (filled by :func:`register`).
CHECKS: dict[str, Check] = {}


def register(*checks: Check) -> None:
    """Add ``checks`` to ``CHECKS`` (an exercise's module, once, at import); ``CHECKS`` stays in
    notebook order, whichever exercise's module is imported first."""
    for check in checks:
        if check.id in CHECKS:
            raise ValueError(f"check {check.id!r} is registered twice")
        CHECKS[check.id] = check
    order = list(NOTEBOOKS)
    ranked = sorted(CHECKS.values(), key=lambda c: order.index(c.notebook))
    CHECKS.clear()
    CHECKS.update((c.id, c) for c in ranked)


def checks_for(notebook: str, *, include_hidden: bool = True) -> list[Check]:
    """The checks of ``notebook`` (without ``.ipynb``), in the order they appear in it."""
    return [c for c in CHECKS.values()
            if c.notebook == notebook and (include_hidden or not c.hidden)]
