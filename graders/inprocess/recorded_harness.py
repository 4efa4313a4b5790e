"""The harness of the in-process recorder: the traced harness's questions (``run_matrix``,
``run_point``, ``crash_points``, ``power_verdicts``, ...), answered from one run per scenario
recorded inside this process (:func:`graders.inprocess.record.record_in_process`) and replayed
by the same judge that grades.
"""

from __future__ import annotations

from collections.abc import Iterable

from graders.inprocess.record import DEFAULT_TIMEOUT, record_in_process
from graders.judge.crash_points import CrashPoint, tear_limit
from graders.judge.observation import Observation, SaveRecord
from graders.sandbox.harness import TracedHarness
from graders.sandbox.serve import SandboxUnavailable
from graders.submission import parse_python

__all__ = ["RecordedHarness", "NOTE", "unwatchable"]

#: Modules that reach the C library without Python's os and io: what they do, no recorder in
#: Python sees.
_FOREIGN = ("ctypes", "_ctypes", "cffi")

#: The one line a self-check or a lesson shows when its crash states come from this recorder.
NOTE = ("Recorded in this process: your code ran once here while the course recorded its file "
        "operations, and every crash state was built from that record, as grading builds them "
        "from what it watches in its sandbox.")


class RecordedHarness(TracedHarness):
    """One source submission, one run per scenario recorded in this process (see the module)."""

    note = NOTE

    def __init__(self, submission, *, timeout: float | None = None, checker=None) -> None:
        super().__init__(submission, timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                         sandbox=False, checker=checker)

    def _record(self, sc):
        problem = unwatchable(self.submission.source)
        if problem:
            raise SandboxUnavailable(problem)
        return record_in_process(self.submission.source, sc, timeout=self.timeout)

    def _record_extra(self, source: str, sc, *, sandbox: bool = False, **how):
        return record_in_process(source, sc, **how)

    def run_point(self, scenario, point: str | CrashPoint) -> Observation:
        """What was on disk at ``point``: as the forking harness's real kill leaves it, so a
        torn write is the moment halfway through the write that tears ``checkpoint.json`` (its
        first moment otherwise)."""
        point_id = point.id if isinstance(point, CrashPoint) else point
        _rec, _verdicts, matrix = self._run(scenario)
        for pm in (matrix.points if matrix is not None else []):
            if pm.point.id == point_id:
                moment = (_tearing(pm, matrix) if pm.point.kind == "torn_write"
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


def _tearing(pm, matrix):
    """The moment a real torn write leaves (:func:`graders.judge.crash_points.tear_limit`): in
    the first write that changes ``checkpoint.json``, cut where the forking harness's file-size
    limit cuts it; else the middle of the first write; else the first moment."""
    moments = pm.moments
    during = [m for m in moments if m.how == "during"]
    if not during:
        return moments[0]
    before = {m.position: m for m in moments if m.how == "before"}
    changing = [m for m in during if before.get(m.position) is None
                or (m.kind, m.data) != (before[m.position].kind, before[m.position].data)]
    position = (changing or during)[0].position
    cuts = [m for m in during if m.position == position]
    expected = (cuts[0].write or {}).get("bytes")
    previous = None
    for save in matrix.saves:
        if pm.point.index is not None and save.n >= pm.point.index:
            break
        if save.completed:
            previous = save.snapshot
    limit = (tear_limit("checkpoint" if changing else "temp", expected, previous)
             if expected else None)
    half = max(1, (expected or 2) // 2)
    for wanted in (limit, half):
        for moment in cuts:
            if (moment.write or {}).get("kept") == wanted:
                return moment
    return cuts[0]


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
    import ast

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
