"""The reference solutions, copied into the student's workspace when they ask for them.

The course keeps them in its own ``solutions/`` folder, which JupyterLab's file browser (rooted at
the workspace) cannot reach, and a workspace holds none by default: a student should try first.
``checkpoint-lab solutions [LEVEL]`` in a terminal, or ``solutions()`` in a notebook cell::

    from graders.workspace.solutions import solutions
    solutions(2)

copies them into ``<workspace>/solutions/`` and says where they are. A copy the student already
has (perhaps with notes of their own) is kept.

The notebooks say to look once your checks pass. Until the visible checks of your saved copy of
the exercise pass, both ask first: the notebook shows a "Copy the solutions anyway" button (or, in
a viewer without widgets, ``solutions(2, anyway=True)``), the terminal asks "Copy them anyway?"
(or takes ``--anyway``). The links ``solutions()`` shows are made from the notebook's own folder
(Jupyter gives the kernel the notebook's path), never from wherever the kernel's current folder
happens to be.
"""

from __future__ import annotations

import html
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Copied", "LEVELS", "copy_solutions", "not_passing", "solution_files", "solutions"]

#: The exercises' levels; each has ``solutions/NN_<exercise>.py`` and its written answers.
LEVELS = (1, 2, 3, 4)
#: Why there is nothing to copy where the course is an installed package, not a checkout.
NOT_INSTALLED = ("the solutions are not part of this installation: the course was installed as a "
                 "package (a hub, or a class's image), which carries no solutions/ folder, and "
                 "your instructor hands them out")


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
    from graders.workspace.notebooks import WorkspaceError, course_root

    try:
        folder = course_root() / "solutions"
    except WorkspaceError as err:  # installed as a package (a hub, a course image): no checkout
        raise FileNotFoundError(NOT_INSTALLED) from err
    prefixes = (f"{level:02d}_",) if level else tuple(f"{n:02d}_" for n in LEVELS)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"this copy of the course has no solutions/ folder ({folder}): a class's image leaves "
            "it out, and your instructor hands the solutions out")
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and p.name.startswith(prefixes) and p.suffix in (".py", ".md"))


def _exercise_names(level: int | None) -> list[str]:
    """The exercise notebooks (``NN_name``) of ``level``, or of every level."""
    from graders.checks import NOTEBOOKS

    wanted = (f"{level:02d}_",) if level else tuple(f"{n:02d}_" for n in LEVELS)
    return [name for name in NOTEBOOKS if name.startswith(wanted)]


def not_passing(workspace: Path, level: int | None = None) -> list[str]:
    """Why the student should try first: one line per exercise of ``level`` (default every
    level) whose copy in ``workspace``, as last saved, does not pass its visible checks yet."""
    from graders.checks.answer_cells import NotebookError
    from graders.checks.selfcheck import NotAnExercise, failing_checks
    from graders.workspace.student_files import exercise_copy

    session = Path(os.environ.get("JPY_SESSION_NAME", "") or ".")  # the notebook asking, if any
    lines = []
    for name in _exercise_names(level):
        copy = session if session.name == f"{name}.ipynb" else exercise_copy(name, workspace)
        shown = copy.relative_to(workspace).as_posix() if copy.is_relative_to(workspace) else copy
        if not copy.is_file():
            lines.append(f"{shown}: not in your workspace yet")
            continue
        try:
            failing = failing_checks(copy)
        except (NotebookError, NotAnExercise) as err:
            lines.append(f"{shown}: cannot be checked ({err})")
            continue
        except OSError as err:
            lines.append(f"{shown}: cannot be read ({err.strerror or err})")
            continue
        if failing:
            lines.append(f"{shown} (as last saved): {', '.join(failing)} not passed yet")
    return lines


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


def _notebook_folder() -> Path:
    """The folder of the notebook this kernel runs (Jupyter says it in ``JPY_SESSION_NAME``);
    the current folder where there is none."""
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb") and Path(session).is_absolute():
        return Path(session).parent
    return Path.cwd()


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
        # JupyterLab opens a relative link from the notebook's own folder
        here = _notebook_folder()
        items = []
        for path in self.copied.files:
            link = Path(os.path.relpath(path, here)).as_posix()
            kept = " (your copy, kept)" if path in self.copied.kept else ""
            items.append(f'<li><a href="{html.escape(link)}">solutions/{html.escape(path.name)}'
                         f"</a>{kept}</li>")
        return (f"<p>The solutions are in <code>solutions/</code> in your workspace (JupyterLab's "
                f"file browser); click one to open it:</p><ul>{''.join(items)}</ul>")

    def __repr__(self) -> str:
        return str(self)


def _ask_first_text(level: int | None, why: list[str]) -> str:
    which = f"Level {level}" if level else "every level"
    return ("The notebook says to look at the solutions once your checks pass, and they do not "
            "yet:\n" + "\n".join(f"  {line}" for line in why) + "\nFinding the failures "
            f"yourself is the exercise; `hint()` gives the next step. To copy {which}'s solutions "
            "anyway: " + (f"solutions({level}, anyway=True)" if level else
                          "solutions(anyway=True)"))


def _ask_first(level: int | None, ws: Path, why: list[str]):
    """A question with a button that copies the solutions anyway (text where there are no
    widgets)."""
    import ipywidgets as widgets

    from graders.teaching._fallback import TextFallback

    class AskFirst(TextFallback, widgets.VBox):
        rerun_hint = "Run this cell again to see the solutions (or the question before them)."

        def fallback_text(self) -> str:
            return _ask_first_text(level, why)

    which = f"Level {level}'s" if level else "every level's"
    items = "".join(f"<li>{html.escape(line)}</li>" for line in why)
    question = widgets.HTML(
        "<p>The notebook says to look at the solutions <b>once your checks pass</b>, and they "
        f"do not yet:</p><ul>{items}</ul><p>Finding the failures yourself is the exercise; "
        "<code>hint()</code> gives the next step.</p>")
    button = widgets.Button(description=f"Copy {which} solutions anyway",
                            layout=widgets.Layout(width="auto"))
    button.add_class("cl-solutions-anyway")
    view = AskFirst([question, button])
    view.add_class("cl-solutions-ask")

    def copy_anyway(_button) -> None:
        shown = _Shown(copy_solutions(ws, level), ws)
        done = widgets.HTML(shown._repr_html_())
        done.add_class("cl-solutions-copied")
        view.children = [done]

    button.on_click(copy_anyway)
    return view


def solutions(level: int | None = None, *, workspace: str | Path | None = None,
              anyway: bool = False):
    """In a notebook: copy the solutions into your workspace and show where they are.

    ``level`` is 1 to 4 (default: every level). Until the visible checks of your saved copy of
    the exercise pass, it asks first (a button; ``anyway=True`` skips the question). Nothing is
    copied while the work is graded.
    """
    from graders.checks import in_grading_kernel
    from graders.workspace.student_files import workspace_path

    if in_grading_kernel():
        print("Nothing is copied while your work is graded.")
        return None
    if sys.platform == "emscripten":  # the course's website (JupyterLite) carries no solutions
        print("The solutions are not part of this website: they are in the course's repository "
              "(solutions/), and your instructor has them.")
        return None
    if level is not None and level not in LEVELS:
        raise ValueError(f"there is no level {level}: give 1 to {LEVELS[-1]}, or nothing for "
                         "every level")
    ws = workspace_path(workspace)
    try:
        solution_files(level)
    except FileNotFoundError as err:
        print(f"No solutions to copy: {err}.")
        return None
    why = [] if anyway else not_passing(ws, level)
    if why:
        return _ask_first(level, ws, why)
    return _Shown(copy_solutions(ws, level), ws)
