"""Checkpoint Lab's graders: crash the student's code, judge what resume would find, grade it.

One package per job (DEVELOPERS.md has the table): ``sandbox`` and ``inprocess`` observe a
submission (they record, never judge), ``judge`` turns a recording into verdicts, ``grading``
chooses an observer, records and judges, ``checks`` holds each exercise's checks,
``nbgrader_plumbing``, ``gradescope``, ``cli``, ``workspace`` and ``teaching`` serve instructors
and students. What a notebook may import is :mod:`graders.notebook`.

``from graders import Submission, crash_points, run_point`` is the path notebooks of earlier
releases used: it still works, with a ``DeprecationWarning`` naming :mod:`graders.notebook`.
This module imports nothing, so ``import graders`` stays cheap (the forking harness's
runner process imports this package too).
"""


#: What notebooks of earlier releases imported from here.
_EARLIER = ("Submission", "crash_points", "run_point")


def __getattr__(name: str):
    if name not in _EARLIER:  # a subpackage not imported yet, or a name that never was
        raise AttributeError(f"module 'graders' has no attribute {name!r}")
    from graders.notebook import warned_alias

    return warned_alias("graders", _EARLIER, stacklevel=3)(name)
