"""The crash harness: run a submission against a scenario and kill it at every crash point.

A source submission is loaded once into a fresh ``python`` process, the *runner*
(:mod:`graders.inprocess.runner`), which forks one child per crash point. Each child runs
``run_agent``
in a fresh temporary working directory and is killed at its crash point; this process (never
the runner, never a child) then reads what is on disk and the tool ledger, and the judge turns
it into a :class:`~graders.judge.verdict.Verdict`.

    from graders import Submission, run_matrix
    for verdict in run_matrix(Submission.from_file("answer.py"), "support-tickets"):
        print(verdict)

Each function opens and closes its own runner. To make several calls with one runner (and one
dry run per scenario), use a :class:`Harness`::

    with Harness(sub) as h:
        points = h.crash_points("support-tickets")
        obs = h.run_point("support-tickets", "killed_during_tool_2")

The parts: :mod:`~graders.inprocess.runner_backend` speaks the runner protocol
(:mod:`~graders.inprocess.fork_backend` forks from this process instead, in-process mode);
:mod:`~graders.inprocess.child` is one child's life and :mod:`~graders.inprocess.recorder` its
instrumentation; :mod:`~graders.inprocess.waiting` reaps and kills the children.

Where there is no ``fork`` (Windows, a browser's Python), a :class:`Harness` of a source
submission is a :class:`~graders.inprocess.recorded_harness.RecordedHarness` instead: the same
questions answered from one run recorded in this process and replayed, as grading replays its
recordings; it says so in one line, once. Live functions there are recorded from the notebook
cells that defined them where IPython compiled those (a browser's kernel), else reported as
skipped.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from graders.inprocess.arguments import checked_kinds, point_kind, scenario_of
from graders.inprocess.collect import collect
from graders.inprocess.errors import HarnessError, RunnerDied
from graders.inprocess.load_messages import load_message
from graders.inprocess.posix_support import scratch_dir, unsupported_reason
from graders.inprocess.runner_backend import RunnerBackend
from graders.judge.checkpoint_rules import check, load_error_verdict, skipped_verdict
from graders.judge.crash_points import NO_CRASH, CrashPoint, derive_points
from graders.judge.observation import Observation
from graders.judge.verdict import Verdict
from graders.submission import Submission

__all__ = ["Harness", "HarnessError", "dry_run", "crash_points", "run_point", "run_matrix",
           "DEFAULT_TIMEOUT", "unsupported_reason"]

#: Seconds a child may run before it is killed and reported as a hang.
DEFAULT_TIMEOUT = 5.0


#: The line a lesson shows (once) where its crash runs are recorded and replayed, not forked.
REPLAYED_NOTE = ("No fork here: these crash states come from one recorded run of the code, "
                 "replayed as grading replays its recordings, not from killing a real process.")
_told: list[bool] = []


def _cells_of(submission: Submission) -> Submission | None:
    """Live functions as the source of the notebook cells that defined them, where IPython
    compiled those cells itself (``<ipython-input-...>``: a browser's kernel); None elsewhere."""
    import linecache

    cells: list[str] = []
    for function in (submission.save_checkpoint, submission.run_agent):
        filename = getattr(getattr(function, "__code__", None), "co_filename", "")
        lines = linecache.getlines(filename) if filename.startswith("<ipython-input-") else []
        if not lines:
            return None
        if "".join(lines) not in cells:
            cells.append("".join(lines))
    return Submission.from_source("\n\n".join(cells), name=submission.name,
                                  filename="<your notebook cells>")


class Harness:
    """One submission, one runner, a dry run per scenario: run crash points and check them.

    Args:
        submission: the code under test.
        timeout: seconds a child may run before it is reported as a hang.
        jobs: how many children run at once (default: 2 if the machine has 2 cores or more).
        keep_files: keep the temporary directories (their path is ``root``) after ``close``.
        tmpdir: where to make them (default: ``/dev/shm`` if it exists, else the system's
            temporary directory).
    """

    def __new__(cls, submission=None, *args, **kwargs):
        if cls is Harness and isinstance(submission, Submission) and unsupported_reason():
            source = _cells_of(submission) if submission.in_process else submission
            if source is not None:
                from graders.inprocess.recorded_harness import RecordedHarness

                if not _told:
                    _told.append(True)
                    print(REPLAYED_NOTE)
                return RecordedHarness(source, timeout=kwargs.get("timeout"))
        return super().__new__(cls)

    def __init__(self, submission: Submission, *, timeout: float = DEFAULT_TIMEOUT,
                 jobs: int | None = None, keep_files: bool = False,
                 tmpdir: str | None = None) -> None:
        if not isinstance(submission, Submission):
            raise TypeError(f"Harness needs a Submission, not {type(submission).__name__}")
        self.submission = submission
        self.timeout = float(timeout)
        self.jobs = jobs if jobs is not None else min(2, os.cpu_count() or 1)
        self.keep_files = keep_files
        self.tmpdir = tmpdir if tmpdir is not None else scratch_dir()
        self.root: Path | None = None
        self._backend = None
        self._load: dict | None = None
        self._dry: dict[str, Observation] = {}
        self._points: dict[str, list[CrashPoint]] = {}
        self._scenarios: dict[str, Any] = {}
        self._seq = 0

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the runner (and everything it started) and remove the temporary directories."""
        if self._backend is not None:
            self._backend.close()
            self._backend = None
        if self.root is not None and not self.keep_files:
            shutil.rmtree(self.root, ignore_errors=True)

    def load_problem(self) -> str | None:
        """Why the submission cannot be run at all (as a student message), or None."""
        if unsupported_reason():
            return None
        if self._load is None:
            problem = self.submission.problem()
            if problem is not None:
                self._load = {"ok": False, "message": problem}
            else:
                if self.root is None:
                    self.root = Path(tempfile.mkdtemp(prefix="checkpoint-lab-",
                                                      dir=self.tmpdir))
                if self.submission.in_process:
                    # imported here: the forking side binds os.fork, which Windows lacks
                    from graders.inprocess.fork_backend import ForkBackend

                    self._backend = ForkBackend(self.submission)
                else:
                    self._backend = RunnerBackend(self.submission, self.root)
                reply = self._backend.load(self.timeout)
                if not reply.get("ok"):
                    reply["message"] = load_message(reply)
                self._load = reply
        return None if self._load.get("ok") else self._load["message"]

    def scenario(self, scenario):
        """The fake_llm Scenario named ``scenario`` (loaded in this process, for the judge)."""
        name = scenario if isinstance(scenario, str) else scenario.name
        if name not in self._scenarios:
            self._scenarios[name] = scenario_of(scenario)
        return self._scenarios[name]

    # -- runs ------------------------------------------------------------------------------

    def _not_run(self, scenario: str, point: str, kind: str) -> Observation | None:
        reason = unsupported_reason()
        if reason:
            return Observation(scenario, point, kind, ended="skipped", detail=reason)
        problem = self.load_problem()
        if problem:
            return Observation(scenario, point, kind, ended="not_loaded", detail=problem)
        return None

    def _run(self, scenario: str, points: list[CrashPoint], *, dry: bool = False):
        """Run ``points``; yield (point, Observation) as each child ends."""
        plans = []
        by_id = {}
        for point in points:
            self._seq += 1
            base = self.root / f"{self._seq:03d}-{point.id}"
            plan = point.plan()
            plan.update(base=str(base), cwd=str(base / "work"), hdir=str(base / "harness"),
                        dry=dry)
            plans.append(plan)
            by_id[point.id] = (point, base)
        for point_id, status in self._statuses(scenario, plans):
            point, base = by_id[point_id]
            status["timeout"] = self.timeout
            obs = collect(scenario, point.id, point.kind, base / "work", base / "harness", status,
                          dry=dry)
            if not self.keep_files:
                shutil.rmtree(base, ignore_errors=True)
            yield point, obs

    def _statuses(self, scenario: str, plans: list[dict]):
        """(point id, wait status) for each plan; if the runner dies, the rest died with it."""
        done: set[str] = set()
        if self._backend is None:  # the last runner died: start a fresh one
            problem = self.load_problem()
            if problem or self._backend is None:
                for plan in plans:
                    yield plan["id"], {"exit": None, "runner_died": problem, "elapsed": 0.0}
                return
        try:
            for point_id, status in self._backend.run(scenario, plans, self.timeout, self.jobs):
                done.add(point_id)
                yield point_id, status
        except RunnerDied as died:
            self._backend.close()
            self._backend, self._load = None, None  # the next run starts a fresh runner
            for plan in plans:
                if plan["id"] not in done:
                    yield plan["id"], {"exit": None, "runner_died": str(died), "elapsed": 0.0}

    def dry_run(self, scenario) -> Observation:
        """The ``no_crash`` run, with the save trace (and a snapshot after each save)."""
        name = self.scenario(scenario).name
        if name not in self._dry:
            not_run = self._not_run(name, NO_CRASH, NO_CRASH)
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
        not_run = self._not_run(name, point_id, point_kind(point_id))
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
        not_run = self._not_run(name, NO_CRASH, NO_CRASH)
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
        """Run every crash point of ``scenario`` (or only those of ``kinds``); check each.

        Returns the verdicts in timeline order. A submission that cannot be loaded gets one
        verdict, with point ``"load"``, saying why.
        """
        sc = self.scenario(scenario)
        kinds = checked_kinds(kinds)
        reason = unsupported_reason()
        if reason:
            return [skipped_verdict(sc.name, reason)]
        problem = self.load_problem()
        if problem:
            return [load_error_verdict(sc.name, problem)]
        points = [p for p in self.crash_points(sc.name) if p.kind in kinds]
        verdicts: dict[str, Verdict] = {}
        if NO_CRASH in kinds:
            verdicts[NO_CRASH] = check(self.dry_run(sc.name), sc, points[-1])
        todo = [p for p in points if p.kind != NO_CRASH]
        for point, obs in self._run(sc.name, todo):
            verdicts[point.id] = check(obs, sc, point)
        return [verdicts[p.id] for p in points]


def _harness(sub, timeout: float | None) -> tuple[Harness, bool]:
    if isinstance(sub, Harness):
        return sub, False
    return Harness(sub, timeout=DEFAULT_TIMEOUT if timeout is None else timeout), True


def dry_run(sub: Submission | Harness, scenario, *,
            timeout: float | None = None) -> Observation:
    """The no-crash run of ``sub`` on ``scenario``: an Observation with the save trace."""
    harness, own = _harness(sub, timeout)
    try:
        return harness.dry_run(scenario)
    finally:
        if own:
            harness.close()


def crash_points(sub: Submission | Harness, scenario, *,
                 timeout: float | None = None) -> list[CrashPoint]:
    """The crash points of ``sub`` on ``scenario``, in the order their moments come."""
    harness, own = _harness(sub, timeout)
    try:
        return harness.crash_points(scenario)
    finally:
        if own:
            harness.close()


def run_point(sub: Submission | Harness, scenario, point: str | CrashPoint, *,
              timeout: float | None = None) -> Observation:
    """Run ``sub`` on ``scenario``, killed at ``point`` (an id: ``"killed_during_tool_2"``)."""
    harness, own = _harness(sub, timeout)
    try:
        return harness.run_point(scenario, point)
    finally:
        if own:
            harness.close()


def run_matrix(sub: Submission | Harness, scenario, kinds: Iterable[str] | None = None, *,
               timeout: float | None = None) -> list[Verdict]:
    """Run and check every crash point of ``sub`` on ``scenario``; verdicts in timeline order."""
    harness, own = _harness(sub, timeout)
    try:
        return harness.run_matrix(scenario, kinds)
    finally:
        if own:
            harness.close()
