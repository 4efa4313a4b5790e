"""The lesson's quiz questions, by id, the knowledge check's order, and each student's order.

The questions live one module per part of the lesson in `graders.teaching.quiz_questions`, with
their options in the order they were written (`AUTHORED`); each student sees the options in an
order of their own (`QUIZZES`), shuffled by `graders.teaching.quiz_order` with a seed taken from
their user name. Set ``CHECKPOINT_LAB_QUIZ_SEED`` to choose the seed (``authored`` keeps the
authored order).
"""

from __future__ import annotations

from .quiz import Quiz
from .quiz_order import SEED_ENV, shuffled, student_seed
from .quiz_questions import (
    lesson01_the_execution_scene_and_six_fields,
    lesson02_two_save_points,
    lesson03_atomic_save,
    lesson04_power_cuts,
    lesson05_several_tool_calls_in_one_turn,
    lesson06_claude_code_and_what_checkpoints_cost,
    lesson07_knowledge_check_and_recap,
)

__all__ = [
    "QUIZZES",
    "AUTHORED",
    "KNOWLEDGE_CHECK",
    "SOURCE_QUESTION",
    "SEED_ENV",
    "student_seed",
    "shuffled",
    "quizzes_for",
]

_PARTS = (
    lesson01_the_execution_scene_and_six_fields,
    lesson02_two_save_points,
    lesson03_atomic_save,
    lesson04_power_cuts,
    lesson05_several_tool_calls_in_one_turn,
    lesson06_claude_code_and_what_checkpoints_cost,
    lesson07_knowledge_check_and_recap,
)

#: Every quiz question, by id, with its options in the order they were written.
AUTHORED: dict[str, Quiz] = {q.id: q for part in _PARTS for q in part.QUESTIONS}


def quizzes_for(seed: str) -> dict[str, Quiz]:
    """Every question, by id, in the order ``seed`` gives its options."""
    return {quiz_id: shuffled(quiz, seed) for quiz_id, quiz in AUTHORED.items()}


#: Every quiz question, by id, in this student's order (see `student_seed`).
QUIZZES: dict[str, Quiz] = quizzes_for(student_seed())

#: The source lesson's own question.
SOURCE_QUESTION = "in_place_overwrite"

#: The knowledge check at the end of the lesson, in order: the source's question first.
KNOWLEDGE_CHECK: tuple[str, ...] = (
    "in_place_overwrite",
    "messages_dropped",
    "save_point_a_where",
    "a_only_after_result",
    "pending_tool_use_for",
    "temp_same_directory",
    "finished_results_kept",
    "short_task_cost",
)
