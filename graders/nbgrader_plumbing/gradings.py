"""The gradings an autograde run starts outside the kernel, and how long they live.

nbgrader makes its preprocessors anew for every notebook, so the gradings that
`graders.nbgrader_plumbing.preprocessors` starts (a notebook's, and its sibling notebooks' ahead
of nbgrader's turn) are kept here, by the run's exporter (which lasts the whole run): one
:class:`Gradings` per submission, closed when the run turns to another submission, when the run
is over and its exporter goes, or by :func:`close_gradings` (the grading worker, once a student
is done, finished or out of time). Nothing started for one submission or run reaches another.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
import weakref
from collections.abc import Callable

__all__ = ["Gradings", "gradings_of", "close_gradings"]

_NUMBER = itertools.count(1)


class Gradings:
    """One submission's gradings, on threads of its own, kept by the answer cells' key.

    ``grade(cells, timeout)`` grades one notebook's answer cells. :meth:`close` ends it: what
    has not started is cancelled (unless ``cancel=False``), what runs is left to finish (each
    run is bounded by its timeout) on threads no other submission waits behind, and nothing
    started here is handed out any more.
    """

    def __init__(self, grade: Callable, workers: int = 4, submission: str = "") -> None:
        self.name = f"verdicts-{next(_NUMBER)}"
        self.submission = submission
        self.closed = False
        self._grade = grade
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers,
                                                           thread_name_prefix=self.name)
        self._started: dict[tuple, concurrent.futures.Future] = {}
        self._lock = threading.Lock()

    def start(self, cells, timeout: float | None) -> concurrent.futures.Future:
        """The grading of ``cells`` (started now unless it already was)."""
        with self._lock:
            if self.closed:
                raise RuntimeError(f"{self.name} is closed: its submission's autograde is over")
            key = cells.key()
            if key not in self._started:
                self._started[key] = self._pool.submit(self._grade, cells, timeout)
            return self._started[key]

    def taken(self, cells) -> None:
        """``cells``' grading is handed over: forget it."""
        with self._lock:
            self._started.pop(cells.key(), None)

    def close(self, cancel: bool = True) -> None:
        with self._lock:
            self.closed = True
            self._started.clear()
        self._pool.shutdown(wait=False, cancel_futures=cancel)

    def __enter__(self) -> Gradings:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Run:
    """One autograde run's gradings: one :class:`Gradings` per submission, in turn."""

    def __init__(self) -> None:
        self.gradings: Gradings | None = None

    def close(self) -> None:
        if self.gradings is not None:
            self.gradings.close()


_RUNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_RUNS_LOCK = threading.Lock()


def gradings_of(exporter, submission: str, grade: Callable) -> Gradings:
    """The gradings of ``submission`` (its folder) in the autograde run of ``exporter``, made
    at the submission's first notebook. Without an exporter (a preprocessor used on its own), a
    one-thread one of its own, which the caller closes."""
    if exporter is None:
        return Gradings(grade, workers=1, submission=submission)
    with _RUNS_LOCK:
        run = _RUNS.get(exporter)
        if run is None:
            run = _RUNS[exporter] = _Run()
            weakref.finalize(exporter, run.close)
        if run.gradings is None or run.gradings.closed \
                or run.gradings.submission != submission:
            run.close()
            run.gradings = Gradings(grade, submission=submission)
        return run.gradings


def close_gradings() -> None:
    """Close the gradings of every autograde run of this process."""
    with _RUNS_LOCK:
        runs = list(_RUNS.values())
    for run in runs:
        run.close()
