"""The self-check of a whole exercise notebook: every visible check on the live names, as one
table (HTML in JupyterLab, text elsewhere). Used by the notebooks' self-check cells and by
``checkpoint-lab check``.
"""

from __future__ import annotations

from graders.checks.base import checks_for, exercise
from graders.checks.live import evaluate_check, in_grading_kernel
from graders.checks.table import MAX_POINT_ROWS, VERDICTS_ATTRIBUTE, ResultTable, Row
from graders.grading.observers import observer_note

__all__ = [
    "ResultTable", "Row", "self_check", "check_saved_notebook", "failing_checks", "NotAnExercise",
    "MAX_POINT_ROWS", "VERDICTS_ATTRIBUTE",
]


def self_check(namespace: dict, notebook: str) -> ResultTable:
    """Run every visible check of ``notebook`` on the live names in ``namespace``; a table.

    In an exercise notebook: ``self_check(globals(), "02_two_latent_failures")`` as the last line
    of a cell shows the table. The hidden checks are listed, not run. In a grading kernel
    (`graders.checks.in_grading_kernel`) nothing runs and the table says so.
    """
    record = exercise(notebook)
    if in_grading_kernel():
        return ResultTable([], title="Your work is being graded: each check's verdict is in its "
                           "own cell above, computed outside this kernel.")
    results = [evaluate_check(c.id, namespace) for c in checks_for(notebook, include_hidden=False)]
    hidden = [c for c in checks_for(notebook) if c.hidden]
    # The observer's note (no strace here, a browser tab) once, under the table, not per row.
    note = observer_note()
    shown = []
    for result in results:
        if note and result.message.startswith(note + "\n"):
            result.message = result.message[len(note) + 1:]
            shown = [note]
    from graders.checks.live import SEEN

    return ResultTable(results, hidden=hidden, title=f"Self-check: {record.title}",
                       seen=dict(SEEN.get(notebook, {})), cell="self_check", notes=shown)


class NotAnExercise(ValueError):
    """A readable notebook that is none of the course's exercise notebooks."""


def check_saved_notebook(path, timeout: float | None = None):
    """(the notebook saved at ``path``, its exercise, the results of its visible checks by id).
    Raises `NotebookError` when it cannot be read as a notebook, `NotAnExercise` when it is none
    of the exercise notebooks, `OSError` when the file cannot be read."""
    from graders.checks.answer_cells import notebook_of, read_notebook, submission_from_notebook
    from graders.checks.base import NOTEBOOKS
    from graders.checks.grading import grade_submission

    nb = read_notebook(path)
    notebook = notebook_of(nb)
    if notebook is None:
        names = ", ".join(f"{n}.ipynb" for n in NOTEBOOKS)
        raise NotAnExercise(f"{path} is not one of the Checkpoint Lab exercise notebooks "
                            f"({names}): none of its cells is an exercise cell")
    results = grade_submission(submission_from_notebook(nb, notebook), notebook,
                               include_hidden=False, timeout=timeout, allow_fallback=True)
    return nb, notebook, results


def failing_checks(path) -> list[str]:
    """The visible checks that the exercise notebook saved at ``path`` does not pass yet (as a
    student reads them: by label, else id; in notebook order); raises as
    `check_saved_notebook`."""
    _nb, _notebook, results = check_saved_notebook(path)
    return [result.check.shown_id for result in results.values() if not result.passed]
