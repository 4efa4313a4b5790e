"""The nbgrader preprocessors that make Checkpoint Lab's grading tamper-proof.

- :class:`ReleaseStarter` (``generate_assignment``, in place of ClearSolutions): releases each
  answer cell's own starter code (``checkpoint_lab.starter``), never
  ``raise NotImplementedError()``, and strips the mark scheme from written answers.
- :class:`KernelLanguageInfo` (``generate_assignment``, last): writes the ``language_info`` this
  Python's kernel reports into the release, so that JupyterLab does not mark a fetched notebook
  modified the moment its kernel starts (as a workspace's copies, `graders.workspace.notebooks`).
- :class:`RunNothing` (``autograde``, in place of Execute): runs no cell at all. The student's
  code runs only in the sandbox (:mod:`graders.sandbox`), never in a kernel of the grading
  user's, so nothing it does at grading time can reach the course, the gradebook or other
  students.
- :class:`JoinSplitCells` (autograde's sanitize step, before nbgrader's ``DeduplicateIds``): joins
  the cells that share one grade_id (JupyterLab's *Split Cell*), in notebook order
  (:mod:`graders.nbgrader_plumbing.split_cells`).
- :class:`StartVerdicts` (before Execute) and :class:`WriteVerdicts` (after Execute and
  LimitOutput, before SaveAutoGrades): take the student's code out of the notebook
  (:func:`graders.checks.submission_from_notebook`: ``{grade_id: code}``), grade it in fresh
  processes outside the student's kernel (:func:`graders.checks.grade_submission`), store each
  check's result as JSON in its test cell's metadata and write the verdict into its outputs, so
  that nbgrader's own SaveAutoGrades scores what the code really earns. The gradings run on
  threads of the submission's own (:mod:`graders.nbgrader_plumbing.gradings`).

The configuration that wires them in is written by :mod:`graders.nbgrader_plumbing.course`.
"""

from __future__ import annotations

import json
import re
import traceback

from nbformat import NotebookNode
from nbgrader import utils
from nbgrader.preprocessors import ClearSolutions, NbGraderPreprocessor, OverwriteCells
from traitlets import Float, List, Unicode

from graders.nbgrader_plumbing.cells import (
    MISSING_CELL_MARK,
    autograded_test_cells,
    verdict_outputs,
)
from graders.nbgrader_plumbing.gradings import Gradings, gradings_of
from graders.nbgrader_plumbing.split_cells import JoinSplitCells
from graders.workspace.notebooks import kernel_language_info

__all__ = ["ReleaseStarter", "KernelLanguageInfo", "RestoreTestCells", "JoinSplitCells",
           "RunNothing", "StartVerdicts", "WriteVerdicts"]

_VERDICTS = "checkpoint_lab_verdicts"

MARK_SCHEME_BEGIN = "=== BEGIN MARK SCHEME ==="
MARK_SCHEME_END = "=== END MARK SCHEME ==="


class ReleaseStarter(ClearSolutions):
    """ClearSolutions that releases each answer cell's starter code in place of its solution.

    A code answer cell whose metadata holds ``checkpoint_lab.starter`` gets that code where its
    ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region was. A written answer (markdown) that
    marks its mark scheme with ``=== BEGIN MARK SCHEME ===`` ... ``=== END MARK SCHEME ===`` and
    no solution region keeps its other text and gets the text stub in place of the mark scheme.
    The ``checkpoint_lab`` metadata never reaches the release.
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, cell_index: int):
        lab = cell.metadata.pop("checkpoint_lab", None) or {}
        language = resources["language"]
        saved_stub = self.code_stub
        saved_delimiters = (self.begin_solution_delimeter, self.end_solution_delimeter)
        try:
            if cell.cell_type == "code" and "starter" in lab:
                self.code_stub = {**saved_stub, language: str(lab["starter"])}
            elif (cell.cell_type == "markdown" and utils.is_solution(cell)
                  and MARK_SCHEME_BEGIN in cell.source
                  and self.begin_solution_delimeter not in cell.source):
                self.begin_solution_delimeter = MARK_SCHEME_BEGIN
                self.end_solution_delimeter = MARK_SCHEME_END
            return super().preprocess_cell(cell, resources, cell_index)
        finally:
            self.code_stub = saved_stub
            self.begin_solution_delimeter, self.end_solution_delimeter = saved_delimiters


class KernelLanguageInfo(NbGraderPreprocessor):
    """The release with the ``language_info`` of the kernel the students run (the course's
    environment's Python): nbgrader's release has only its ``name``, and JupyterLab writes the
    kernel's whole record into a notebook when its kernel starts, marking it modified."""

    def preprocess(self, nb: NotebookNode, resources: dict):
        nb.metadata["language_info"] = NotebookNode(kernel_language_info())
        return nb, resources


class RestoreTestCells(OverwriteCells):
    """OverwriteCells that puts a deleted test cell back where it was, whatever came before it.

    nbgrader 0.9.6's own ``add_missing_grade_cells`` raises KeyError (and autograde drops the
    submission) when the cell before the deleted one is not a grade or solution cell, which is
    the usual case in our notebooks. Here the cell goes back after the nearest earlier cell of the
    source notebook that the submission still has, or first when there is none.
    """

    def add_missing_grade_cells(self, nb: NotebookNode, resources: dict):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        source_ids = [cell.name for cell in source_nb.source_cells]
        source_by_id = {cell.name: cell for cell in source_nb.source_cells}
        solution_ids = {cell.name for cell in source_nb.solution_cells}
        for grade_cell in source_nb.grade_cells:
            present = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in nb.cells]
            if grade_cell.name in present:
                continue
            self.log.warning("Missing grade cell %s encountered, adding to notebook",
                             grade_cell.name)
            cell = self.missing_cell_transform(source_by_id[grade_cell.name],
                                               grade_cell.max_score,
                                               is_solution=grade_cell.name in solution_ids)
            cell["id"] = _free_id(grade_cell.name, nb)
            earlier = source_ids[:source_ids.index(grade_cell.name)]
            position = 0
            for grade_id in reversed(earlier):
                if grade_id in present:
                    position = present.index(grade_id) + 1
                    break
            nb.cells.insert(position, cell)
        return nb, resources

    def add_missing_task_cells(self, nb: NotebookNode, resources: dict):
        """nbgrader's, minus its KeyError on a cell whose nbgrader metadata has no grade_id.

        OverwriteCells itself takes the grade_id from any cell it finds no source cell for (an
        editable playground cell, or a cell a student made), and then 0.9.6 fails on that cell.
        """
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        source_cells = source_nb.source_cells
        source_ids = [cell.name for cell in source_cells]
        submitted = {cell.metadata.get("nbgrader", {}).get("grade_id") for cell in nb.cells}
        for task_cell in source_nb.task_cells:
            if task_cell.name not in submitted:
                cell = self.missing_cell_transform(source_cells[source_ids.index(task_cell.name)],
                                                   task_cell.max_score, is_task=True)
                cell["id"] = _free_id(task_cell.name, nb)
                nb.cells.append(cell)
        return nb, resources


def _free_id(grade_id: str, nb: NotebookNode) -> str:
    """A cell id for a cell put back: nbgrader's own has none, and nbformat warned
    (MissingIDFieldWarning) at every notebook it wrote with one."""
    taken = {cell.get("id") for cell in nb.cells}
    base = re.sub(r"[^a-zA-Z0-9_-]", "-", grade_id)[:56] or "restored"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


SELF_CHECK_NOTE = (
    "Not run when your work is graded: this cell runs the checks in your own kernel, where your "
    "code could change what it shows. Your grade comes from the check cells above, each "
    "computed outside your kernel from the code in your answer cells.\n")


NOT_RUN_NOTE = (
    "Not run when your work is graded: grading never runs your notebook. It takes the code of "
    "your answer cells and runs it in a sandbox, killing it at every moment that matters; the "
    "check cells below show what it found.\n")


class RunNothing(NbGraderPreprocessor):
    """Execute's place in autograde, running nothing: no kernel, no student code.

    The first code cell of the notebook gets a note saying why the cells have no outputs, and the
    cells named in ``not_run_at_grading`` (the self-check) say what they would have shown.
    """

    not_run_at_grading = List(
        Unicode(),
        help="grade_ids of cells that only show in-kernel results (the self-check table)",
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        tests = {id(cell) for cell in autograded_test_cells(nb)}
        noted = False
        for cell in nb.cells:
            if cell.cell_type != "code" or id(cell) in tests:
                continue
            cell.execution_count = None
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in self.not_run_at_grading:
                cell.outputs = [NotebookNode(output_type="stream", name="stdout",
                                             text=SELF_CHECK_NOTE)]
            elif not noted:
                cell.outputs = [NotebookNode(output_type="stream", name="stdout",
                                             text=NOT_RUN_NOTE)]
                noted = True
            else:
                cell.outputs = []
        return nb, resources


def _notebook_name(resources: dict) -> str:
    return resources["nbgrader"]["notebook"]


def _grade_cells(cells, timeout: float | None) -> dict:
    from graders.checks import grade_submission

    kwargs = {} if timeout is None else {"timeout": timeout}
    return grade_submission(cells, cells.notebook, include_hidden=True, **kwargs)


_SIBLING_CAP = 4 << 20


def _gradings(preprocessor, resources: dict) -> Gradings:
    """The gradings of the submission being converted (its folder), in ``preprocessor``'s
    autograde run (nbgrader makes the preprocessors anew for every notebook; their exporter
    lasts the whole run)."""
    folder = str((resources.get("metadata") or {}).get("path") or "")
    return gradings_of(preprocessor.parent, folder, _grade_cells)


def _start_siblings(gradings: Gradings, resources: dict, current: str,
                    timeout: float | None) -> None:
    """Start grading the submission's other exercise notebooks now (nbgrader converts one
    notebook at a time); each is used only if nbgrader then hands over the same answer code."""
    import os
    import stat
    from pathlib import Path

    from graders.checks import NOTEBOOKS, submission_from_notebook

    folder = (resources.get("metadata") or {}).get("path")
    if not folder:
        return
    for name in NOTEBOOKS:
        path = Path(folder) / f"{name}.ipynb"
        try:
            info = os.lstat(path)
            if name == current or not stat.S_ISREG(info.st_mode) or info.st_size > _SIBLING_CAP:
                continue
            nb = NotebookNode(json.loads(path.read_text(encoding="utf-8")))
            gradings.start(submission_from_notebook(nb, notebook=name), timeout)
        except Exception:  # noqa: BLE001 - only a head start; nbgrader's own turn grades it
            continue


class StartVerdicts(NbGraderPreprocessor):
    """Start grading the student's code outside the kernel (early in the autograde list).

    The submission's other exercise notebooks are started too, so that their gradings run while
    nbgrader works on this one (used only if their answer code is then the same).
    """

    timeout = Float(
        None, allow_none=True,
        help="Seconds a submission's crash matrix may take in all (None: graders.checks' own)",
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        from graders.checks import submission_from_notebook

        notebook = _notebook_name(resources)
        try:
            cells = submission_from_notebook(nb, notebook=notebook)
        except Exception:  # noqa: BLE001 - WriteVerdicts grades (and reports) it itself
            return nb, resources
        gradings = _gradings(self, resources)
        resources[_VERDICTS] = (cells, gradings.start(cells, self.timeout))
        if self.parent is None:  # no run to share a head start with: this grading alone
            gradings.close(cancel=False)
        else:
            _start_siblings(gradings, resources, notebook, self.timeout)
        return nb, resources


class WriteVerdicts(NbGraderPreprocessor):
    """Overwrite every autograded test cell's outputs with its verdict (before SaveAutoGrades).

    Uses the grading that :class:`StartVerdicts` started, or grades now if it did not run. Each
    check's result is stored as JSON in its cell's metadata (``checkpoint_lab.result``, see
    `graders.checks.record`) and rendered from there into the outputs: a passed check gets a
    stream output with the message; a failed one an error output with the message and no
    traceback; partial credit adds an ``execute_result`` with the points earned, which is how
    nbgrader's own ``determine_grade`` reads partial credit.
    """

    timeout = Float(
        None, allow_none=True,
        help="Seconds a submission's crash matrix may take in all (None: graders.checks' own)",
    ).tag(config=True)

    def _results(self, nb: NotebookNode, notebook: str, started, resources: dict) -> tuple:
        """(answer cells, results, failure): the grading, or why it failed."""
        from graders.checks import submission_from_notebook

        try:
            if started is not None:
                if self.parent is not None:
                    _gradings(self, resources).taken(started[0])
                return started[0], started[1].result(), None
            cells = submission_from_notebook(nb, notebook=notebook)
            return cells, _grade_cells(cells, self.timeout), None
        except Exception as err:  # a grader bug must be loud, and must not drop the submission
            self.log.error("The grader failed on %s: %s: %s\n%s", notebook, type(err).__name__,
                           err, traceback.format_exc())
            return None, None, f"{type(err).__name__}: {err}"

    def preprocess(self, nb: NotebookNode, resources: dict):
        from graders.checks import CHECKS
        from graders.checks.grading_faults import GRADER_FAULT
        from graders.checks.record import METADATA_KEY, failure_record, record_of

        notebook = _notebook_name(resources)
        cells, results, failure = self._results(nb, notebook, resources.pop(_VERDICTS, None),
                                                resources)
        for cell in autograded_test_cells(nb):
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            points = float(cell.metadata["nbgrader"].get("points", 0))
            check, result = CHECKS.get(grade_id), (results or {}).get(grade_id)
            if result is not None:
                record = record_of(result, check, cells, points)
            elif failure:
                record = failure_record(grade_id, points, f"The grader could not run this check "
                                        f"({failure}). This is not your fault: tell your "
                                        "instructor.", GRADER_FAULT, check)
            else:
                record = failure_record(grade_id, points, f"There is no check called {grade_id!r} "
                                        "in graders.checks, so this test cell cannot be graded: "
                                        "tell your instructor.", "unknown_check", check)
            if record.cause == GRADER_FAULT:
                self.log.error("The grader failed on %s of %s: %s", grade_id, notebook,
                               record.message)
            restored = cell.source.lstrip().startswith(MISSING_CELL_MARK)
            cell.outputs = verdict_outputs(record, restored=restored)
            cell.metadata.setdefault(METADATA_KEY, {})["result"] = record.to_json()
            cell.execution_count = None
        return nb, resources
