"""A submission's answer cells, ``{grade_id: code}``: read from a notebook (split cells joined, in
notebook order), checked for what Python can say without running them, and made into the
program the runner gets, part by part (`graders.submission.Part`), so that a line in a message
is a line of the cell the student wrote (`graders.submission.Submission.place`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from graders import load_errors
from graders.checks.base import ANSWER_CELLS, checks_for, exercise
from graders.loop import lesson_loop
from graders.submission import Part, Submission, defined_names

__all__ = [
    "NotebookError", "AnswerCells", "read_notebook", "submission_from_notebook", "notebook_of",
    "grade_id_of", "syntax_problem", "with_lesson_loop", "join_pieces", "LOOP_WHERE", "MARK",
    "JOINED_KEY", "MAX_NOTEBOOK_BYTES", "MAX_CELLS", "notebook_problem", "program_from",
    "fixture_cells",
]


class NotebookError(ValueError):
    """A file that is not a notebook we can read."""


#: How a cell starts in the text form of answer cells (:meth:`AnswerCells.from_text`).
MARK = "# --- answer cell "
#: Where the lesson's loop comes from, in a message about one of its lines.
LOOP_WHERE = "the lesson's loop (run_agent), which called your save"
#: Cell metadata (under ``checkpoint_lab``) of an answer cell joined from split cells: how many.
JOINED_KEY = "joined_from"
#: The most a notebook handed in may weigh, and hold cells: an exercise notebook is about 40 KB
#: and 60 cells; far beyond that it only costs the grader time (40,000 cells held nbgrader's
#: feedback 64 s), so it is refused, as that student's.
MAX_NOTEBOOK_BYTES = 16 << 20
MAX_CELLS = 2000


def grade_id_of(cell) -> str | None:
    """The ``grade_id`` of ``cell`` (a notebook cell dict), or None: never anything but text."""
    try:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    except AttributeError:
        return None
    return grade_id if isinstance(grade_id, str) else None


def _cell_source(cell) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def _joined_from(cell) -> int:
    lab = cell.get("metadata", {}).get("checkpoint_lab")
    count = lab.get(JOINED_KEY) if isinstance(lab, dict) else None
    return count if isinstance(count, int) and count > 1 else 1


def notebook_problem(text: str) -> tuple[dict | None, str | None]:
    """(the notebook, None) from ``text``, or (None, why it is not one we grade)."""
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"it is not JSON (line {exc.lineno}: {exc.msg})"
    except RecursionError:
        return None, "its JSON is nested too deep"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None, "its JSON has no list of cells"
    if len(nb["cells"]) > MAX_CELLS:
        return None, (f"it has {len(nb['cells']):,} cells, more than the {MAX_CELLS:,} a "
                      "notebook of the course may have")
    return nb, None


def read_notebook(nb_or_path) -> dict:
    """A notebook as a dict, from a dict or a path; raises `NotebookError` if it is not one (or
    is larger than a notebook of the course may be)."""
    if isinstance(nb_or_path, dict):
        return nb_or_path
    path = Path(nb_or_path)
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise NotebookError(f"{path} is not a notebook we grade: it is larger than "
                            f"{MAX_NOTEBOOK_BYTES >> 20} MiB")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookError(
            f"{path} is not a notebook: it is not UTF-8 text ({exc.reason})") from exc
    nb, problem = notebook_problem(text)
    if problem:
        raise NotebookError(f"{path} is not a notebook: {problem}")
    return nb


@dataclass(frozen=True)
class AnswerCells:
    """One exercise notebook's answer cells as handed in: grade_id -> the cell's code.

    Attributes:
        notebook: the exercise notebook (without ``.ipynb``).
        code: grade_id -> code, in the order of ``ANSWER_CELLS[notebook]``; a cell the notebook
            lacks (deleted, or its metadata changed) is not there.
        pieces: grade_id -> how many notebook cells carried it, when more than one (JupyterLab's
            *Split Cell* leaves two cells with one grade_id): joined in notebook order.
        whole: one source stands for every answer cell (a ``.py`` file, not a notebook); its
            lines are "your code".
    """

    notebook: str
    code: dict[str, str]
    pieces: dict[str, int] = field(default_factory=dict)
    whole: bool = False

    @classmethod
    def from_notebook(cls, nb_or_path, notebook: str) -> AnswerCells:
        """The answer cells of ``notebook`` in ``nb_or_path`` (a notebook dict or an ``.ipynb``
        path), found by grade_id wherever they are; raises `NotebookError` for a non-notebook."""
        _known(notebook)
        nb = read_notebook(nb_or_path)
        found: dict[str, list[str]] = {}
        counts: dict[str, int] = {}
        for cell in nb["cells"]:
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            grade_id = grade_id_of(cell)
            if grade_id in ANSWER_CELLS[notebook]:
                found.setdefault(grade_id, []).append(_cell_source(cell))
                counts[grade_id] = counts.get(grade_id, 0) + _joined_from(cell)
        code = {g: join_pieces(found[g]) for g in ANSWER_CELLS[notebook] if g in found}
        return cls(notebook, code, {g: n for g, n in counts.items() if n > 1})

    @classmethod
    def from_source(cls, source: str, notebook: str) -> AnswerCells:
        """One Python source standing for every answer cell of ``notebook``."""
        _known(notebook)
        return cls(notebook, dict.fromkeys(ANSWER_CELLS[notebook], source), whole=True)

    @classmethod
    def from_text(cls, text: str, notebook: str) -> AnswerCells:
        """Answer cells written as text, for tests and files: each cell starts with a line
        ``# --- answer cell <grade_id> ---`` (``(missing)`` before ``---``: the notebook lacks
        it). Text without such a line is one source for every cell (:meth:`from_source`)."""
        if not text.startswith(MARK) and f"\n{MARK}" not in text:
            return cls.from_source(text, notebook)
        _known(notebook)
        code: dict[str, str] = {}
        grade_id, lines = None, []
        for line in [*text.splitlines(keepends=True), f"{MARK}end ---"]:
            if not line.startswith(MARK):
                lines.append(line)
                continue
            if grade_id is not None:
                code[grade_id] = "".join(lines)
            name = line[len(MARK):].strip().removesuffix("---").strip()
            grade_id = None if name.endswith("(missing)") else name
            lines = []
        return cls(notebook, {g: code[g] for g in ANSWER_CELLS[notebook] if g in code})

    @classmethod
    def of(cls, submission, notebook: str) -> AnswerCells:
        """``submission`` as answer cells: `AnswerCells` as they are, text by :meth:`from_text`."""
        if isinstance(submission, AnswerCells):
            return submission
        if isinstance(submission, str):
            return cls.from_text(submission, notebook)
        raise TypeError(f"a submission is AnswerCells or source text, not "
                        f"{type(submission).__name__}")

    def key(self) -> tuple:
        """What tells two submissions apart (the same key: the same grading)."""
        return (self.notebook, self.whole, tuple(self.code.items()))

    def part(self, grade_id: str) -> tuple[Part | None, str | None]:
        """(the cell as a `Part`, None), or (None, why the notebook has no such cell)."""
        if grade_id not in self.code:
            return None, (f"the notebook has no answer cell {grade_id}: it was deleted, or its "
                          "metadata changed; get a fresh copy of the cell from the released "
                          "notebook")
        where = "your code" if self.whole else f"the answer cell {grade_id}"
        return Part(where, self.code[grade_id]), None

    def readable(self, grade_id: str, name: str) -> tuple[Part | None, str | None]:
        """(the cell, None), or (None, why it cannot run): missing, a syntax error, or no
        top-level definition of ``name``."""
        part, problem = self.part(grade_id)
        if part is None:
            return None, problem
        problem = syntax_problem(part.code, part.where)
        if problem is None and name not in defined_names(part.code):
            problem = load_errors.not_defined_in_cell(part.where, name)
        return (None, problem) if problem else (part, None)

    def problem(self, grade_ids) -> str | None:
        """What keeps the cells ``grade_ids`` from running, as a cause: ``"no_answer_cell"``,
        ``"syntax_error"``, or None."""
        for grade_id in grade_ids:
            part, _ = self.part(grade_id)
            if part is None:
                return "no_answer_cell"
            if syntax_problem(part.code, part.where):
                return "syntax_error"
        return None

    def notes(self) -> list[str]:
        """What the student reads about how their cells were taken (split cells, joined)."""
        return [f"Your answer cell {grade_id} was in {count} cells with one id (JupyterLab's "
                "Split Cell leaves that): they were graded as one, joined in notebook order."
                for grade_id, count in self.pieces.items()]


def join_pieces(sources: list[str]) -> str:
    """The cells of one split answer, joined in notebook order: a line break between two,
    where *Split Cell* took it."""
    return "\n".join(s.rstrip("\n") for s in sources) + ("\n" if sources else "")


def _known(notebook: str) -> None:
    if notebook not in ANSWER_CELLS:
        raise ValueError(f"unknown exercise notebook {notebook!r}; one of {sorted(ANSWER_CELLS)}")


def submission_from_notebook(nb_or_path, notebook: str) -> AnswerCells:
    """The answer cells of ``notebook`` in ``nb_or_path``: :meth:`AnswerCells.from_notebook`."""
    return AnswerCells.from_notebook(nb_or_path, notebook)


def notebook_of(nb) -> str | None:
    """Which exercise notebook ``nb`` (a notebook dict) is, judged by its cells' grade_ids."""
    cells = nb.get("cells", []) if isinstance(nb, dict) else []
    ids = {grade_id_of(cell) for cell in cells if isinstance(cell, dict)} - {None}
    for notebook, answer_ids in ANSWER_CELLS.items():
        test_ids = {c.id for c in checks_for(notebook)}
        if ids & (set(answer_ids) | test_ids):
            return notebook
    return None


def syntax_problem(code: str, where: str) -> str | None:
    try:
        compile(code, where, "exec", dont_inherit=True)
    except ValueError as exc:  # null bytes
        return load_errors.cell_unreadable(where, str(exc))
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        return load_errors.cell_unreadable(where, exc.msg, exc.lineno, line,
                                           ipython=line[:1] in ("%", "!"))
    except RecursionError:
        return load_errors.cell_unreadable(where, "it is nested too deep")
    return None


def with_lesson_loop(*parts: Part) -> list[Part]:
    """The student's ``save_checkpoint`` cell, then the lesson's loop that calls it."""
    return [*parts, Part(LOOP_WHERE, lesson_loop.source())]


def program_from(cells: AnswerCells, grade_ids, join=None) -> tuple[Submission | None, str | None]:
    """(the program that runs for the answer cells ``grade_ids`` of ``cells``, None), or (None,
    why they cannot run: a cell missing, a syntax error, a name not defined at the top level).

    Each cell goes to the runner as itself (a `Part`), followed by the code the grader adds:
    ``join(*parts)`` makes the program's parts (`with_lesson_loop`, a given save); without
    ``join`` the cells are the program. The names the cells must define (`AnswerCell.defines`)
    may be defined in any of them.
    """
    wanted = [exercise(cells.notebook).answer_cell(g) for g in grade_ids]
    if len(wanted) == 1:
        part, problem = cells.readable(wanted[0].grade_id, wanted[0].defines)
        if problem:
            return None, problem
        parts = [part]
    else:
        parts = []
        for cell in wanted[:1] if cells.whole else wanted:
            part, problem = cells.part(cell.grade_id)
            if problem:
                return None, problem
            parts.append(part)
        syntax = next((s for p in parts if (s := syntax_problem(p.code, p.where))), None)
        if syntax:
            return None, syntax
        names = set().union(*(defined_names(p.code) for p in parts))
        missing = [c.defines for c in wanted if c.defines not in names]
        if missing:
            return None, load_errors.missing_in_cells(missing, [c.defines for c in wanted])
    return Submission.from_parts(join(*parts) if join else parts, name=cells.notebook), None


def fixture_cells(code: str, notebook: str) -> AnswerCells:
    """A fixture file of ``tests/fixtures/<notebook>/`` as the answer cells it stands for: the
    exercise's ``fixture_cell``, or every answer cell (a whole submission)."""
    cell = exercise(notebook).fixture_cell
    if cell:
        return AnswerCells(notebook, {cell: code})
    return AnswerCells.from_source(code, notebook)
