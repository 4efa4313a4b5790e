"""Each student's order of a quiz's options: shuffled with a seed of their own.

The same student sees the same order every time a notebook runs, and letters cannot be passed
around. The seed is, in this order:

1. ``$CHECKPOINT_LAB_QUIZ_SEED`` (``authored`` keeps the authored order);
2. ``$JUPYTERHUB_USER``, the hub's name for the student (on a hub with nbgrader this is also the
   student's nbgrader id; nbgrader gives a student's kernel no other);
3. a random seed made once and kept in the student's workspace (``.checkpoint-lab-quiz-seed``;
   on the site, the browser's storage), else in their home folder.

Never the operating system's user name: on the documented hub image and on Binder every student
is ``jovyan``, and everyone would get one order.
"""

from __future__ import annotations

import os
import random
import secrets
import sys
from pathlib import Path

from .quiz import Quiz

__all__ = ["SEED_ENV", "HUB_USER_ENV", "SEED_FILE", "student_seed", "kept_seed", "shuffled"]

#: The environment variable that sets the shuffling seed; ``authored`` turns shuffling off.
SEED_ENV = "CHECKPOINT_LAB_QUIZ_SEED"

#: The variable JupyterHub sets in a student's server and kernels: their hub user name.
HUB_USER_ENV = "JUPYTERHUB_USER"

#: The file a random seed is kept in, in the workspace (else the home folder).
SEED_FILE = ".checkpoint-lab-quiz-seed"


def _seed_folders() -> list[Path]:
    folders = []
    if sys.platform == "emscripten":  # the site: the browser's storage, kept between visits
        folders.append(Path("/drive"))
    try:
        from graders.workspace.student_files import workspace_path

        folders.append(workspace_path())
    except Exception:  # noqa: BLE001 - no workspace to be had: the home folder will do
        pass
    folders.append(Path.home())
    return folders


def kept_seed(folders: list[Path] | None = None) -> str:
    """The random seed kept in the first of ``folders`` (default: the workspace, then the home
    folder) that is a folder, made there on first use. Where none can keep it, a new random
    seed (the order then changes between runs, never between students)."""
    folders = _seed_folders() if folders is None else folders
    for folder in folders:
        if not folder.is_dir():
            continue
        path = folder / SEED_FILE
        try:
            seed = path.read_text(encoding="utf-8").strip() if path.exists() else ""
            if not seed:
                seed = secrets.token_hex(8)
                path.write_text(seed + "\n", encoding="utf-8")
            return seed
        except (OSError, UnicodeDecodeError):
            continue
    return secrets.token_hex(8)


def student_seed() -> str:
    """The seed of this student's option order (see the module's docstring)."""
    for name in (SEED_ENV, HUB_USER_ENV):
        seed = os.environ.get(name, "").strip()
        if seed:
            return seed if name == SEED_ENV else f"hub:{seed}"
    return kept_seed()


def shuffled(quiz: Quiz, seed: str) -> Quiz:
    """``quiz`` with its options in the order ``seed`` gives it (``"authored"``: unchanged).

    The order depends on the seed and the question's id only, so it is the same on every run.
    """
    if seed == "authored":
        return quiz
    choices = list(quiz.choices)
    random.Random(f"{seed}/{quiz.id}").shuffle(choices)
    return Quiz(id=quiz.id, question=quiz.question, choices=tuple(choices), source=quiz.source)
