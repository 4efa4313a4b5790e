"""Commit first, then read the diagnosis: a check's findings held back until the student's own
answer is in the saved notebook.

Every exercise names the cell its checks wait for (``Exercise.gate``): a written answer (Levels
1, 2 and 4), or Level 3's table of eight predictions. The gate is kept in the notebook itself,
never in a kernel: it is open when the saved ``.ipynb`` holds, in that cell, an answer of at least
`MIN_WORDS` words that is not the released placeholder (or, for the predictions, every one of the
eight cells filled with ``True`` or ``False``). Every route that shows a check's words asks it:
the kernel's check cells and self-check (`graders.checks.live`), nbgrader's Validate (a fresh
kernel: the same cells, the notebook found by `notebook_file`), ``checkpoint-lab check`` (which
has the notebook at hand) and the site's kernel. Until it is open, a check says that it ran,
whether it passed, its points, and that its findings appear once the answer is written; nothing
of what the judge found. Grading's feedback is computed outside the kernel and says everything;
``CHECKPOINT_LAB_SHOW_ALL=1`` (an instructor trying the notebook) opens every gate.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
from pathlib import Path

from graders.checks.base import CHECKS, RegistryView, exercise_of
from graders.checks.counting import kind_of
from graders.checks.result import CheckResult

__all__ = ["GATES", "MIN_WORDS", "NOTEBOOK_ENV", "SHOW_ALL_ENV", "PLACEHOLDER", "gate_open",
           "gate_state", "notebook_file", "saved_notebook", "held_back_text", "hold_back",
           "gated", "question_of"]

#: Exercise notebook -> the grade_id of the cell its checks wait for (its record's ``gate``; a
#: view of the registry).
GATES = RegistryView(lambda record: record.gate, keep=lambda record: bool(record.gate))

#: The fewest words a written answer needs to open its exercise's checks.
MIN_WORDS = 8

#: What nbgrader puts in a written answer as released.
PLACEHOLDER = "YOUR ANSWER HERE"

#: Set to "1" to show every finding at once (an instructor trying the notebook).
SHOW_ALL_ENV = "CHECKPOINT_LAB_SHOW_ALL"

#: The path of the saved notebook a kernel runs, when the kernel is started by something that
#: knows it (a test, a hub's Validate); otherwise `notebook_file` looks for it.
NOTEBOOK_ENV = "CHECKPOINT_LAB_NOTEBOOK"

_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_SOLUTION_MARKS = re.compile(r"^\s*#*\s*(BEGIN|END) SOLUTION\s*$", re.MULTILINE)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _cell(nb: dict, grade_id: str) -> dict | None:
    """The cell ``grade_id``: by nbgrader's metadata, or by its cell id where the release keeps
    no nbgrader metadata (a cell nbgrader does not grade, such as Level 3's prediction table)."""
    for cell in nb.get("cells", []) if isinstance(nb, dict) else []:
        if isinstance(cell, dict) and grade_id in (
                cell.get("metadata", {}).get("nbgrader", {}).get("grade_id"), cell.get("id")):
            return cell
    return None


def _predictions_filled(code: str) -> tuple[int, int]:
    """(cells filled with True/False, cells in all) of the ``PREDICTED = {...}`` in ``code``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return 0, 8
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "PREDICTED"):
            try:
                table = ast.literal_eval(node.value)
            except ValueError:
                return 0, 8
            if not isinstance(table, dict):
                return 0, 8
            values = [v for row in table.values() if isinstance(row, dict) for v in row.values()]
            return sum(isinstance(v, bool) for v in values), max(8, len(values))
    return 0, 8


def gate_state(notebook: str, nb: dict | None) -> tuple[bool, str]:
    """(open, why) for exercise ``notebook`` whose saved notebook is ``nb`` (None: not found)."""
    grade_id = GATES.get(notebook)
    if grade_id is None:
        return True, "nothing to wait for"
    if nb is None:
        return False, "the saved notebook was not found"
    cell = _cell(nb, grade_id)
    if cell is None:
        return False, f"the saved notebook has no cell {grade_id}"
    if cell.get("cell_type") == "code":
        filled, cells = _predictions_filled(_source(cell))
        return filled >= cells, f"{filled} of {cells} predictions filled"
    text = _SOLUTION_MARKS.sub(" ", _source(cell)).replace(PLACEHOLDER, " ")
    words = len(_WORD.findall(text))
    return words >= MIN_WORDS, f"{words} words written"


def gate_open(notebook: str, nb: dict | None) -> bool:
    """Whether the checks of ``notebook`` show what they found, given its saved notebook ``nb``
    (a dict, or None when it could not be found); ``CHECKPOINT_LAB_SHOW_ALL=1`` opens it."""
    return os.environ.get(SHOW_ALL_ENV) == "1" or gate_state(notebook, nb)[0]


def notebook_file(notebook: str, namespace: dict | None = None) -> Path | None:
    """The saved ``.ipynb`` of exercise ``notebook`` that this kernel runs, or None.

    Looked for in this order: ``$CHECKPOINT_LAB_NOTEBOOK``; the path Jupyter gives the kernel
    (``__session__`` in its globals, ``$JPY_SESSION_NAME``), as given and by its name in the
    current folder; ``<notebook>.ipynb`` in the current folder (a kernel of Jupyter, nbgrader's
    Validate, nbclient and JupyterLite starts in the notebook's folder). Only a file that is
    that exercise's notebook counts.
    """
    from graders.checks.answer_cells import notebook_of

    named = [os.environ.get(NOTEBOOK_ENV, ""), str((namespace or {}).get("__session__") or ""),
             os.environ.get("JPY_SESSION_NAME", "")]
    candidates = []
    for text in filter(None, named):
        candidates += [Path(text), Path.cwd() / Path(text).name]
    candidates.append(Path.cwd() / f"{notebook}.ipynb")
    for path in candidates:
        try:
            if path.suffix != ".ipynb" or not path.is_file():
                continue
            nb = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if notebook_of(nb) == notebook:
            return path
    return None


def saved_notebook(notebook: str, namespace: dict | None = None) -> dict | None:
    """The saved notebook of exercise ``notebook`` (see `notebook_file`), as a dict; or None."""
    path = notebook_file(notebook, namespace)
    if path is None:
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def question_of(nb: dict | None, grade_id: str) -> str | None:
    """The heading above cell ``grade_id`` of ``nb``: how a student finds the question."""
    cells = nb.get("cells", []) if isinstance(nb, dict) else []
    cell = _cell(nb, grade_id) if cells else None
    if cell is None:
        return None
    for before in reversed(cells[:cells.index(cell)]):
        if isinstance(before, dict) and before.get("cell_type") == "markdown":
            heading = next((line for line in _source(before).splitlines()
                            if line.startswith("#")), "")
            if heading:
                return heading.lstrip("#").strip()
    return None


def held_back_text(notebook: str, nb: dict | None = None) -> str:
    """What a held-back check says in place of its findings (``nb``: the saved notebook, whose
    headings name the question; None: named by its id)."""
    grade_id = GATES.get(notebook, "")
    question = question_of(nb, grade_id)
    if grade_id.endswith("_predict_table"):
        wanted = "all eight predictions in PREDICTED are filled in with True or False"
    else:
        where = f'to "{question}"' if question else f"({grade_id})"
        wanted = (f"your written answer {where} holds your own words, at least {MIN_WORDS} of "
                  "them,")
    return (f"Its findings appear once {wanted} and the notebook is saved (Ctrl+S): commit to "
            "your own answer first.")


def gated(check_id: str, nb: dict | None) -> bool:
    """Whether check ``check_id``'s findings are held back, given its saved notebook ``nb``."""
    return not gate_open(exercise_of(CHECKS[check_id]).notebook, nb)


def hold_back(result: CheckResult, nb: dict | None) -> CheckResult:
    """``result`` as it may be shown, given the saved notebook ``nb`` (None: not found).

    While the gate is closed, a failed check says that it ran and did not pass, its points, and
    `held_back_text`: no message of the judge's, no crash point, no verdict. A check that
    passed has nothing to give away and is shown as it is. A check that could not run keeps its
    message (that is about this machine, not the code), as does one the grader could not judge
    (`graders.checks.grading_faults.NotJudged`); so does code that does not load (a syntax
    error is no diagnosis, and the student needs it to go on).
    """
    if not result.checked or result.passed or not gated(result.check_id, nb):
        return result
    if any(kind_of(v) == "load" and not v.passed for v in result.verdicts):
        return result
    notebook = exercise_of(CHECKS[result.check_id]).notebook
    message = f"It ran and did not pass. {held_back_text(notebook, nb)}"
    return dataclasses.replace(result, message=message, verdicts=[], summary=message)
