"""What the feedback HTML adds to nbgrader's: wrapped text, written answers that await marking,
and answers joined from split cells.

nbgrader's feedback page shows outputs and code in ``<pre>`` blocks that never wrap, so a long
line runs off the right edge; and a written answer that is not marked yet shows as "0 / 4" like
an answer that earned nothing. :class:`FeedbackNotes`, run by ``generate_feedback`` after
nbgrader's own ``GetGrades`` (the course's ``nbgrader_config.py`` names it, see
`graders.nbgrader_plumbing.settings`), wraps every ``<pre>`` and puts a note under each answer still
to be marked, and one at the top listing them. Regenerate the feedback after marking (``nbgrader
generate_feedback --force``) and the notes are gone.
"""

from __future__ import annotations

from nbconvert.utils.base import NbConvertBase
from nbformat import NotebookNode
from nbformat.v4 import new_markdown_cell
from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List

from graders.nbgrader_plumbing.split_cells import joined_cells

__all__ = ["AWAITING_CLASS", "FEEDBACK_CSS", "FeedbackNotes"]

#: The class of the notes this adds (a ``<div>`` in each note's markdown).
AWAITING_CLASS = "checkpoint-lab-awaiting-marking"

#: Wrap long lines instead of scrolling sideways: outputs, code, and our notes.
FEEDBACK_CSS = f"""
div#notebook pre, div.output_area pre, div.input_area pre {{
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}}
div.{AWAITING_CLASS} {{
  border-left: 4px solid #9a6700;
  background: #fff8c5;
  padding: 0.5em 0.8em;
  margin: 0.4em 0;
}}
"""


def _note(text: str) -> NotebookNode:
    return new_markdown_cell(f'<div class="{AWAITING_CLASS}">\n\n{text}\n\n</div>')


def _awaiting(nb: NotebookNode, info: dict) -> list[tuple[int, str, float]]:
    """(index, grade_id, points) of each written answer that is not marked yet."""
    from nbgrader.api import Gradebook, MissingEntry

    awaiting = []
    with Gradebook(info["db_url"]) as gb:
        for index, cell in enumerate(nb.cells):
            if not (utils.is_grade(cell) and utils.is_solution(cell)):
                continue
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            try:
                grade = gb.find_grade(grade_id, info["notebook"], info["assignment"],
                                      info["student"])
            except MissingEntry:
                continue
            if grade.needs_manual_grade and grade.manual_score is None:
                awaiting.append((index, grade_id, float(grade.max_score)))
    return awaiting


class FeedbackNotes(NbGraderPreprocessor):
    """Wrap the feedback's text, say which written answers await marking, and which answers
    were joined from split cells."""

    # nbgrader's base class declares this trait again without config=True, so HTMLExporter's
    # default config for it was reported as "not recognized"; nbgrader's GetGrades does the same.
    display_data_priority = List(NbConvertBase.display_data_priority.default_value).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        info = resources.get("nbgrader", {})
        inlining = resources.setdefault("inlining", {})
        inlining["css"] = [*inlining.get("css", []), FEEDBACK_CSS]
        awaiting = _awaiting(nb, info)
        notes = [(index, f"**Graded as one cell.** Your `{grade_id}` was in {count} cells with "
                  "one id (JupyterLab's *Split Cell* leaves that): they were joined in notebook "
                  "order, as shown above, and graded as one.")
                 for index, cell in enumerate(nb.cells)
                 for grade_id, count in joined_cells({"cells": [cell]}).items()]
        notes += [(index, f"**Awaiting marking.** Your instructor has not marked `{grade_id}` "
                   f"yet: the 0 / {points:g} above is not its score. Feedback made after marking "
                   "shows it.") for index, grade_id, points in awaiting]
        for index, text in sorted(notes, key=lambda note: note[0], reverse=True):
            nb.cells.insert(index + 1, _note(text))
        if awaiting:
            names = ", ".join(f"`{g}` ({p:g} points)" for _, g, p in awaiting)
            total = sum(p for _, _, p in awaiting)
            nb.cells.insert(0, _note(
                f"**Written answers awaiting marking:** {names}. The score at the top counts "
                f"them as 0 until your instructor marks them ({total:g} points still to "
                "come)."))
        return nb, resources
