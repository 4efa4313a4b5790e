"""Grade a folder of submissions through nbgrader, on all cores, into a course's gradebook.

Kept as one place to import the batch from; each job has its own module:

- :mod:`~graders.nbgrader_plumbing.submissions`: read the submissions folder, file them for
  nbgrader (``find_submissions``, ``stage_submissions``);
- :mod:`~graders.nbgrader_plumbing.grading_pool`: grade many students at once
  (``autograde_students``, ``default_jobs``);
- :mod:`~graders.nbgrader_plumbing.grading_worker`: one worker process, one student's autograde
  and feedback;
- :mod:`~graders.nbgrader_plumbing.gradebook`: the scores and reasons from the gradebook, and
  zeros for a student with nothing gradable (``read_results``, ``record_zero``);
- :mod:`~graders.nbgrader_plumbing.score_report`: the CSV and the per-student table.
"""

from __future__ import annotations

from graders.nbgrader_plumbing.gradebook import StudentResult, TestScore, read_results, record_zero
from graders.nbgrader_plumbing.grading_pool import autograde_students, default_jobs
from graders.nbgrader_plumbing.grading_worker import LOG_NAME, quiet_sqlalchemy
from graders.nbgrader_plumbing.score_report import format_student, write_csv
from graders.nbgrader_plumbing.submissions import (
    LayoutError,
    Submissions,
    find_submissions,
    handed_in_notebooks,
    stage_submissions,
)

__all__ = [
    "LayoutError",
    "Submissions",
    "TestScore",
    "StudentResult",
    "find_submissions",
    "handed_in_notebooks",
    "stage_submissions",
    "autograde_students",
    "default_jobs",
    "record_zero",
    "quiet_sqlalchemy",
    "read_results",
    "write_csv",
    "format_student",
    "LOG_NAME",
]
