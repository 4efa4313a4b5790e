"""The reference solutions, copied into the student's workspace when they ask for them.

The course keeps them in its own ``solutions/`` folder, which JupyterLab's file browser (rooted at
the workspace) cannot reach, and a workspace holds none by default: a student should try first.
``checkpoint-lab solutions [LEVEL]`` in a terminal, or ``solutions()`` in a notebook cell::

    from graders.workspace.solutions import solutions
    solutions(2)

copies them into ``<workspace>/solutions/`` and says where they are. A copy the student already
has (perhaps with notes of their own) is kept.
"""

from __future__ import annotations

import argparse
import html
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Copied", "add_arguments", "copy_solutions", "run", "solution_files", "solutions"]

#: The exercises' levels; each has ``solutions/NN_<exercise>.py`` and its written answers.
LEVELS = (1, 2, 3, 4)


@dataclass
class Copied:
    """What one request did: the workspace's ``solutions/`` folder and the files in it."""

    folder: Path
    added: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)

    @property
    def files(self) -> list[Path]:
        """Every solution file now in the workspace for this request, in name order."""
        return sorted(self.added + self.kept)


def solution_files(level: int | None = None) -> list[Path]:
    """The course's solution files (``NN_<exercise>.*``, named as the exercise), of one level or
    of every level."""
    from graders.workspace.notebooks import course_root

    folder = course_root() / "solutions"
    prefixes = (f"{level:02d}_",) if level else tuple(f"{n:02d}_" for n in LEVELS)
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and p.name.startswith(prefixes) and p.suffix in (".py", ".md"))


def copy_solutions(workspace: Path, level: int | None = None) -> Copied:
    """Copy the solutions of ``level`` (default every level) into ``workspace/solutions/``."""
    if level is not None and level not in LEVELS:
        raise ValueError(f"there is no level {level}: give 1 to {LEVELS[-1]}, or nothing for "
                         "every level")
    copied = Copied(workspace / "solutions")
    files = solution_files(level)
    if not files:
        raise FileNotFoundError("the course ships no solution files (solutions/NN_*)")
    copied.folder.mkdir(parents=True, exist_ok=True)
    for source in files:
        dest = copied.folder / source.name
        if dest.exists():
            copied.kept.append(dest)
        else:
            shutil.copyfile(source, dest)
            copied.added.append(dest)
    return copied


class _Shown:
    """The result of `solutions` in a notebook: links in JupyterLab, text elsewhere."""

    def __init__(self, copied: Copied, workspace: Path):
        self.copied = copied
        self.workspace = workspace

    def __str__(self) -> str:
        lines = [f"The solutions are in {self.copied.folder} "
                 f"(solutions/ in JupyterLab's file browser):"]
        for path in self.copied.files:
            kept = " (your copy, kept)" if path in self.copied.kept else ""
            lines.append(f"  solutions/{path.name}{kept}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        items = []
        for path in self.copied.files:
            link = os.path.relpath(path, Path.cwd())
            kept = " (your copy, kept)" if path in self.copied.kept else ""
            items.append(f'<li><a href="{html.escape(link)}">solutions/{html.escape(path.name)}'
                         f"</a>{kept}</li>")
        return (f"<p>The solutions are in <code>solutions/</code> in your workspace (JupyterLab's "
                f"file browser); click one to open it:</p><ul>{''.join(items)}</ul>")

    def __repr__(self) -> str:
        return str(self)


def solutions(level: int | None = None, *, workspace: str | Path | None = None):
    """In a notebook: copy the solutions into your workspace and show where they are.

    ``level`` is 1 to 4 (default: every level). Nothing is copied while the work is graded.
    """
    from graders.checks import in_grading_kernel
    from graders.workspace.student_files import workspace_path

    if in_grading_kernel():
        print("Nothing is copied while your work is graded.")
        return None
    ws = workspace_path(workspace)
    return _Shown(copy_solutions(ws, level), ws)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``checkpoint-lab solutions``."""
    parser.description = (
        "Copy the reference solutions (code and model written answers) into your workspace's "
        "solutions/ folder, where JupyterLab's file browser shows them. Try the exercise first: "
        "finding the failures yourself is the point. A copy you already have is kept.")
    parser.add_argument("level", metavar="LEVEL", nargs="?", type=int, choices=LEVELS,
                        help="1 to 4: one level's solutions only (default: every level)")
    parser.add_argument("--workspace", metavar="DIR", default=None,
                        help="your working folder (default: the one JupyterLab serves, else "
                        "workspace/ in the course's folder)")


def run(args: argparse.Namespace) -> int:
    """Copy the solutions; print where they are."""
    from graders.cli import UsageError
    from graders.workspace.notebooks import WorkspaceError
    from graders.workspace.student_files import workspace_path

    ws = workspace_path(args.workspace)
    if not ws.is_dir():
        raise UsageError(f"there is no workspace {ws}; open the course once with `python3 "
                         "course.py lab` (it makes it), or give --workspace DIR")
    try:
        copied = copy_solutions(ws, args.level)
    except (WorkspaceError, FileNotFoundError, OSError) as err:
        raise UsageError(str(err)) from None
    print(f"The solutions are in {copied.folder} (solutions/ in JupyterLab's file browser):")
    for path in copied.files:
        print(f"  {path.name}" + (" (your copy, kept)" if path in copied.kept else ""))
    return 0
