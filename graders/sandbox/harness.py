"""The traced harness: the grading counterpart of :class:`graders.inprocess.harness.Harness`.

It runs a source submission ONCE per scenario in the sandbox (:func:`graders.sandbox.record`)
and lets :mod:`graders.judge` derive every crash point from what was recorded. Same questions as
the forking harness (``run_matrix``, ``run_point``, ``crash_points``, ``dry_run``), answered
without running the submission again.
"""

from __future__ import annotations

from collections.abc import Iterable

from graders.judge.checkpoint_rules import load_error_verdict
from graders.judge.crash_points import KINDS, NO_CRASH, CrashPoint
from graders.judge.observation import Observation
from graders.judge.verdict import Verdict
from graders.judge.verdicts import judge, load_message
from graders.sandbox.extra_runs import EXTRA_KINDS, extra_verdicts
from graders.sandbox.serve import DEFAULT_TIMEOUT, record
from graders.submission import Submission

__all__ = ["TracedHarness"]


class TracedHarness:
    """One source submission, one sandboxed and traced run per scenario.

    Args:
        submission: a source submission (not live functions: those run in the student's own
            process and can only be self-checked, see :class:`graders.inprocess.harness.Harness`).
        timeout: seconds one run may take.
        sandbox: False runs the code traced but unconfined (trusted code only).
        checker: judges one crash state (default: :func:`graders.judge.checkpoint_rules.check`).
    """

    def __init__(self, submission: Submission, *, timeout: float | None = None,
                 sandbox: bool = True, checker=None) -> None:
        if submission.in_process:
            raise TypeError("TracedHarness grades source submissions; live functions are "
                            "self-checked with graders.inprocess.harness.Harness")
        self.submission = submission
        self.timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
        self.sandbox = sandbox
        self.checker = checker
        self._runs: dict[str, tuple] = {}
        self._extras: dict[str, dict[str, list[Verdict]]] = {}
        self._scenarios: dict = {}

    def __enter__(self) -> TracedHarness:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to stop: each run ends before :meth:`record` returns."""

    def scenario(self, scenario):
        """The fake_llm Scenario named ``scenario``."""
        import fake_llm

        name = scenario if isinstance(scenario, str) else scenario.name
        if name not in self._scenarios:
            self._scenarios[name] = (fake_llm.load_scenario(scenario)
                                     if isinstance(scenario, str) else scenario)
        return self._scenarios[name]

    def _record(self, sc):
        """One recorded run on scenario ``sc`` (another observer's harness records its own way)."""
        return record(self.submission.source, sc, sandbox=self.sandbox, timeout=self.timeout)

    def _record_extra(self, source: str, sc, **how):
        """A run beside the recorded one (a restart, a full disk), recorded the same way."""
        return record(source, sc, **how)

    def load_problem(self) -> str | None:
        """Why the submission cannot run at all (a student message), or None."""
        return self.submission.problem()

    def _run(self, scenario):
        sc = self.scenario(scenario)
        if sc.name not in self._runs:
            problem = self.load_problem()
            if problem:
                self._runs[sc.name] = (None, [load_error_verdict(sc.name, problem)], None)
            else:
                from graders.judge.matrix import IncompleteRecording

                for attempt in (1, 2):  # a recording the grader lost part of is made again
                    rec = self._record(sc)
                    _locate_errors(rec, self.submission)
                    try:
                        verdicts, matrix = (judge(rec, sc) if self.checker is None
                                            else judge(rec, sc, checker=self.checker))
                        break
                    except IncompleteRecording:
                        if attempt == 2:
                            raise
                self._runs[sc.name] = (rec, verdicts, matrix)
        return self._runs[sc.name]

    def run_matrix(self, scenario, kinds: Iterable[str] | None = None) -> list[Verdict]:
        """Verdicts of every crash point of ``scenario`` (of ``kinds``), in timeline order;
        asked for by kind, the restarts and the full disk too, before the run's end."""
        _rec, verdicts, matrix = self._run(scenario)
        if kinds is None:
            return list(verdicts)
        kinds = {kinds} if isinstance(kinds, str) else set(kinds)
        mine = [v for v in verdicts if v.kind in kinds or v.kind in (NO_CRASH, "load")]
        if matrix is not None and kinds & set(EXTRA_KINDS):
            mine[-1:-1] = self._extra(scenario, matrix, kinds)
        return mine

    def _extra(self, scenario, matrix, kinds: set[str]) -> list[Verdict]:
        """The restart and full-disk verdicts of ``kinds`` (:mod:`graders.sandbox.extra_runs`),
        run once per scenario and kind."""
        from graders.judge.checkpoint_rules import check

        sc = self.scenario(scenario)
        done = self._extras.setdefault(sc.name, {})
        for kind in sorted(kinds & set(EXTRA_KINDS) - set(done)):
            done[kind] = extra_verdicts(self.submission.source, sc, matrix, {kind},
                                        sandbox=self.sandbox, timeout=self.timeout,
                                        checker=self.checker or check, record=self._record_extra)
        return [v for kind in sorted(kinds & set(done)) for v in done[kind]]

    def power_verdicts(self, scenario) -> list[Verdict]:
        """Verdicts of every power-cut crash point of ``scenario``, from the same one run."""
        from graders.judge.checkpoint_rules import check
        from graders.judge.power import judge_power

        _rec, verdicts, matrix = self._run(scenario)
        if matrix is None:
            return list(verdicts)
        power = judge_power(matrix, self.scenario(scenario), check)
        end = [v for v in verdicts if v.kind == NO_CRASH]
        return power + end

    def crash_points(self, scenario) -> list[CrashPoint]:
        """The crash points the recorded run has, in timeline order."""
        _rec, _verdicts, matrix = self._run(scenario)
        if matrix is None:
            return [CrashPoint(NO_CRASH, NO_CRASH, None, "with no crash")]
        return [pm.point for pm in matrix.points]

    def run_point(self, scenario, point: str | CrashPoint) -> Observation:
        """What was on disk at ``point`` (its first moment), as an Observation."""
        rec, _verdicts, matrix = self._run(scenario)
        point_id = point.id if isinstance(point, CrashPoint) else point
        sc = self.scenario(scenario)
        if matrix is None:
            message = (load_message(rec) if rec is not None else None) or (
                self.load_problem() or "could not run")
            return Observation(sc.name, point_id, _kind(point_id), ended="not_loaded",
                               detail=message)
        for pm in matrix.points:
            if pm.point.id == point_id:
                return matrix.observation(pm, pm.moments[0])
        known = ", ".join(pm.point.id for pm in matrix.points)
        from graders.inprocess.errors import HarnessError

        raise HarnessError(f"no crash point {point_id!r} in this run of {sc.name}; its crash "
                           f"points are: {known}")

    def observations(self, scenario, point: str | CrashPoint) -> list[Observation]:
        """What was on disk at every moment ``point`` stands for (a save has several)."""
        _rec, _verdicts, matrix = self._run(scenario)
        point_id = point.id if isinstance(point, CrashPoint) else point
        for pm in (matrix.points if matrix is not None else []):
            if pm.point.id == point_id:
                return [matrix.observation(pm, moment) for moment in pm.moments]
        return [self.run_point(scenario, point_id)]

    def dry_run(self, scenario) -> Observation:
        """The ``no_crash`` observation."""
        return self.run_point(scenario, NO_CRASH)


def _locate_errors(rec, submission: Submission) -> None:
    """Say the line of each error in ``rec`` as a line of its part of ``submission`` (the answer
    cell the student wrote), before the judge words its messages."""
    rec.error = submission.locate(rec.error)
    if isinstance(rec.load, dict) and isinstance(rec.load.get("error"), dict):
        rec.load = {**rec.load, "error": submission.locate(rec.load["error"])}


def _kind(point_id: str) -> str:
    for kind in sorted(KINDS, key=len, reverse=True):
        if point_id.startswith(kind):
            return kind
    return "unknown"
