"""Each student's order of a quiz's options: shuffled with a seed taken from their user name.

The same notebook shows the same order every time it runs, and letters cannot be passed around.
Set ``CHECKPOINT_LAB_QUIZ_SEED`` to choose the seed (``authored`` keeps the authored order).
"""

from __future__ import annotations

import getpass
import os
import random

from .quiz import Quiz

__all__ = ["SEED_ENV", "student_seed", "shuffled"]

#: The environment variable that sets the shuffling seed; ``authored`` turns shuffling off.
SEED_ENV = "CHECKPOINT_LAB_QUIZ_SEED"


def student_seed() -> str:
    """The seed of this student's option order: ``$CHECKPOINT_LAB_QUIZ_SEED``, else the user
    name."""
    seed = os.environ.get(SEED_ENV, "").strip()
    if seed:
        return seed
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name (some containers): one order for everybody
        return "student"


def shuffled(quiz: Quiz, seed: str) -> Quiz:
    """``quiz`` with its options in the order ``seed`` gives it (``"authored"``: unchanged).

    The order depends on the seed and the question's id only, so it is the same on every run.
    """
    if seed == "authored":
        return quiz
    choices = list(quiz.choices)
    random.Random(f"{seed}/{quiz.id}").shuffle(choices)
    return Quiz(id=quiz.id, question=quiz.question, choices=tuple(choices), source=quiz.source)

