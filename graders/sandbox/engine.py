"""Which harness grades a source submission here: sandboxed, traced only, or the self-check.

``CHECKPOINT_LAB_SANDBOX`` chooses: ``on`` (the default) runs each submission in the sandbox,
watched by strace; ``off`` (what ``checkpoint-lab grade --no-sandbox`` sets, for trusted code
only) keeps the observer and drops the sandbox; ``selfcheck`` uses the self-check's in-process
harness wherever a fallback is allowed (the tests compare the two). Where neither can run
(macOS, Windows, a machine without strace) a student's self-check falls back to the in-process
harness and says so in one line; grading refuses with the reason.
"""

from __future__ import annotations

import os

from graders.sandbox.box import observer_problem, sandbox_problem
from graders.sandbox.serve import SandboxUnavailable

__all__ = ["MODE_ENV", "harness_for", "grading_problem", "SELF_CHECK_NOTE"]

MODE_ENV = "CHECKPOINT_LAB_SANDBOX"

#: The one line a self-check prints when it could not use the outside observer.
SELF_CHECK_NOTE = ("Self-check mode: this machine cannot watch your code from outside (no Linux "
                   "strace), so it ran in-process; grading runs it in a sandbox, watched from "
                   "outside, and may find more.")


def _mode() -> str:
    return os.environ.get(MODE_ENV, "on").strip().lower()


def _sandboxed() -> bool:
    return _mode() not in ("off", "0", "no", "false")


def grading_problem() -> str | None:
    """Why grading cannot run here in the configured mode (one line), or None."""
    if _mode() == "selfcheck":
        return "the self-check's in-process harness was asked for (CHECKPOINT_LAB_SANDBOX)"
    return sandbox_problem() if _sandboxed() else observer_problem()


def harness_for(submission, timeout: float | None, *, allow_fallback: bool = False):
    """(harness, note): the harness that grades ``submission`` here, and a line to show, if any.

    Raises :class:`SandboxUnavailable` when grading cannot run and no fallback is allowed.
    """
    from graders.inprocess.harness import DEFAULT_TIMEOUT, Harness
    from graders.sandbox.harness import TracedHarness

    if submission.in_process:
        return Harness(submission, timeout=DEFAULT_TIMEOUT if timeout is None else timeout), None
    problem = grading_problem()
    if problem is None:
        return TracedHarness(submission, timeout=timeout, sandbox=_sandboxed()), None
    if not allow_fallback:
        raise SandboxUnavailable(problem)
    return (Harness(submission, timeout=DEFAULT_TIMEOUT if timeout is None else timeout),
            SELF_CHECK_NOTE)
