"""Two fixes to nbgrader's own behaviour, named by the course's ``nbgrader_config.py``.

- :func:`add_submission_without_autoflush`: nbgrader 0.9's ``Gradebook.add_submission`` builds a
  new submission's objects (SubmittedAssignment, SubmittedNotebook, Grade, Comment) attached to
  rows of the session and reads ``submission.assignment.notebooks`` before it adds the submission
  to the session. Since SQLAlchemy 2.0 no longer adds such objects through backrefs, that read
  autoflushes a half-built graph and SQLAlchemy warns ``SAWarning: Object of type
  <SubmittedAssignment> not in session`` once per new student. Building it with autoflush off is
  what the warning asks for: nothing is flushed until nbgrader adds and commits the submission.
- :data:`FEEDBACK_TEMPLATES`: the course's feedback template (``graders/data/nbconvert/feedback``,
  nbgrader's own with no MathJax from a CDN and a Content-Security-Policy), found before
  nbgrader's; nbgrader's folder stays on the list for formgrader's own templates.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["FEEDBACK_TEMPLATES", "add_submission_without_autoflush", "template_basedirs"]

#: The folder of the course's nbconvert templates (``feedback/`` in it).
FEEDBACK_TEMPLATES = Path(__file__).resolve().parents[1] / "data" / "nbconvert"


def template_basedirs() -> list[str]:
    """``HTMLExporter.extra_template_basedirs``: the course's templates, then nbgrader's."""
    import nbgrader

    nbgrader_templates = (Path(nbgrader.__file__).resolve().parent / "server_extensions"
                          / "formgrader" / "templates")
    return [str(FEEDBACK_TEMPLATES), str(nbgrader_templates)]


def add_submission_without_autoflush() -> None:
    """Make nbgrader's ``Gradebook.add_submission`` build the submission with autoflush off
    (idempotent)."""
    from nbgrader.api import Gradebook

    original = Gradebook.add_submission
    if getattr(original, "_checkpoint_lab_no_autoflush", False):
        return

    @functools.wraps(original)
    def add_submission(self, *args, **kwargs):
        with self.db.no_autoflush:
            return original(self, *args, **kwargs)

    add_submission._checkpoint_lab_no_autoflush = True
    Gradebook.add_submission = add_submission
