"""The harness of the in-process recorder: the traced harness's questions (``run_matrix``,
``run_point``, ``crash_points``, ``power_verdicts``, ...), answered from one run per scenario
recorded inside this process (:func:`graders.inprocess.record.record_in_process`) and replayed
by the same judge that grades.
"""

from __future__ import annotations

from collections.abc import Iterable

from graders.inprocess.record import DEFAULT_TIMEOUT, record_in_process
from graders.judge.crash_points import CrashPoint
from graders.judge.observation import Observation
from graders.sandbox.harness import TracedHarness

__all__ = ["RecordedHarness", "NOTE"]

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
        return record_in_process(self.submission.source, sc, timeout=self.timeout)

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
