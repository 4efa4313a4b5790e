"""What nbgrader's Validate says about a check cell: the check's own verdict and why.

nbgrader's ``Validator`` explains a failed test cell by the cell's error output or stderr. A
check cell has neither: it shows its result and returns the points it earned (a number, which
nbgrader reads as partial credit), so that Run All goes on past a failing check. For such a cell
nbgrader has one fixed sentence, "Partial credit; passed some but not all of the tests", even for
0 of 3 points. :func:`explain` reads the verdict the check cell displayed (the self-check table
carries it, `graders.checks.selfcheck.VERDICTS_ATTRIBUTE`) and says it the way the feedback does:
"An atomic save: not passed (0/3 points)" and the check's message.

:func:`install` makes nbgrader's Validator use it. The workspace's ``nbgrader_config.py``
(written by ``checkpoint-lab lab``) calls it, so both the Validate button and ``nbgrader
validate`` in JupyterLab's terminal say it; every other cell is explained as nbgrader does.
"""

from __future__ import annotations

import html
import json
import re

from graders.checks.selfcheck import VERDICTS_ATTRIBUTE
from graders.nbgrader_plumbing.cells import verdict_text

__all__ = ["explain", "install"]

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


def explain(cell) -> str | None:
    """Why check cell ``cell`` did not pass, as its verdict says; None when it shows none.

    ``cell`` is an executed nbgrader test cell (``grade_id`` names its check).
    """
    meta = cell.get("metadata", {}).get("nbgrader", {})
    grade_id = meta.get("grade_id")
    for verdict in _verdicts(cell):
        if verdict.get("check_id") != grade_id or verdict.get("passed"):
            continue
        points = float(meta.get("points", verdict.get("points") or 0))
        possible = float(verdict.get("points") or 0)
        earned = float(verdict.get("points_earned") or 0)
        score = points * earned / possible if possible else 0.0
        title = str(verdict.get("title") or grade_id)
        return verdict_text(title[:1].upper() + title[1:], score, points,
                            str(verdict.get("message") or ""))
    return None


def install() -> None:
    """Make nbgrader's ``Validator`` explain a failed check cell with :func:`explain` (once)."""
    from nbgrader.validator import Validator

    original = Validator._extract_error
    if getattr(original, "_checkpoint_lab", False):
        return

    def _extract_error(self, cell):
        has_error = any(o.get("output_type") == "error" or o.get("name") == "stderr"
                        for o in cell.get("outputs", []))
        return (None if has_error else explain(cell)) or original(self, cell)

    _extract_error._checkpoint_lab = True
    Validator._extract_error = _extract_error
