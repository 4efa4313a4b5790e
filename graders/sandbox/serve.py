"""Run a submission once, sandboxed and traced, while this process plays the model and the tools.

:func:`record` is the only place where the grading process meets the student's code, and it
meets it only through a socket: every ``call_model`` and ``execute_tool`` of any process of the
submission arrives here, is answered from the scenario's fake model and fake tools, and is logged
with ``checkpoint.json`` as it was on disk at that moment (read from outside the sandbox, never
following a link, never blocking on a FIFO, capped in size). What the submission says about
itself is never taken as a fact: the :class:`~graders.judge.recording.Recording` holds this
process's log and the trace strace wrote, nothing the submission wrote.
"""

from __future__ import annotations

from graders.judge.recording import Recording
from graders.recording.readings import read_safely
from graders.sandbox.box import observer_problem, sandbox_problem
from graders.sandbox.session import Session

__all__ = ["record", "SandboxUnavailable", "read_safely", "DEFAULT_TIMEOUT"]

#: Seconds one run of a submission may take, loading included.
DEFAULT_TIMEOUT = 10.0


class SandboxUnavailable(RuntimeError):
    """The sandbox (or the observer) cannot run on this machine; the message says why, in a line."""


def record(source: str, scenario=None, *, mode: str = "loop", sandbox: bool = True,
           timeout: float = DEFAULT_TIMEOUT, keep: bool = False, seed: list | None = None,
           fill_at: tuple[str, int] | None = None) -> Recording:
    """Run ``source`` once on ``scenario`` (a fake_llm Scenario) in the sandbox, traced.

    ``mode`` is ``"loop"`` (call ``run_agent``) or ``"missing_fields"`` (only load the code and
    describe its ``MISSING_FIELDS``). ``seed`` makes the run a restart: the files of a crash
    state (``{"path", "kind", "data", "target"}``, paths under ``/work`` and ``/tmp``, data in
    base64) are in place before the code is loaded. ``fill_at`` (``("tool", 2)``) fills the disk
    once that call has been served (:meth:`Session.fill_disk_at`). With ``sandbox=False`` the
    code runs traced but as this user, unconfined: for trusted code only. Raises
    :class:`SandboxUnavailable` when what is needed is missing; never raises for anything the
    submission does.
    """
    problem = sandbox_problem() if sandbox else observer_problem()
    if problem:
        raise SandboxUnavailable(problem)
    session = Session(source, scenario, mode=mode, sandbox=sandbox, timeout=timeout, keep=keep)
    if seed is not None:
        session.seed(seed)
    if fill_at is not None:
        session.fill_disk_at(*fill_at)
    try:
        session.start()
        session.serve()
    finally:
        session.stop()
    return session.rec
