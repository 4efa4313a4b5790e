"""The quiz questions of Part 6 (``lessons/06_claude_code_and_what_checkpoints_cost``)."""

from __future__ import annotations

from ..quiz import Choice, Quiz

__all__ = ["QUESTIONS"]

QUESTIONS: tuple[Quiz, ...] = (
    Quiz(
        id="claude_code_unit",
        question=(
            "Claude Code creates a checkpoint at every user prompt; this course saves twice per "
            "loop turn. Why the difference?"
        ),
        choices=(
            Choice(
                "Claude Code's checkpoints also capture what bash commands changed, so one per "
                "prompt suffices.",
                False,
                "They do not: Claude Code's checkpoints track the edits made through its file "
                "tools, not the side effects of bash commands, and they are for rewinding, not "
                "for crash recovery.",
            ),
            Choice(
                "They serve other ends: rewinding a session a person is in, or surviving a "
                "crash unattended.",
                True,
                "With a person present, a new prompt is the natural place to mark. With nobody "
                "present, a crash can land inside a turn, so the turn gets two save points. How "
                "often to save follows from what the checkpoint is for.",
            ),
            Choice(
                "Claude Code runs one tool per prompt, so a prompt and a turn are the same "
                "thing there.",
                False,
                "One prompt can set off many turns and many tool calls; a checkpoint per prompt "
                "is coarser than a save per turn, on purpose.",
            ),
        ),
    ),
)
