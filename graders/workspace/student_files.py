"""Where a student's own files are: their workspace, their copy of an exercise, their solutions.

``checkpoint-lab check`` and ``checkpoint-lab solutions`` (and the ``solutions()`` helper in a
notebook) work on the student's workspace, never on the course's own release: the release in the
course's ``exercises/`` folder is untouched starter code, and checking it "fails" a student whose
own copy passes.

The workspace is, in this order: the folder given (``--workspace DIR``), the one JupyterLab was
started on (``CHECKPOINT_LAB_WORKSPACE``, which ``checkpoint-lab lab`` sets for its kernels and
terminals), or ``workspace/`` in the course's folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from graders.workspace.notebooks import ASSIGNMENT, WorkspaceError, course_root, default_workspace

__all__ = [
    "WORKSPACE_ENV",
    "exercise_copy",
    "is_course_release",
    "notebook_name",
    "workspace_path",
]

#: Set by ``checkpoint-lab lab`` in JupyterLab's environment: the workspace it serves.
WORKSPACE_ENV = "CHECKPOINT_LAB_WORKSPACE"


def workspace_path(explicit: str | Path | None = None) -> Path:
    """The student's workspace folder (see the module's docstring); it may not exist yet."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get(WORKSPACE_ENV)
    if env:
        return Path(env).expanduser().resolve()
    try:
        return default_workspace().resolve()
    except WorkspaceError:
        return (Path.cwd() / "workspace").resolve()


def notebook_name(text: str) -> str | None:
    """``02_two_latent_failures`` for a bare notebook name with or without ``.ipynb``; None for
    anything with a folder in it."""
    if not text or Path(text).name != text or text in (".", ".."):
        return None
    return text[: -len(".ipynb")] if text.endswith(".ipynb") else text


def exercise_copy(name: str, workspace: Path) -> Path:
    """Where the student's copy of exercise ``name`` lives in ``workspace``."""
    return workspace / "exercises" / ASSIGNMENT / f"{name}.ipynb"


def is_course_release(path: Path) -> bool:
    """Whether ``path`` is one of the course's own released exercise notebooks (not a copy)."""
    try:
        release = (course_root() / "exercises").resolve()
    except WorkspaceError:
        return False
    return path.resolve().parent == release
