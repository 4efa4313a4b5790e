"""A submission's answer cells: read from a notebook, joined under markers, told apart again,
checked for what Python can say without running them, and line numbers said per cell.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from graders.checks.base import ANSWER_CELLS, LEVEL2, checks_for
from graders.checks.result import CheckResult
from graders.loop import lesson_loop
from graders.submission import defined_names

__all__ = [
    "NotebookError", "read_notebook", "submission_from_notebook", "notebook_of", "grade_id_of",
    "split_cells", "cell_code", "syntax_problem", "one_answer_cell", "with_lesson_loop",
    "relocate", "LOOP_MARK",
]


class NotebookError(ValueError):
    """A file that is not a notebook we can read."""


_MARKER = re.compile(r"^# --- answer cell (?P<id>[A-Za-z0-9_]+)(?P<missing> \(missing\))? ---$",
                     re.M)


LOOP_MARK = "# --- the lesson's loop, added by the grader ---"


def grade_id_of(cell) -> str | None:
    try:
        return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    except AttributeError:
        return None


def _cell_source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def read_notebook(nb_or_path) -> dict:
    """A notebook as a dict, from a dict or a path; raises `NotebookError` if it is not one."""
    if isinstance(nb_or_path, dict):
        return nb_or_path
    path = Path(nb_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookError(
            f"{path} is not a notebook: it is not UTF-8 text ({exc.reason})") from exc
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"{path} is not a notebook: it is not JSON (line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError(f"{path} is not a notebook: its JSON has no list of cells")
    return nb


def submission_from_notebook(nb_or_path, notebook: str = LEVEL2) -> str:
    """The student's code in ``nb_or_path``: the sources of ``notebook``'s answer cells, joined.

    ``nb_or_path`` is a notebook (an ``nbformat`` node or a plain dict) or the path of an
    ``.ipynb`` file. The answer cells are found by their ``grade_id``, whatever their order in
    the notebook, and joined in the order of ``ANSWER_CELLS[notebook]``; each starts with a
    comment line ``# --- answer cell <grade_id> ---`` (``(missing)`` is added when the notebook
    has no such cell), which :func:`grade_submission` uses to tell the cells apart.
    Raises `NotebookError` for a file that is not a notebook.
    """
    if notebook not in ANSWER_CELLS:
        raise ValueError(f"unknown exercise notebook {notebook!r}; one of {sorted(ANSWER_CELLS)}")
    nb = read_notebook(nb_or_path)
    found: dict[str, list[str]] = {}
    for cell in nb["cells"]:
        if not isinstance(cell, dict):
            continue
        grade_id = grade_id_of(cell)
        if grade_id in ANSWER_CELLS[notebook] and cell.get("cell_type") == "code":
            found.setdefault(grade_id, []).append(_cell_source(cell))
    parts = []
    for grade_id in ANSWER_CELLS[notebook]:
        if grade_id in found:
            body = "\n\n".join(s.rstrip("\n") for s in found[grade_id])
            parts.append(f"# --- answer cell {grade_id} ---\n{body}\n")
        else:
            parts.append(f"# --- answer cell {grade_id} (missing) ---\n")
    return "\n".join(parts)


def notebook_of(nb) -> str | None:
    """Which exercise notebook ``nb`` (a notebook dict) is, judged by its cells' grade_ids."""
    ids = {grade_id_of(cell) for cell in nb.get("cells", [])}
    for notebook, cells in ANSWER_CELLS.items():
        test_ids = {c.id for c in checks_for(notebook)}
        if ids & (set(cells) | test_ids):
            return notebook
    return None


def split_cells(source: str) -> dict[str, str | None] | None:
    """The cells of a joined submission: grade_id -> source (None if missing); None if unmarked."""
    marks = list(_MARKER.finditer(source))
    if not marks:
        return None
    cells: dict[str, str | None] = {}
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        end = following.start() if following else len(source)
        body = source[mark.end() + 1:end]
        cells[mark["id"]] = None if mark["missing"] else body
    return cells


def cell_code(cells: dict | None, source: str, grade_id: str) -> tuple[str | None, str | None]:
    """(code, problem): one answer cell's code from a submission, or why it is not there."""
    if cells is None:
        return source, None
    if grade_id not in cells or cells[grade_id] is None:
        return None, (f"the notebook has no answer cell {grade_id}: it was deleted, or its "
                      "metadata changed; get a fresh copy of the cell from the released notebook")
    return cells[grade_id], None


def syntax_problem(code: str, where: str) -> str | None:
    try:
        compile(code, where, "exec", dont_inherit=True)
    except ValueError as exc:  # null bytes
        return f"Python could not read {where}: {exc}. Fix the cell so that it runs"
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        hint = ""
        if line[:1] in ("%", "!"):
            hint = " (IPython commands such as %time or !ls cannot run when your work is graded)"
        return (f"Python could not read {where}: {exc.msg} at line {exc.lineno}"
                f"{': ' + line if line else ''}{hint}. Fix the cell so that it runs")
    return None


def one_answer_cell(source: str, grade_id: str, name: str) -> tuple[str | None, str | None]:
    """(code, None) of answer cell ``grade_id`` in ``source``, or (None, why it cannot run):
    missing, a syntax error, or no top-level definition of ``name``."""
    code, problem = cell_code(split_cells(source), source, grade_id)
    if code is not None:
        problem = syntax_problem(code, f"the answer cell {grade_id}")
        if problem is None and name not in defined_names(code):
            problem = (f"the answer cell {grade_id} does not define {name} at its top level; "
                       "keep the name and define it with def")
    return (None, problem) if problem else (code, None)


def with_lesson_loop(code: str) -> str:
    """The student's ``save_checkpoint`` cell, then the lesson's loop that calls it."""
    return (f"# --- answer cell l1_save_checkpoint ---\n{code.rstrip()}\n\n\n{LOOP_MARK}\n"
            + lesson_loop.source())


_YOUR_LINE = re.compile(r"line (\d+) of your code")


def relocate(result: CheckResult, source: str) -> CheckResult:
    """``result`` with "line N of your code" (a line of the joined ``source``) said per cell."""
    starts = []  # (first line of the part, what the part is)
    for number, line in enumerate(source.splitlines(), 1):
        mark = _MARKER.match(line)
        if mark:
            starts.append((number + 1, f"the answer cell {mark['id']}"))
        elif line == LOOP_MARK:
            starts.append((number + 1, "the lesson's loop (run_agent), which called your save"))
    if not starts:
        return result

    def where(match: re.Match) -> str:
        n = int(match[1])
        first, part = max(((f, p) for f, p in starts if f <= n), default=(1, "your code"))
        return f"line {n - first + 1} of {part}"

    def fix(text: str) -> str:
        return _YOUR_LINE.sub(where, text) if text else text

    result.message, result.summary = fix(result.message), fix(result.summary)
    result.verdicts = [dataclasses.replace(v, message=fix(v.message))
                       if dataclasses.is_dataclass(v) else v for v in result.verdicts]
    return result
