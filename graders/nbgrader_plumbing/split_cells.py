"""Cells that share one grade_id, made one before nbgrader sees them (autograde's sanitize step).

JupyterLab's *Split Cell* (and a copy and paste of a cell) leaves two cells with the same nbgrader
metadata. nbgrader's ``DeduplicateIds`` then strips all but the last of their metadata to ``{}``,
and nbgrader refuses the whole notebook ("an old version of the nbgrader metadata format"): an
honest notebook scored 0 for an editor gesture. :class:`JoinSplitCells` runs first: cells of one
grade_id and one type are joined, in notebook order, into the first of them (the grader grades
that code, as Run All would run it), which records how many it was made of
(``metadata.checkpoint_lab.joined_from``: the feedback and the instructor's notes say so); a
later copy of another type stops being an nbgrader cell.
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from graders.checks.answer_cells import JOINED_KEY, grade_id_of, join_pieces
from graders.checks.record import METADATA_KEY

__all__ = ["JoinSplitCells", "joined_cells"]


class JoinSplitCells(NbGraderPreprocessor):
    """Join the cells that share a grade_id, in notebook order (before ``DeduplicateIds``)."""

    def preprocess(self, nb: NotebookNode, resources: dict):
        groups: dict[str, list[NotebookNode]] = {}
        keep = []
        for cell in nb.cells:
            cell.metadata.pop(METADATA_KEY, None)  # only the grader writes it
            grade_id = grade_id_of(cell)
            first = groups.get(grade_id, [None])[0] if grade_id else None
            if grade_id is None or first is None:
                if grade_id is not None:
                    groups[grade_id] = [cell]
                keep.append(cell)
            elif cell.cell_type == first.cell_type:
                groups[grade_id].append(cell)
            else:
                self.log.warning("Cell %s is there twice, as %s and %s: the second is graded as an "
                                 "ordinary cell", grade_id, first.cell_type, cell.cell_type)
                cell.metadata.pop("nbgrader", None)
                keep.append(cell)
        for grade_id, cells in groups.items():
            if len(cells) > 1:
                self.log.warning("Cell %s was in %d cells (Split Cell?): joined in notebook order",
                                 grade_id, len(cells))
                cells[0].source = join_pieces([c.source for c in cells])
                cells[0].metadata[METADATA_KEY] = {JOINED_KEY: len(cells)}
        nb.cells = keep
        return nb, resources


def joined_cells(nb) -> dict[str, int]:
    """grade_id -> how many cells it was joined from, for each cell :class:`JoinSplitCells`
    joined in ``nb`` (an autograded notebook)."""
    joined = {}
    for cell in nb.get("cells", []):
        lab = cell.get("metadata", {}).get(METADATA_KEY)
        count = lab.get(JOINED_KEY) if isinstance(lab, dict) else None
        if isinstance(count, int) and count > 1 and grade_id_of(cell):
            joined[grade_id_of(cell)] = count
    return joined
