"""The exercises' checks: what each autograded test cell checks, and how a submission is graded.

Each exercise is one record (`Exercise`, in ``EXERCISES``), made and registered by its own module
here, named as the exercise (``incomplete_checkpoint``, ``two_latent_failures``, ``power_cut``,
``parallel_tool_calls``); ``CHECKS`` maps a check id (the ``grade_id`` of an autograded test cell)
to its `Check`. Everything else reads the records. Two ways to run the checks:

- :func:`grade_submission` grades a submission's answer cells (from
  :func:`submission_from_notebook`) with the exercise's ``grade``: the code runs in the sandbox,
  watched from outside, and this process decides from what it recorded. It never raises on a bad
  submission: a syntax error, a missing function, a hang or an ``os._exit`` fails the affected
  checks with a message saying why.
- :func:`run_check` runs one visible check on the live functions of a student's kernel (the
  exercise's ``live``) and shows the result, for the student's own information (their grade is
  computed by :func:`grade_submission` at grading time).

The messages say what was done, what came back and what was expected, in the lesson's words.
"""

from __future__ import annotations

from graders.checks.answer_cells import (
    NotebookError,
    notebook_of,
    read_notebook,
    submission_from_notebook,
)
from graders.checks.base import (
    ANSWER_CELLS,
    CHECKS,
    EXERCISES,
    GRADING_ENV,
    NOTEBOOKS,
    AnswerCell,
    Check,
    Exercise,
    checks_for,
    exercise,
    load,
    register,
)
from graders.checks.counting import counts_against
from graders.checks.grading import grade_submission
from graders.checks.live import Points, evaluate_check, in_grading_kernel, run_check
from graders.checks.result import CheckResult

__all__ = [
    "CHECKS", "Check", "CheckResult", "NOTEBOOKS", "GRADING_ENV", "ANSWER_CELLS", "EXERCISES",
    "Exercise", "AnswerCell", "exercise", "register", "NotebookError", "read_notebook",
    "run_check", "Points", "evaluate_check", "in_grading_kernel", "grade_submission",
    "submission_from_notebook", "checks_for", "counts_against", "notebook_of",
]

load()  # every exercise's module registers its record
