"""The exercises' checks: what each autograded test cell checks, and how a submission is graded.

``CHECKS`` maps a check id (the ``grade_id`` of an autograded test cell) to its `Check`. Two ways
to run them:

- :func:`grade_submission` grades a submission's source (the answer cells of one exercise
  notebook, from :func:`submission_from_notebook`) in fresh processes. Nothing the student's code
  does can change a verdict: the code runs in child processes, and this process reads what they
  left on disk and decides. It never raises on a bad submission: a syntax error, a missing
  function, a hang or an ``os._exit`` fails the affected checks with a message saying why.
- :func:`run_check` runs one visible check on the live functions of a student's kernel and shows
  the result, for the student's own information (their grade is computed by
  :func:`grade_submission` at grading time).

The messages say what was done, what came back and what was expected, in the lesson's words.

The package, by job: :mod:`~graders.checks.base` (the exercises, `Check`, the registry),
one module per exercise named as the exercise is (``incomplete_checkpoint``,
``two_latent_failures``, ``power_cut``, ``parallel_tool_calls``), :mod:`~graders.checks.
counting` (which verdict fails which check), :mod:`~graders.checks.answer_cells`,
:mod:`~graders.checks.grading`, :mod:`~graders.checks.live` (the self-check in a kernel),
:mod:`~graders.checks.table` and :mod:`~graders.checks.hints`.
"""

from __future__ import annotations

# Importing the exercises' modules (grading imports all four) registers their checks.
from graders.checks.answer_cells import (
    NotebookError,
    notebook_of,
    read_notebook,
    submission_from_notebook,
)
from graders.checks.base import ANSWER_CELLS, CHECKS, GRADING_ENV, NOTEBOOKS, Check, checks_for
from graders.checks.counting import counts_against
from graders.checks.grading import grade_submission
from graders.checks.live import Points, evaluate_check, in_grading_kernel, run_check
from graders.checks.result import CheckResult

__all__ = [
    "CHECKS", "Check", "CheckResult", "NOTEBOOKS", "GRADING_ENV", "ANSWER_CELLS",
    "NotebookError", "read_notebook", "run_check", "Points", "evaluate_check",
    "in_grading_kernel", "grade_submission", "submission_from_notebook", "checks_for",
    "counts_against", "notebook_of",
]



