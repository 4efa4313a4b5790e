"""The notebook API: every name a released notebook, a lesson or a student's workspace imports.

    from graders.notebook import Hints, run_check, self_check

These names stay from one release to the next; everything else under ``graders`` is the course's
own and may move. A name imported by an earlier release from another path keeps that path as an
alias that warns (a ``DeprecationWarning`` naming this module, nbgrader's practice), because a
student's workspace keeps its copy of a notebook across releases. Each name is imported on first
use, so a notebook's import cell loads only what it uses.

- an exercise: :func:`run_check` (one visible check), :func:`self_check` (the table of all of
  them), :class:`Hints` (the opt-in hints), :func:`scratch_folder` and :func:`working_in` (where
  ``try_it()`` runs), :func:`lock_answer`, :func:`compare_saves`, :func:`show_saves`, and the
  given code :func:`given_loop` and :func:`given_save` (Levels 3 and 4: the grader's own, not
  in the notebook, since they are Level 2's answer);
- crash runs and resume: :class:`Submission`, :class:`Harness` (the forking harness),
  :func:`crash_points`, :func:`run_point`, :func:`run_matrix`, :func:`dry_run`,
  :class:`HarnessError`, :func:`resume`;
- the lessons' widgets and scenes (:mod:`graders.teaching`);
- the workspace: :func:`solutions` (the reference, copied on request).
"""

from __future__ import annotations

import importlib
import warnings

_WHERE = {
    # an exercise
    "run_check": "graders.checks.live",
    "self_check": "graders.checks.selfcheck",
    "Hints": "graders.checks.hints",
    "scratch_folder": "graders.workspace.scratch",
    "working_in": "graders.workspace.scratch",
    "lock_answer": "graders.teaching.predict",
    "compare_saves": "graders.teaching.power_cut",
    "show_saves": "graders.teaching.power_cut",
    "given_loop": "graders.loop.lesson_loop",
    "given_save": "graders.loop.lesson_loop",
    # crash runs and resume
    "Submission": "graders.submission",
    "Harness": "graders.grading.forked",
    "HarnessError": "graders.grading.forked",
    "crash_points": "graders.grading.forked",
    "run_point": "graders.grading.forked",
    "run_matrix": "graders.grading.forked",
    "dry_run": "graders.grading.forked",
    "resume": "graders.loop.resume",
    # the lessons
    "predict": "graders.teaching.predict",
    "compare": "graders.teaching.predict",
    "say": "graders.teaching.scene",
    "describe_run": "graders.teaching.scene",
    "ledger_lines": "graders.teaching.scene",
    "ran_twice": "graders.teaching.scene",
    "without": "graders.teaching.scene",
    "variant": "graders.teaching.variants",
    "no_checkpoint": "graders.teaching.variants",
    "lesson_function": "graders.teaching.variants",
    "show_checkpoint": "graders.teaching.checkpoint_view",
    "show_code": "graders.teaching.code_view",
    "build_timeline": "graders.teaching.timeline",
    "show_timeline": "graders.teaching.widgets",
    "show_quiz": "graders.teaching.widgets",
    "show_knowledge_check": "graders.teaching.widgets",
    "power_cut_table": "graders.teaching.power_cut",
    "show_turn": "graders.teaching.parallel_turn",
    "show_power_steps": "graders.teaching.power_steps",
    "turn_moments": "graders.teaching.parallel_turn",
    "cross_filesystem_rename": "graders.teaching.deeper",
    "two_writers": "graders.teaching.deeper",
    "filesystem_of": "graders.teaching.filesystem",
    "TOOL_LATENCY": "graders.teaching.cost",
    "measure_save_cost": "graders.teaching.cost",
    "plot_save_cost": "graders.teaching.cost",
    "read_cost": "graders.teaching.cost",
    "figure_png": "graders.teaching.cost",
    "show_save_cost": "graders.teaching.cost",
    # the workspace
    "solutions": "graders.workspace.solutions",
}

__all__ = list(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'graders.notebook' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


#: The day the earlier paths (``graders.harness``, ``graders.hints``, ``graders.resume``,
#: ``graders.selfcheck``, ``from graders import ...``) go: notebooks saved before then have had a
#: release's warning to move; ``tests/test_architecture.py`` fails once the day has passed.
EARLIER_PATHS_UNTIL = "2027-09-01"


def warned_alias(old: str, names: tuple[str, ...], stacklevel: int = 2):
    """The ``__getattr__`` of module ``old``, an earlier path of ``names``: each is this
    module's, with a ``DeprecationWarning`` that names the path to use instead (said of the
    line ``stacklevel`` frames up: the import)."""

    def alias(name: str):
        if name not in names:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(f"{old}.{name} has moved: import it from graders.notebook "
                      f"(from graders.notebook import {name}); the earlier path goes on "
                      f"{EARLIER_PATHS_UNTIL}", DeprecationWarning,
                      stacklevel=stacklevel)
        return __getattr__(name)

    return alias
