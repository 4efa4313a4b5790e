"""The student's files in a repo2docker image (Binder, Zero to JupyterHub): ``start``.

repo2docker's image runs the repository's ``start`` at every start of the container, before
JupyterLab (on Binder and in a Zero to JupyterHub pod alike). It runs
``python -m graders.workspace.binder``, in one of two layouts, chosen by ``CHECKPOINT_LAB_LAYOUT``:

- ``workspace`` (the default; Binder): ``DIR`` becomes the student's workspace
  (``graders.workspace.notebooks.Workspace``: the student's own copies of the released notebooks,
  laid out as ``checkpoint-lab lab`` lays them out), and JupyterLab starts there;
- ``hub`` (a hub's home, docs/jupyterhub.md): ``DIR``, the home, gets ``lessons/`` as
  ``checkpoint-lab course`` releases them for a hub (links to ``../lesson2/``, where nbgrader's
  fetch puts the exercises), and JupyterLab starts in the home; ``hub-with-exercises`` adds
  ``lesson2/`` itself, for a hub without nbgrader's exchange. A file the student already has is
  never written over.

Either way there is one layout per place (every link resolves), each lesson appears once (no
jupytext ``.py`` twin), a notebook opens unmodified (its ``language_info`` is this kernel's), and
the course's own files are never the student's copies.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from graders.workspace.notebooks import (
    ASSIGNMENT,
    Workspace,
    WorkspaceError,
    course_root,
    delivered_bytes,
)

__all__ = ["LAYOUTS", "main", "release_into_home"]

#: ``CHECKPOINT_LAB_LAYOUT``'s values.
LAYOUTS = ("workspace", "hub", "hub-with-exercises")


def release_into_home(home: Path, *, exercises: bool = False,
                      course: Path | None = None) -> list[str]:
    """Write the lessons (and, with ``exercises``, Level 1 to 4's notebooks) into ``home`` as a
    hub's students get them, beside the ``lesson2/`` of nbgrader's fetch; return the paths
    written (relative to ``home``). A file already there is the student's, and stays."""
    root = course or course_root()
    sources = [(p, Path("lessons") / p.name) for p in sorted((root / "lessons").glob("*.ipynb"))]
    if exercises:
        sources += [(p, Path(ASSIGNMENT) / p.name)
                    for p in sorted((root / "exercises").glob("*.ipynb"))]
    written = []
    for source, relpath in sources:
        target = home / relpath
        if target.exists() or target.is_symlink():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.copy-tmp")
        tmp.write_bytes(delivered_bytes(source, exercises=ASSIGNMENT))
        try:
            os.link(tmp, target)  # never over a file that appeared meanwhile
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
        written.append(relpath.as_posix())
    return written


def main(argv: list[str] | None = None) -> int:
    """Make or update the workspace or home named in ``argv``; print one line on failure."""
    argv = sys.argv[1:] if argv is None else argv
    layout = os.environ.get("CHECKPOINT_LAB_LAYOUT") or "workspace"
    if len(argv) != 1 or layout not in LAYOUTS:
        print("usage: CHECKPOINT_LAB_LAYOUT={" + ",".join(LAYOUTS) + "} "
              "python -m graders.workspace.binder FOLDER", file=sys.stderr)
        return 2
    try:
        if layout == "workspace":
            lines = Workspace(Path(argv[0])).sync().lines()
        else:
            lines = [f"added {p}" for p in release_into_home(
                Path(argv[0]), exercises=layout == "hub-with-exercises")]
    except (WorkspaceError, OSError) as err:
        what = "the workspace" if layout == "workspace" else f"the home ({layout})"
        print(f"Checkpoint Lab: could not prepare {what} {argv[0]}: {err}", file=sys.stderr)
        return 1
    for line in lines:
        print(f"Checkpoint Lab: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
