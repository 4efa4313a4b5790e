"""The forking observer: a submission's crash runs, each child killed for real where its plan says.

A source submission is loaded once into a fresh ``python`` process, the *runner*
(:mod:`graders.inprocess.runner`, spoken to by :mod:`~graders.inprocess.runner_backend`), which
forks one child per plan; live functions are forked from this process
(:mod:`~graders.inprocess.fork_backend`). Each child runs ``run_agent`` in a fresh working
directory and is killed at its plan's point (:mod:`~graders.inprocess.child`,
:mod:`~graders.inprocess.recorder`); this process, never the runner nor a child, then reads what
is on disk and the tool ledger (:mod:`~graders.inprocess.collect`): one
:class:`~graders.judge.recording.Observation` per plan. It never judges: where to kill (the
crash points of a dry run) and what an observation is worth are the grading layer's
(:class:`graders.grading.forked.Harness`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from graders import load_errors
from graders.inprocess.collect import collect
from graders.inprocess.runner_backend import RunnerBackend
from graders.inprocess.support import RunnerDied, scratch_dir, unsupported_reason
from graders.judge.recording import Observation
from graders.recording import run_folders
from graders.submission import Submission

__all__ = ["ForkedRuns", "DEFAULT_TIMEOUT"]

#: Seconds a child may run before it is killed and reported as a hang.
DEFAULT_TIMEOUT = 5.0


class ForkedRuns:
    """One submission, one runner: crash runs by plan (see the module).

    Args:
        submission: the code under test.
        timeout: seconds a child may run before it is reported as a hang.
        jobs: how many children run at once (default: 2 if the machine has 2 cores or more).
        keep_files: keep the temporary directories (their path is ``root``) after ``close``.
        tmpdir: where to make them (default: ``/dev/shm`` if it exists, else the system's
            temporary directory).
    """

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
        self._folder: run_folders.RunFolder | None = None
        self._backend = None
        self._load: dict | None = None
        self._seq = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the runner (and everything it started) and remove the temporary directories."""
        if self._backend is not None:
            self._backend.close()
            self._backend = None
        if self._folder is not None:
            if self.keep_files:
                self._folder.keep()
            else:
                self._folder.remove()
            self._folder = None

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
                    self._folder = run_folders.make("fork", self.tmpdir)
                    self.root = self._folder.path
                if self.submission.in_process:
                    # imported here: the forking side binds os.fork, which Windows lacks
                    from graders.inprocess.fork_backend import ForkBackend

                    self._backend = ForkBackend(self.submission)
                else:
                    self._backend = RunnerBackend(self.submission, self.root)
                reply = self._backend.load(self.timeout)
                if not reply.get("ok"):
                    reply["message"] = load_errors.runner_message(reply)
                self._load = reply
        return None if self._load.get("ok") else self._load["message"]

    def not_run(self, scenario: str, point: str, kind: str) -> Observation | None:
        """The observation of a run that cannot happen here (no fork, code that cannot load)."""
        reason = unsupported_reason()
        if reason:
            return Observation(scenario, point, kind, ended="skipped", detail=reason)
        problem = self.load_problem()
        if problem:
            return Observation(scenario, point, kind, ended="not_loaded", detail=problem)
        return None

    def observe(self, scenario: str, plans: list[dict], *, dry: bool = False):
        """Run one child per plan (:meth:`graders.judge.crash_points.CrashPoint.plan`); yield
        (plan, Observation) as each child ends."""
        by_id = {}
        for plan in plans:
            self._seq += 1
            base = self.root / f"{self._seq:03d}-{plan['id']}"
            plan = dict(plan, base=str(base), cwd=str(base / "work"), hdir=str(base / "harness"),
                        dry=dry)
            by_id[plan["id"]] = (plan, base)
        for point_id, status in self._statuses(scenario, [p for p, _ in by_id.values()]):
            plan, base = by_id[point_id]
            status["timeout"] = self.timeout
            obs = collect(scenario, plan["id"], plan["kind"], base / "work", base / "harness",
                          status, dry=dry)
            if not self.keep_files:
                shutil.rmtree(base, ignore_errors=True)
            yield plan, obs

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
