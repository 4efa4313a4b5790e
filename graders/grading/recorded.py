"""Record once, then judge: the harnesses whose crash states come from one recording per scenario.

Each runs a source submission ONCE per scenario on its observer and hands the recording to
:mod:`graders.judge`, which derives every crash point from it; same questions as the forking
harness (``run_matrix``, ``run_point``, ``crash_points``, ``dry_run``), answered without running
the submission again. By observer:

- :class:`TracedHarness`: strace over the sandbox (:func:`graders.sandbox.record`), as grading
  runs; :class:`StraceHarness`: strace alone, unconfined (a self-check, ``--no-sandbox``);
- :class:`RecordedHarness`: the in-process recorder
  (:func:`graders.inprocess.record.record_in_process`, imported only when it is used), a
  self-check or a lesson without strace or without fork.

A recording the grader lost part of is made again, once; the restarts and the full-disk run are
made by the same observer (:mod:`graders.grading.recorded`).

Runs beside a submission's one recorded run: restarts after a kill, and a disk that fills.

Both belong to Level 2's atomic-save checks (their kinds, ``restart`` and ``disk_full``, are
among the check's kinds): a save must leave one complete checkpoint not only when it is killed,
but in the next run after a kill that left files behind, and when the disk fills under it. Each
is a second run, recorded by the same observer as the first (sandboxed and traced when grading,
the in-process recorder for a self-check without one); the judge decides
(:mod:`graders.judge.restarts`, :mod:`graders.judge.restarts`). Restarts cost one run per
distinct set of leftovers (names one save alone used, as ``mkstemp``'s, count as one), the full
disk one run per scenario.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable

from graders.judge.checkpoint_rules import check, load_error_verdict
from graders.judge.crash_points import NO_CRASH, CrashPoint, point_kind
from graders.judge.matrix import (
    IncompleteRecording,
    Matrix,
    judge,
    load_message,
    tearing_moment,
)
from graders.judge.power import judge_power
from graders.judge.recording import Observation, SaveRecord, Verdict
from graders.judge.restarts import (
    FULL_DISK,
    RESTART,
    fill_call,
    judge_full_disk,
    judge_restart,
    restart_plans,
)
from graders.loop import restart
from graders.parallel import side_by_side
from graders.sandbox.serve import DEFAULT_TIMEOUT, SandboxUnavailable, record
from graders.submission import Submission, parse_python

__all__ = ["TracedHarness", "StraceHarness", "RecordedHarness", "unwatchable", "EXTRA_KINDS",
           "extra_verdicts"]


# -- extra runs ------------------------------------------------------------------------------------


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


# -- recorded --------------------------------------------------------------------------------------


#: Modules that reach the C library without Python's os and io: what they do, no recorder in
#: Python sees.
_FOREIGN = ("ctypes", "_ctypes", "cffi")


class TracedHarness:
    """One source submission, one sandboxed and traced run per scenario.

    Args:
        submission: a source submission (not live functions: those run in the student's own
            process and can only be self-checked, see :class:`graders.grading.forked.Harness`).
        timeout: seconds one run may take.
        sandbox: False runs the code traced but unconfined (trusted code only).
        rules: what one crash state is held to (default:
            :func:`graders.judge.checkpoint_rules.check`; Level 4: ``parallel_rules.check``).
    """

    def __init__(self, submission: Submission, *, timeout: float | None = None,
                 sandbox: bool = True, rules=None) -> None:
        if submission.in_process:
            raise TypeError("TracedHarness grades source submissions; live functions are "
                            "self-checked with graders.grading.forked.Harness")
        self.submission = submission
        self.timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
        self.sandbox = sandbox
        self.rules = rules or check
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
                for attempt in (1, 2):  # a recording the grader lost part of is made again
                    rec = self._record(sc)
                    _locate_errors(rec, self.submission)
                    try:
                        verdicts, matrix = judge(rec, sc, rules=self.rules)
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
        """The restart and full-disk verdicts of ``kinds`` (:mod:`graders.grading.recorded`),
        run once per scenario and kind."""
        sc = self.scenario(scenario)
        done = self._extras.setdefault(sc.name, {})
        for kind in sorted(kinds & set(EXTRA_KINDS) - set(done)):
            done[kind] = extra_verdicts(self.submission.source, sc, matrix, {kind},
                                        sandbox=self.sandbox, timeout=self.timeout,
                                        rules=self.rules, record=self._record_extra)
        return [v for kind in sorted(kinds & set(done)) for v in done[kind]]

    def power_verdicts(self, scenario) -> list[Verdict]:
        """Verdicts of every power-cut crash point of ``scenario``, from the same one run."""
        _rec, verdicts, matrix = self._run(scenario)
        if matrix is None:
            return list(verdicts)
        power = judge_power(matrix, self.scenario(scenario), self.rules)
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
            return Observation(sc.name, point_id, point_kind(point_id), ended="not_loaded",
                               detail=message)
        for pm in matrix.points:
            if pm.point.id == point_id:
                return matrix.observation(pm, pm.moments[0])
        known = ", ".join(pm.point.id for pm in matrix.points)
        from graders.inprocess.support import HarnessError

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


class StraceHarness(TracedHarness):
    """Strace alone, no sandbox: the run's real working folder is shown to the judge as
    ``/work`` (its temp folder is the machine's ``/tmp``, another filesystem), by the session,
    as for ``--no-sandbox`` grading."""

    def __init__(self, submission, *, timeout: float | None = None, rules=None) -> None:
        super().__init__(submission, timeout=timeout, sandbox=False, rules=rules)


class RecordedHarness(TracedHarness):
    """One source submission, one run per scenario recorded in this process by the in-process
    recorder, and replayed by the same judge that grades."""

    def __init__(self, submission, *, timeout: float | None = None, rules=None) -> None:
        from graders.inprocess.record import DEFAULT_TIMEOUT as RECORDER_TIMEOUT

        super().__init__(submission, timeout=RECORDER_TIMEOUT if timeout is None else timeout,
                         sandbox=False, rules=rules)

    def _record(self, sc):
        from graders.inprocess.record import record_in_process

        problem = unwatchable(self.submission.source)
        if problem:
            raise SandboxUnavailable(problem)
        return record_in_process(self.submission.source, sc, timeout=self.timeout)

    def _record_extra(self, source: str, sc, *, sandbox: bool = False, **how):
        from graders.inprocess.record import record_in_process

        return record_in_process(source, sc, **how)

    def run_point(self, scenario, point: str | CrashPoint) -> Observation:
        """What was on disk at ``point``: as the forking harness's real kill leaves it, so a
        torn write is the moment halfway through the write that tears ``checkpoint.json`` (its
        first moment otherwise)."""
        point_id = point.id if isinstance(point, CrashPoint) else point
        _rec, _verdicts, matrix = self._run(scenario)
        for pm in (matrix.points if matrix is not None else []):
            if pm.point.id == point_id:
                moment = (tearing_moment(pm, matrix.saves) if pm.point.kind == "torn_write"
                          else pm.moments[0])
                return _as_killed(matrix, matrix.observation(pm, moment), moment)
        return super().run_point(scenario, point)

    def point(self, scenario, point: str | CrashPoint) -> CrashPoint:
        """The crash point with id ``point`` (a CrashPoint is returned as is)."""
        if isinstance(point, CrashPoint):
            return point
        for candidate in self.crash_points(scenario):
            if candidate.id == point:
                return candidate
        self.run_point(scenario, point)  # raises HarnessError, naming the points there are
        raise AssertionError("unreachable")

    def run_points(self, scenario, points: Iterable[str | CrashPoint]) -> list[Observation]:
        """What was on disk at each of ``points`` (as the forking harness's ``run_points``)."""
        return [self.run_point(scenario, point) for point in points]


def _locate_errors(rec, submission: Submission) -> None:
    """Say the line of each error in ``rec`` as a line of its part of ``submission`` (the answer
    cell the student wrote), before the judge words its messages."""
    rec.error = submission.locate(rec.error)
    if isinstance(rec.load, dict) and isinstance(rec.load.get("error"), dict):
        rec.load = {**rec.load, "error": submission.locate(rec.load["error"])}


def _as_killed(matrix, obs: Observation, moment) -> Observation:
    """``obs`` as a real kill at ``moment`` leaves it: the saves made so far (not the run's
    all), and a file torn halfway through its write listed at its torn size."""
    starts = [op.index for op in matrix.ops
              if op.call == "marker" and (op.frame or {}).get("op") == "save_start"]
    made = sum(1 for at in starts if at < moment.position)
    obs.saves = obs.saves[:made]
    while len(obs.saves) < made:  # a save that wrote nothing has no group of operations
        obs.saves.append(SaveRecord(n=len(obs.saves) + 1, phase="", tool=None, completed=True))
    if moment.how == "during" and moment.write and moment.op is not None and moment.op.args:
        target = moment.op.args[0]
        path = target.get("path", b"") if isinstance(target, dict) else b""
        name = path.decode("utf-8", "surrogateescape").removeprefix("/work/")
        if isinstance(obs.files.get(name), int):
            obs.files[name] += moment.write["kept"]
    return obs


def unwatchable(source: str | None) -> str | None:
    """Why the in-process recorder cannot watch ``source`` (one line), or None: code that calls
    the C library directly (``ctypes``, ``cffi``) makes system calls no Python patch sees."""
    try:
        tree = parse_python(source or "")
    except (SyntaxError, ValueError):
        return None  # the run reports it
    for node in ast.walk(tree):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        foreign = [n for n in names if n.split(".")[0] in _FOREIGN]
        if foreign:
            return (f"your code calls the C library directly ({foreign[0]}), and this machine "
                    "has no strace to watch those calls (the self-check here records what "
                    "Python's os, io, shutil, tempfile and pathlib do). Run the self-check where "
                    "strace is installed (Linux); grading watches every call in its sandbox")
    return None
