"""Which observer watches a submission here: grading's sandbox, strace alone, or the in-process
recorder.

Grading needs the sandbox (bubblewrap under strace); ``CHECKPOINT_LAB_SANDBOX=off`` (what
``checkpoint-lab grade --no-sandbox`` sets, for trusted code only) keeps strace and drops the
sandbox; where neither can run, grading refuses with the reason (:func:`grading_problem`).

A student's self-check needs an observer, never a sandbox: the student's own code on their own
machine needs no jail. It takes the best one the machine has, in this order (:func:`observer`):

1. ``sandbox``: strace over bubblewrap, exactly as grading runs it;
2. ``strace``: strace alone, the code unconfined (a JupyterHub pod, a container, a laptop with
   strace but no user namespaces), its folders shown to the judge as ``/work`` and ``/tmp``;
3. ``inprocess``: the in-process recorder (:mod:`graders.inprocess.record`), pure Python, on
   macOS, Windows, anywhere, and in a browser.

All three give the judge the same recording, and the judge builds every crash state from it by
replay. ``CHECKPOINT_LAB_OBSERVER`` (``sandbox``, ``strace`` or ``inprocess``) forces one, for
the tests and the benchmarks; ``CHECKPOINT_LAB_SANDBOX=selfcheck`` means ``inprocess``.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

from graders.grading.recorded import RecordedHarness, StraceHarness, TracedHarness
from graders.sandbox import box
from graders.sandbox.box import observer_problem, sandbox_problem
from graders.sandbox.serve import SandboxUnavailable

__all__ = ["MODE_ENV", "sandboxed", "OBSERVER_ENV", "OBSERVERS", "NOTES", "harness_for",
           "grading_problem", "observer", "observer_note", "strace_problem"]

MODE_ENV = "CHECKPOINT_LAB_SANDBOX"
OBSERVER_ENV = "CHECKPOINT_LAB_OBSERVER"
OBSERVERS = ("sandbox", "strace", "inprocess")

#: The line a self-check shows when its observer is not grading's sandbox, by observer.
NOTES = {
    "strace": ("Self-check: this machine cannot make grading's sandbox, so strace watched your "
               "code run unconfined; every crash state was built from that record, as grading "
               "builds them."),
    "inprocess": ("Self-check: this machine has no strace, so your code ran in this process "
                  "while the course recorded its file operations; every crash state was built "
                  "from that record, as grading builds them."),
}


def _mode() -> str:
    return os.environ.get(MODE_ENV, "on").strip().lower()


def sandboxed() -> bool:
    """Whether runs go in the sandbox: the one reading of ``CHECKPOINT_LAB_SANDBOX`` (``off``,
    ``0``, ``no``, ``false`` and ``selfcheck`` say no, in any case)."""
    return _mode() not in ("off", "0", "no", "false", "selfcheck")


def grading_problem() -> str | None:
    """Why grading cannot run here in the configured mode (one line), or None."""
    if _mode() == "selfcheck":
        return "the self-check's in-process recorder was asked for (CHECKPOINT_LAB_SANDBOX)"
    return sandbox_problem() if sandboxed() else observer_problem()


@functools.lru_cache(maxsize=4)
def _strace_runs(strace: str) -> str | None:
    """Whether strace can really trace a child here (a pod may forbid ptrace)."""
    try:
        proc = subprocess.run([strace, "-f", "-qq", "-o", os.devnull, "--", "true"],
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as err:
        return f"strace could not start here ({err})"
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return f"strace is installed but cannot trace here ({why})"
    return None


def strace_problem() -> str | None:
    """Why strace alone cannot watch a run here (one line), or None."""
    problem = observer_problem()
    return problem or _strace_runs(box.find_tools().strace)


def observer() -> str:
    """The observer a self-check uses here: ``sandbox``, ``strace`` or ``inprocess``."""
    forced = os.environ.get(OBSERVER_ENV, "").strip().lower()
    if forced in OBSERVERS:
        return forced
    if _mode() == "selfcheck":
        return "inprocess"
    if sandboxed() and grading_problem() is None:
        return "sandbox"
    if strace_problem() is None:
        return "strace"
    return "inprocess"


#: The in-process note in a browser tab (the site's Pyodide), where "this machine" is a tab.
BROWSER_NOTE = ("Self-check in this browser tab: your code ran here while the course recorded its "
                "file operations; every crash state was built from that record, as grading "
                "builds them.")


def observer_note() -> str | None:
    """The one line a self-check shows about its observer here (None for grading's own)."""
    chosen = observer()
    if chosen == "inprocess" and sys.platform == "emscripten":
        return BROWSER_NOTE
    return NOTES.get(chosen)


def harness_for(submission, timeout: float | None, *, allow_fallback: bool = False,
                rules=None):
    """(harness, note): the harness that runs ``submission`` here, and a line to show, if any.

    Grading (``allow_fallback`` False) runs where :func:`grading_problem` allows, else raises
    :class:`SandboxUnavailable`; a self-check (``allow_fallback``) runs on :func:`observer`.
    ``rules`` is what each crash state is held to (:class:`TracedHarness`). Live functions (no
    source) run in the forking harness (:class:`graders.grading.forked.Harness`).
    """
    if submission.in_process:
        from graders.grading.forked import DEFAULT_TIMEOUT, Harness

        return Harness(submission, timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                       rules=rules), None
    if not allow_fallback:
        problem = grading_problem()
        if problem is not None:
            raise SandboxUnavailable(problem)
        return TracedHarness(submission, timeout=timeout, sandbox=sandboxed(), rules=rules), None
    chosen = observer()
    if chosen == "sandbox":
        return TracedHarness(submission, timeout=timeout, rules=rules), None
    if chosen == "strace":
        return StraceHarness(submission, timeout=timeout, rules=rules), NOTES["strace"]
    return RecordedHarness(submission, timeout=timeout, rules=rules), NOTES["inprocess"]
