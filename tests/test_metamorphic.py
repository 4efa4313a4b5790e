"""Metamorphic: a submission rewritten in ways the API and the kernel treat as equal keeps every
verdict (issue 16, "Tests that must exist").

``tests/fixtures/rewrites.py`` rewrites the reference of each exercise (text-block results,
``is_error: false``, the task as a text block, every descriptor used through a ``dup``,
``O_TMPFILE`` + ``linkat``, ``O_DSYNC`` instead of the file's ``fsync``, ``pathlib``, ``os.write``
loops, each tool run in a thread of its own) and hands it in with an answer cell split in two;
each rewrite of the reference must pass every check the reference passes, and the same rewrite
of the starter must fail every check the starter fails. Graded through the sandbox, as grading
does (visible checks). Rewrites whose verdict waits for another helper's work are marked
``xfail(strict=True)`` with that helper named: the lead removes the marks when integrating.
"""

from __future__ import annotations

import copy
import re
from functools import cache

import nbformat
import pytest

from graders.checks import ANSWER_CELLS, CHECKS, grade_submission, submission_from_notebook
from graders.nbgrader_plumbing.build import release_and_reference
from graders.nbgrader_plumbing.source_notebook import SOURCES_DIR, build_source_notebook
from tests.conftest import ROOT
from tests.fixtures import catalog
from tests.fixtures.rewrites import REWRITES, rewrite

pytestmark = [pytest.mark.sandbox,
              pytest.mark.usefixtures("sandbox_here")]

#: (rewrite, exercise, reference or starter) -> the work its verdict waits for (none now).
WAITS: dict[tuple[str, str, str], str] = {}


_MARK = re.compile(r"^# --- answer cell (\S+?)( \(missing\))? ---$", re.M)


def _cells(submission) -> dict[str, str | None]:
    """A submission's answer cells, grade_id -> code (None: missing), from its text (cells
    marked ``# --- answer cell <grade_id> ---``) or from answer cells read from a notebook."""
    if not isinstance(submission, str):
        return dict(submission.code)
    marks = list(_MARK.finditer(submission))
    return {m[1]: None if m[2] else submission[m.end() + 1:nxt.start() if nxt else None]
            for m, nxt in zip(marks, [*marks[1:], None], strict=True)}


def _join(cells: dict[str, str | None], notebook: str) -> str:
    return "\n".join(f"# --- answer cell {gid} ---\n{cells[gid]}" if cells.get(gid) is not None
                     else f"# --- answer cell {gid} (missing) ---\n"
                     for gid in ANSWER_CELLS[notebook])


@cache
def _sources(notebook: str) -> dict:
    starter, reference = release_and_reference(notebook)
    return {"starter": starter, "reference": reference}


def _notebook(notebook: str, which: str):
    if which == "starter":
        return nbformat.read(ROOT / "exercises" / f"{notebook}.ipynb", as_version=4)
    nb = build_source_notebook(SOURCES_DIR / f"{notebook}.py")
    for cell in nb.cells:
        cell.source = "\n".join(line for line in cell.source.splitlines()
                                if "BEGIN SOLUTION" not in line and "END SOLUTION" not in line)
    return nb


def split_answer_cell(notebook: str, which: str):
    """The submission, handed in with its first answer cell split in two in the middle (two
    cells, one grade_id), read back from the notebook as grading reads it."""
    nb = _notebook(notebook, which)
    for i, cell in enumerate(nb.cells):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in ANSWER_CELLS[
                notebook]:
            lines = cell.source.splitlines(keepends=True)
            if len(lines) >= 2:
                tail = copy.deepcopy(cell)
                cell.source = "".join(lines[:len(lines) // 2])
                tail.source = "".join(lines[len(lines) // 2:])
                tail["id"] = f"{cell.get('id', 'cell')}-split"
                nb.cells.insert(i + 1, tail)
                break
    return submission_from_notebook(nb, notebook)


def rewritten(notebook: str, which: str, name: str):
    """The reference or starter of ``notebook``, rewritten by ``name``."""
    if name == "split_answer_cell":
        return split_answer_cell(notebook, which)
    source = _sources(notebook)[which]
    return _join(rewrite(name, _cells(source)), notebook)


def verdicts(notebook: str, which: str, name: str) -> tuple[dict, dict]:
    source = rewritten(notebook, which, name)
    results = grade_submission(source, notebook, include_hidden=False)
    return {cid: r.passed for cid, r in results.items()}, {
        cid: r.message[:600] for cid, r in results.items()}


def _cases():
    cases = []
    for notebook in catalog.LEVELS:
        for which in ("reference", "starter"):
            for name in REWRITES:
                cells = _cells(_sources(notebook)[which])
                if name != "split_answer_cell" and rewrite(name, cells) == cells:
                    continue  # nothing of this kind to rewrite in this code
                helper = WAITS.get((name, notebook, which))
                marks = [pytest.mark.xfail(strict=True, reason=f"waits for {helper}")] \
                    if helper else []
                cases.append(pytest.param(notebook, which, name, marks=marks,
                                          id=f"{notebook[:2]}-{which}-{name}"))
    return cases


def test_every_rewrite_applies_somewhere_and_every_exercise_is_rewritten():
    applied = {(c.values[0], c.values[2]) for c in _cases()}
    assert {name for _, name in applied} == set(REWRITES)
    for notebook in catalog.LEVELS:
        assert len({name for nb, name in applied if nb == notebook}) >= 4, notebook


@pytest.mark.timeout(1500)  # the first to ask for `graded` waits for the session's dev check
@pytest.mark.parametrize(("notebook", "which", "name"), _cases())
def test_a_rewrite_the_api_and_the_kernel_treat_as_equal_keeps_every_verdict(notebook, which,
                                                                           name, graded):
    # the reference or starter as released, graded once per run (tests/graded.py): its
    # visible checks
    before = {cid: r.passed for cid, r in graded(notebook, which).items()
              if not CHECKS[cid].hidden}
    assert all(before.values()) if which == "reference" else not any(before.values())
    after, messages = verdicts(notebook, which, name)
    changed = {cid: messages[cid] for cid in before if after[cid] != before[cid]}
    assert not changed, f"{name} changed the verdict of {which}: {changed}"
