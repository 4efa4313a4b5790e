"""The forking harness: kill a submission at every crash point, for real, and judge what it left.

The runs are the forking observer's (:class:`graders.inprocess.forking.ForkedRuns`: one child per
crash point, killed there); this module decides where to kill (the crash points of a dry run,
:func:`graders.judge.crash_points.derive_points`) and judges each observation
(:func:`graders.judge.checkpoint_rules.check`). The lessons, ``checkpoint-lab crash`` and the
differential test of the replay use it; grading never does.

    from graders.notebook import Submission, run_matrix
    for verdict in run_matrix(Submission.from_file("answer.py"), "support-tickets"):
        print(verdict)

Each function opens and closes its own runner. To make several calls with one runner (and one
dry run per scenario), use a :class:`Harness`::

    with Harness(sub) as h:
        points = h.crash_points("support-tickets")
        obs = h.run_point("support-tickets", "killed_during_tool_2")

Where there is no ``fork`` (Windows, a browser's Python), a :class:`Harness` of a source
submission is a :class:`~graders.grading.recorded.RecordedHarness` instead: the same questions
answered from one run recorded in this process and replayed, as grading replays its recordings;
it says so in one line, once. Live functions there are recorded from the notebook cells that
defined them where IPython compiled those (a browser's kernel), else reported as skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graders.inprocess.forking import DEFAULT_TIMEOUT, ForkedRuns
from graders.inprocess.scenarios import scenario_of
from graders.inprocess.support import HarnessError, unsupported_reason
from graders.judge.checkpoint_rules import check, load_error_verdict, skipped_verdict
from graders.judge.crash_points import KINDS, NO_CRASH, CrashPoint, derive_points, point_kind
from graders.judge.recording import Observation, Verdict
from graders.submission import Submission, cell_of

__all__ = ["Harness", "HarnessError", "dry_run", "crash_points", "run_point", "run_matrix",
           "DEFAULT_TIMEOUT"]

#: The line a lesson shows (once) where its crash runs are recorded and replayed, not forked.
REPLAYED_NOTE = ("No fork here: these crash states come from one recorded run of the code, "
                 "replayed as grading replays its recordings, not from killing a real process.")
_told: list[bool] = []


def _cells_of(submission: Submission) -> Submission | None:
    """Live functions as the source of the notebook cells that defined them, where IPython
    compiled those cells itself (``<ipython-input-...>``: a browser's kernel); None elsewhere."""
    cells: list[str] = []
    for function in (submission.save_checkpoint, submission.run_agent):
        filename = getattr(getattr(function, "__code__", None), "co_filename", "")
        cell = cell_of(function) if filename.startswith("<ipython-input-") else None
        if cell is None:
            return None
        if cell not in cells:
            cells.append(cell)
    return Submission.from_source("\n\n".join(cells), name=submission.name,
                                  filename="<your notebook cells>")



def _checked_kinds(kinds: Iterable[str] | None) -> set[str]:
    """``kinds`` as a set (every kind for ``None``); an unknown kind is a HarnessError."""
    if kinds is None:
        return set(KINDS)
    kinds = {kinds} if isinstance(kinds, str) else set(kinds)
    unknown = kinds - set(KINDS)
    if unknown:
        raise HarnessError(f"unknown crash point kind(s) {sorted(unknown)}; "
                           f"the kinds are {', '.join(KINDS)}")
    return kinds


class Harness(ForkedRuns):
    """One submission, one runner, a dry run per scenario: run crash points and judge them.

    Takes :class:`~graders.inprocess.forking.ForkedRuns`'s arguments (``timeout``, ``jobs``,
    ``keep_files``, ``tmpdir``).
    """

    def __new__(cls, submission=None, *args, **kwargs):
        if cls is Harness and isinstance(submission, Submission) and unsupported_reason():
            source = _cells_of(submission) if submission.in_process else submission
            if source is not None:
                from graders.grading.recorded import RecordedHarness

                if not _told:
                    _told.append(True)
                    print(REPLAYED_NOTE)
                return RecordedHarness(source, timeout=kwargs.get("timeout"),
                                       rules=kwargs.get("rules"))
        return super().__new__(cls)

    def __init__(self, submission: Submission, *, rules=None, **how) -> None:
        super().__init__(submission, **how)
        self.rules = rules or check
        self._dry: dict[str, Observation] = {}
        self._points: dict[str, list[CrashPoint]] = {}
        self._scenarios: dict[str, Any] = {}

    def __enter__(self) -> Harness:
        return self

    def scenario(self, scenario):
        """The fake_llm Scenario named ``scenario`` (loaded in this process, for the judge)."""
        name = scenario if isinstance(scenario, str) else scenario.name
        if name not in self._scenarios:
            self._scenarios[name] = scenario_of(scenario)
        return self._scenarios[name]

    def _run(self, scenario: str, points: list[CrashPoint], *, dry: bool = False):
        """Run ``points``; yield (point, Observation) as each child ends."""
        by_id = {point.id: point for point in points}
        for plan, obs in self.observe(scenario, [p.plan() for p in points], dry=dry):
            yield by_id[plan["id"]], obs

    def dry_run(self, scenario) -> Observation:
        """The ``no_crash`` run, with the save trace (and checkpoint.json after each save)."""
        name = self.scenario(scenario).name
        if name not in self._dry:
            not_run = self.not_run(name, NO_CRASH, NO_CRASH)
            if not_run is not None:
                return not_run
            point = CrashPoint(NO_CRASH, NO_CRASH, None, "with no crash")
            [(_, obs)] = list(self._run(name, [point], dry=True))
            self._dry[name] = obs
        return self._dry[name]

    def crash_points(self, scenario) -> list[CrashPoint]:
        """Every crash point of ``scenario`` for this submission, in timeline order."""
        name = self.scenario(scenario).name
        if name not in self._points:
            dry = self.dry_run(name)
            if dry.ended in ("skipped", "not_loaded"):
                return [CrashPoint(NO_CRASH, NO_CRASH, None, "with no crash")]
            self._points[name] = derive_points(dry)
        return self._points[name]

    def point(self, scenario, point: str | CrashPoint) -> CrashPoint:
        """The crash point with id ``point`` (a CrashPoint is returned as is)."""
        if isinstance(point, CrashPoint):
            return point
        points = self.crash_points(scenario)
        for candidate in points:
            if candidate.id == point:
                return candidate
        known = ", ".join(p.id for p in points)
        raise HarnessError(f"no crash point {point!r} in this run of "
                           f"{self.scenario(scenario).name}; its crash points are: {known}")

    def run_point(self, scenario, point: str | CrashPoint) -> Observation:
        """Run the submission once, killed at ``point``; return what it left on disk."""
        name = self.scenario(scenario).name
        point_id = point.id if isinstance(point, CrashPoint) else point
        not_run = self.not_run(name, point_id, point_kind(point_id))
        if not_run is not None:
            return not_run
        crash = self.point(name, point)
        if crash.kind == NO_CRASH:
            return self.dry_run(name)
        [(_, obs)] = list(self._run(name, [crash]))
        return obs

    def run_points(self, scenario, points: Iterable[str | CrashPoint]) -> list[Observation]:
        """Run several crash points in one batch (``jobs`` at a time); observations in order.

        Faster than one :meth:`run_point` per point when a widget wants a whole timeline.
        """
        name = self.scenario(scenario).name
        wanted = list(points)
        ids = [p.id if isinstance(p, CrashPoint) else p for p in wanted]
        not_run = self.not_run(name, NO_CRASH, NO_CRASH)
        if not_run is not None:
            return [Observation(name, i, point_kind(i), ended=not_run.ended, detail=not_run.detail)
                    for i in ids]
        crashes = [self.point(name, p) for p in wanted]
        todo = list({p.id: p for p in crashes if p.kind != NO_CRASH}.values())
        found = {p.id: obs for p, obs in self._run(name, todo)}
        if any(p.kind == NO_CRASH for p in crashes):
            found[NO_CRASH] = self.dry_run(name)
        return [found[i] for i in ids]

    def run_matrix(self, scenario, kinds: Iterable[str] | None = None) -> list[Verdict]:
        """Run every crash point of ``scenario`` (or only those of ``kinds``); judge each.

        Returns the verdicts in timeline order. A submission that cannot be loaded gets one
        verdict, with point ``"load"``, saying why.
        """
        sc = self.scenario(scenario)
        kinds = _checked_kinds(kinds)
        reason = unsupported_reason()
        if reason:
            return [skipped_verdict(sc.name, reason)]
        problem = self.load_problem()
        if problem:
            return [load_error_verdict(sc.name, problem)]
        points = [p for p in self.crash_points(sc.name) if p.kind in kinds]
        verdicts: dict[str, Verdict] = {}
        if NO_CRASH in kinds:
            verdicts[NO_CRASH] = self.rules(self.dry_run(sc.name), sc, points[-1])
        todo = [p for p in points if p.kind != NO_CRASH]
        for point, obs in self._run(sc.name, todo):
            verdicts[point.id] = self.rules(obs, sc, point)
        return [verdicts[p.id] for p in points]


def _harness(sub, timeout: float | None) -> tuple[Harness, bool]:
    if isinstance(sub, Harness):
        return sub, False
    return Harness(sub, timeout=DEFAULT_TIMEOUT if timeout is None else timeout), True


def _with_harness(sub, timeout: float | None, ask):
    harness, own = _harness(sub, timeout)
    try:
        return ask(harness)
    finally:
        if own:
            harness.close()


def dry_run(sub: Submission | Harness, scenario, *,
            timeout: float | None = None) -> Observation:
    """The no-crash run of ``sub`` on ``scenario``: an Observation with the save trace."""
    return _with_harness(sub, timeout, lambda h: h.dry_run(scenario))


def crash_points(sub: Submission | Harness, scenario, *,
                 timeout: float | None = None) -> list[CrashPoint]:
    """The crash points of ``sub`` on ``scenario``, in the order their moments come."""
    return _with_harness(sub, timeout, lambda h: h.crash_points(scenario))


def run_point(sub: Submission | Harness, scenario, point: str | CrashPoint, *,
              timeout: float | None = None) -> Observation:
    """Run ``sub`` on ``scenario``, killed at ``point`` (an id: ``"killed_during_tool_2"``)."""
    return _with_harness(sub, timeout, lambda h: h.run_point(scenario, point))


def run_matrix(sub: Submission | Harness, scenario, kinds: Iterable[str] | None = None, *,
               timeout: float | None = None) -> list[Verdict]:
    """Run and judge every crash point of ``sub`` on ``scenario``; verdicts in timeline order."""
    return _with_harness(sub, timeout, lambda h: h.run_matrix(scenario, kinds))
