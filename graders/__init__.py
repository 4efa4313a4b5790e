"""Checkpoint Lab's graders: crash the student's code, judge what resume would find, grade it.

One package per job (DEVELOPERS.md has the table): ``sandbox`` runs a submission boxed and
watched from outside, ``judge`` turns what was seen into verdicts, ``checks`` holds each
exercise's checks, ``nbgrader_plumbing``, ``gradescope``, ``cli``, ``workspace`` and ``teaching``
serve instructors and students; ``inprocess`` is the unboxed observer of the lessons.

    from graders import Submission, run_matrix
    verdicts = run_matrix(Submission.from_file("answer.py"), "support-tickets")

The names below are imported on first use, so ``import graders`` stays cheap (the harness's
runner process imports this package too).
"""

from __future__ import annotations

import importlib

__all__ = [
    "Submission",
    "CrashPoint",
    "Observation",
    "Verdict",
    "Harness",
    "HarnessError",
    "run_matrix",
    "run_point",
    "dry_run",
    "crash_points",
    "check",
    "KINDS",
    "DEFAULT_TIMEOUT",
]

_WHERE = {
    "Submission": "graders.submission",
    "CrashPoint": "graders.judge.crash_points",
    "KINDS": "graders.judge.crash_points",
    "Observation": "graders.judge.observation",
    "Verdict": "graders.judge.verdict",
    "Harness": "graders.inprocess.harness",
    "HarnessError": "graders.inprocess.harness",
    "DEFAULT_TIMEOUT": "graders.inprocess.harness",
    "run_matrix": "graders.inprocess.harness",
    "run_point": "graders.inprocess.harness",
    "dry_run": "graders.inprocess.harness",
    "crash_points": "graders.inprocess.harness",
    "check": "graders.judge.checkpoint_rules",
}


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'graders' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
