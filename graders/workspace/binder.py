"""The student's workspace on Binder and in a repo2docker image (Zero to JupyterHub): ``start``.

repo2docker runs the repository's ``start`` at every start of the container, before JupyterLab.
It runs ``python -m graders.workspace.binder DIR``, which makes or updates the student's workspace
in ``DIR`` (``graders.workspace.notebooks.Workspace``: the student's own copies of the released
notebooks, laid out as ``checkpoint-lab lab`` lays them out), and then starts JupyterLab there.
So there is one layout everywhere (links between lessons and exercises resolve as in a
workspace), each lesson appears once (no jupytext ``.py`` twin), a notebook opens unmodified (its
``language_info`` is this kernel's), and the course's own files are never the student's copies.
"""

from __future__ import annotations

import sys
from pathlib import Path

from graders.workspace.notebooks import Workspace, WorkspaceError

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Make or update the workspace named in ``argv``; print one line on failure."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m graders.workspace.binder WORKSPACE", file=sys.stderr)
        return 2
    try:
        workspace = Workspace(Path(argv[0]))
        report = workspace.sync()
    except (WorkspaceError, OSError) as err:
        print(f"Checkpoint Lab: could not prepare the workspace {argv[0]}: {err}",
              file=sys.stderr)
        return 1
    for line in report.lines():
        print(f"Checkpoint Lab: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
