"""The untrusted side: start a submission in a sandbox, serve its calls, record what it does.

It never judges: :func:`record` returns a :class:`~graders.judge.Recording` of facts gathered
from outside the submission's processes, and :mod:`graders.judge` turns that into verdicts.
``_bootstrap`` runs inside; ``framing`` and ``calls`` read and answer its frames, ``session``
runs one sandboxed run, ``full_disk`` fills its disk from outside, ``extra_runs`` makes the
restarts and the full-disk run beside the recorded one.
"""

from graders.sandbox.box import find_tools, observer_problem, sandbox_problem
from graders.sandbox.serve import DEFAULT_TIMEOUT, SandboxUnavailable, read_safely, record

__all__ = ["record", "SandboxUnavailable", "sandbox_problem", "observer_problem", "find_tools",
           "read_safely", "DEFAULT_TIMEOUT"]
