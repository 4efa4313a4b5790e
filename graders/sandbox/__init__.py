"""The untrusted side when grading: start a submission in a sandbox, serve its calls, record it.

It never judges: :func:`record` returns a :class:`~graders.judge.recording.Recording` of facts
gathered from outside the submission's processes (the judge's plain data type, the only thing of
the judge it imports), and the grading layer (:mod:`graders.grading`) hands it to
:mod:`graders.judge`. ``_bootstrap`` runs inside; :mod:`graders.recording` reads and answers its
frames, ``session`` runs one sandboxed run, ``fill_disk`` fills its disk from outside, ``sweep``
clears what a grader killed from outside left, ``uid_closing`` puts back what the uid tier closed.
"""

from graders.sandbox.box import find_tools, observer_problem, sandbox_problem
from graders.sandbox.serve import DEFAULT_TIMEOUT, SandboxUnavailable, read_safely, record

__all__ = ["record", "SandboxUnavailable", "sandbox_problem", "observer_problem", "find_tools",
           "read_safely", "DEFAULT_TIMEOUT"]
