"""Runs beside a submission's one recorded run: restarts after a kill, and a disk that fills.

Both belong to Level 2's atomic-save checks (their kinds, ``restart`` and ``disk_full``, are
among the check's kinds): a save must leave one complete checkpoint not only when it is killed,
but in the next run after a kill that left files behind, and when the disk fills under it. Each
is a second run, recorded by the same observer as the first (sandboxed and traced when grading,
the in-process recorder for a self-check without one); the judge decides
(:mod:`graders.judge.restarts`, :mod:`graders.judge.full_disk`). Restarts cost one run per
distinct set of leftovers (names one save alone used, as ``mkstemp``'s, count as one), the full
disk one run per scenario.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from graders.judge.full_disk import FULL_DISK, fill_call, judge_full_disk
from graders.judge.matrix import Matrix
from graders.judge.restarts import RESTART, judge_restart, restart_plans
from graders.judge.verdict import Verdict
from graders.loop import restart
from graders.parallel import side_by_side
from graders.sandbox.serve import record

__all__ = ["EXTRA_KINDS", "extra_verdicts"]

#: The kinds of verdict these runs give.
EXTRA_KINDS = (RESTART, FULL_DISK)


def extra_verdicts(source: str, scenario, matrix: Matrix, kinds, *, sandbox: bool,
                   timeout: float, rules, record: Callable = record) -> list[Verdict]:
    """The restart verdicts and the full-disk verdict of ``source`` on ``scenario`` (those of
    ``kinds``), from the crash states of its recorded run ``matrix`` (held to ``rules``, to find
    the states a restart starts from); the runs side by side (the work is in their processes:
    the threads only wait). ``record`` makes each run (the sandbox's
    :func:`graders.sandbox.record` unless the first run was recorded another way)."""
    runs: list[Callable[[], Verdict | None]] = []
    if RESTART in kinds:
        for plan in restart_plans(matrix, scenario, rules):
            runs.append(functools.partial(_restart, record, source, scenario, plan, sandbox,
                                          timeout))
    if FULL_DISK in kinds:
        runs.append(functools.partial(_full_disk, record, source, scenario, sandbox, timeout))
    if not runs:
        return []
    return [v for v in side_by_side(lambda run: run(), runs, workers=3) if v is not None]


def _restart(record: Callable, source: str, scenario, plan, sandbox: bool,
             timeout: float) -> Verdict:
    rec = record(restart.joined(source), scenario, sandbox=sandbox, timeout=timeout,
                 seed=plan.seed)
    return judge_restart(plan, rec, scenario)


def _full_disk(record: Callable, source: str, scenario, sandbox: bool,
               timeout: float) -> Verdict | None:
    rec = record(source, scenario, sandbox=sandbox, timeout=timeout, fill_at=fill_call(scenario))
    return judge_full_disk(rec, scenario)
