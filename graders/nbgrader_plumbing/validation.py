"""What nbgrader's Validate says about a check cell and an empty written answer.

nbgrader's ``Validator`` explains a failed test cell by the cell's error output or stderr. A
check cell has neither: it shows its result and, in Validate's kernel only, returns the points
it earned (a number, which nbgrader reads as partial credit), so that Run All goes on past a
failing check. For such a cell
nbgrader has one fixed sentence, "Partial credit; passed some but not all of the tests", even for
0 of 3 points. :func:`explain` reads the verdict the check cell displayed (the self-check table
carries it, `graders.checks.selfcheck.VERDICTS_ATTRIBUTE`) and says it the way the feedback does:
"Survives a kill during a save: not passed (0/3 points)" and the check's message.

nbgrader shows an empty written answer by its text ("YOUR ANSWER HERE"); :func:`unanswered` names
it by its question instead: the heading above it and its points.

:func:`install` makes nbgrader's Validator do both. The ``nbgrader_config.py`` the package
installs into the environment's ``etc/jupyter`` (and the one ``checkpoint-lab lab`` writes) calls
it, so the Validate button of any JupyterLab started there and ``nbgrader validate`` say it;
every other cell is explained as nbgrader does.
"""

from __future__ import annotations

import copy
import html
import json
import os
import re
import textwrap

from graders.checks.selfcheck import VERDICTS_ATTRIBUTE
from graders.nbgrader_plumbing.cells import WRAP, verdict_text

__all__ = ["explain", "install", "unanswered"]

_DATA = re.compile(rf'{VERDICTS_ATTRIBUTE}="([^"]*)"')


def _verdicts(cell) -> list[dict]:
    found = []
    for output in cell.get("outputs", []):
        markup = (output.get("data") or {}).get("text/html")
        if isinstance(markup, list):
            markup = "".join(markup)
        for match in _DATA.finditer(markup or ""):
            try:
                found.extend(json.loads(html.unescape(match.group(1))))
            except ValueError:
                continue
    return found


def _id_of(name) -> str | None:
    """The check id a verdict names: its label (or, from an earlier release, its id)."""
    from graders.checks.base import check_named

    try:
        return check_named(str(name)).id
    except KeyError:
        return None


def explain(cell) -> str | None:
    """Why check cell ``cell`` did not pass, as its verdict says; None when it shows none.

    ``cell`` is an executed nbgrader test cell (``grade_id`` names its check).
    """
    meta = cell.get("metadata", {}).get("nbgrader", {})
    grade_id = meta.get("grade_id")
    for verdict in _verdicts(cell):
        if _id_of(verdict.get("check_id")) != grade_id or verdict.get("passed"):
            continue
        points = float(meta.get("points", verdict.get("points") or 0))
        possible = float(verdict.get("points") or 0)
        earned = float(verdict.get("points_earned") or 0)
        score = points * earned / possible if possible else 0.0
        title = str(verdict.get("title") or grade_id)
        return verdict_text(title[:1].upper() + title[1:], score, points,
                            str(verdict.get("message") or ""))
    return None


def _text(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def unanswered(nb, cell) -> str | None:
    """How Validate names ``cell`` when it is a written answer left empty; None for other cells.

    ``cell`` is one of ``nb``'s cells that nbgrader's Validator found failed: a written answer
    (a markdown cell marked by hand) fails only while it is as released.
    """
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if cell.get("cell_type") != "markdown" or not (meta.get("grade") and meta.get("solution")):
        return None
    cells = list(nb.get("cells", []))
    index = next((i for i, c in enumerate(cells) if c is cell), len(cells))
    question = ""
    for before in reversed(cells[:index]):
        heading = next((line for line in _text(before).splitlines() if line.startswith("#")), "")
        if before.get("cell_type") == "markdown" and heading:
            question = f' to "{heading.lstrip("#").strip()}"'
            break
    # named by its question: an id may name the answer (l3_why_two_fsyncs), never shown
    named = question or f" {meta.get('grade_id', '?')}"
    return textwrap.fill(
        f"Your written answer{named} ({float(meta.get('points', 0)):g} points, marked by hand) "
        "is still empty: write it in the notebook before you submit.",
        width=WRAP)  # Validate shows it as it is


def install() -> None:
    """Make nbgrader's ``Validator`` explain a failed check cell with :func:`explain` and name an
    empty written answer with :func:`unanswered` (once, however often it is called)."""
    from nbgrader.validator import Validator

    original = Validator._extract_error
    if getattr(original, "_checkpoint_lab", False):
        return
    failed_cells = Validator._get_failed_cells

    def _extract_error(self, cell):
        has_error = any(o.get("output_type") == "error" or o.get("name") == "stderr"
                        for o in cell.get("outputs", []))
        return (None if has_error else explain(cell)) or original(self, cell)

    def _get_failed_cells(self, nb):
        named = []
        for cell in failed_cells(self, nb):
            said = unanswered(nb, cell)
            if said is not None:  # what Validate shows as "the cell": the question, not its text
                cell = copy.deepcopy(cell)
                cell["source"] = said
            named.append(cell)
        return named

    validate = Validator.validate

    def _validate(self, filename):
        # Validate's kernel is a fresh one: tell it which saved notebook it runs, so the checks'
        # gate (graders.checks.gate) reads the student's answer from that file.
        from graders.checks.gate import NOTEBOOK_ENV

        before = os.environ.get(NOTEBOOK_ENV)
        os.environ[NOTEBOOK_ENV] = os.path.abspath(filename)
        try:
            return validate(self, filename)
        finally:
            if before is None:
                os.environ.pop(NOTEBOOK_ENV, None)
            else:
                os.environ[NOTEBOOK_ENV] = before

    _extract_error._checkpoint_lab = True
    Validator._extract_error = _extract_error
    Validator._get_failed_cells = _get_failed_cells
    Validator.validate = _validate
