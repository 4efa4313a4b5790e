"""The self-check table: check results as HTML in JupyterLab and as text everywhere else.

Each check is a row (its id, pass or fail with the points, its title and message); under a failed
check comes one row per distinct cause: what the judge found at the first crash point where it
happened, then the other crash points with the same cause. A cause already shown under an earlier
check of the table is named, not repeated. Hidden checks are listed as running when the work is
graded.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass

from graders.checks.counting import counts_against

__all__ = [
    "ResultTable", "Row", "MAX_POINT_ROWS", "VERDICTS_ATTRIBUTE", "short_ids",
]


#: At most this many causes are listed under one check.
MAX_POINT_ROWS = 6


#: The HTML attribute of the table that carries each result as JSON, for nbgrader's Validate
#: (`graders.nbgrader_plumbing.validation`) to say what the check said.
VERDICTS_ATTRIBUTE = "data-checkpoint-lab-verdicts"


@dataclass(frozen=True)
class Row:
    """One line of the table: ``name`` is a check id, or a crash point id under its check (on the
    check's scenario)."""

    name: str
    status: str
    message: str
    level: int = 0

    @property
    def passed(self) -> bool | None:
        """True for a pass, False for a failure, None for a row that is neither."""
        words = self.status.split()
        return {"PASS": True, "FAIL": False}.get(words[0]) if words else None


class ResultTable:
    """A table of `graders.checks.CheckResult` objects (and hidden checks not run here).

    ``str(table)`` is the plain-text table; ``table._repr_html_()`` the HTML one that
    JupyterLab shows. ``table.passed`` is True when every result passed.
    """

    def __init__(self, results: Iterable, *, hidden: Iterable = (), title: str | None = None,
                 notes: Iterable[str] = (), seen: dict[str, tuple[str, str]] | None = None,
                 cell: str = ""):
        self.results = list(results)
        self.hidden = list(hidden)
        self.title = title
        #: lines shown under the summary (e.g. a written answer that is still empty)
        self.notes = list(notes)
        # ``seen``: what the kernel's earlier check cells showed (a cause's text -> (the cell,
        # where)); a cause shown in another cell is referred to, not repeated (one copy of an
        # error per notebook). ``cell`` names this table's cell; the table adds what it shows.
        self._seen = dict(seen or {})
        self.cell = cell
        if seen is not None:
            self.rows()
            seen.update(self._shown)

    @property
    def passed(self) -> bool:
        """Whether every check in the table passed."""
        return all(r.passed for r in self.results)

    @property
    def not_checked(self) -> list:
        """The results of the checks that could not run here (status ``"not_checked"``)."""
        return [r for r in self.results if getattr(r, "status", "") == "not_checked"]

    @property
    def failed(self) -> list:
        """The results of the checks that ran and failed."""
        return [r for r in self.results
                if not r.passed and getattr(r, "status", "") != "not_checked"]

    @property
    def points(self) -> tuple[float, int]:
        """(points earned, points possible) over the results."""
        return sum(r.points_earned for r in self.results), sum(r.points for r in self.results)

    def rows(self) -> list[Row]:
        """The table's rows, in order."""
        rows: list[Row] = []
        # a cause's text -> where it was first shown: another cell of this kernel, else this
        # table (a check cell run again does not refer to its own earlier output)
        elsewhere = {text: where for text, (cell, where) in self._seen.items()
                     if cell != self.cell}
        shown: dict[str, str] = dict(elsewhere)
        self._shown: dict[str, tuple[str, str]] = {}
        for result in self.results:
            check = result.check
            title = f"{check.title[0].upper()}{check.title[1:]}"
            if getattr(result, "status", "") == "not_checked":
                rows.append(Row(check.shown_id, f"not checked here, {check.points} pending",
                                f"{title}. {result.message}"))
                continue
            status = "PASS" if result.passed else "FAIL"
            failed = [] if result.passed else [
                v for v in result.verdicts if counts_against(check.id, v)]
            message = (result.summary or result.message) if failed else result.message
            causes = _causes(check, failed)
            under = self._cause_rows(check, causes, shown, elsewhere)
            if self.cell == "self_check" and causes and not under:
                message += " What it found is in the check's own cell, above."
            rows.append(Row(check.shown_id, f"{status} {_num(result.points_earned)}/{check.points}",
                            f"{title}. {message}"))
            rows += under
        if self.cell == "self_check" and elsewhere:
            return rows  # the summary counts the hidden checks; their cells say the rest
        for check in self.hidden:
            on = f", on {check.scenario}" if check.scenario else ""
            rows.append(Row(check.shown_id, "when graded",
                            f"{check.title[0].upper()}{check.title[1:]}. Hidden check "
                            f"({check.points} points{on}), run when your work is graded."))
        return rows

    def _cause_rows(self, check, causes: list, shown: dict[str, str],
                    elsewhere: dict[str, str]) -> list[Row]:
        """The rows under a failing check: one per cause, each naming its crash points."""
        rows: list[Row] = []
        for text, points in causes[:MAX_POINT_ROWS]:
            first, others = points[0], points[1:]
            if text in elsewhere and self.cell == "self_check":
                continue  # shown in full in the check's own cell
            if text in shown:
                body = f"The same as under {shown[text]}, above."
            else:
                body = text
                if text:
                    shown[text] = f"{check.shown_id} ({first})"
                    self._shown[text] = (self.cell, shown[text])
            more = f"{len(others)} more crash point{'s' if len(others) != 1 else ''}"
            if not text:  # what it found is held back (graders.checks.gate)
                body = "Failed here"
                if others:
                    body += f", and at {more}: {', '.join(others)}"
                body += "."
            elif others:
                body += f" The same at {more}: {', '.join(others)}."
            rows.append(Row(first, "FAIL", short_ids(body.strip()), level=1))
        if len(causes) > MAX_POINT_ROWS:
            more = sum(len(points) for _, points in causes[MAX_POINT_ROWS:])
            rows.append(Row("...", "", f"{more} more crash points failed, for "
                            f"{len(causes) - MAX_POINT_ROWS} other causes; fix the ones "
                            "above first", level=1))
        return rows

    def _one_check(self) -> bool:
        """A check cell's table: its row already says the points, so no summary line."""
        return len(self.results) == 1 and not self.hidden and not self.title

    def summary(self) -> str:
        """One line: how many checks passed, and the points."""
        if not self.results and not self.hidden:
            return "No check ran in this kernel."
        earned, possible = self.points
        passed = sum(1 for r in self.results if r.passed)
        text = (f"{passed} of {len(self.results)} checks passed, "
                f"{_num(earned)} of {possible} points")
        pending = self.not_checked
        if pending:
            text += (f"; {len(pending)} not checked here "
                     f"({sum(r.points for r in pending)} points pending)")
        if self.hidden:
            text += f"; {len(self.hidden)} hidden checks run when your work is graded"
        return text + "."

    def __str__(self) -> str:
        width = max(60, min(110, shutil.get_terminal_size((100, 24)).columns))
        name_w = min(38, max([len(r.name) + 2 * r.level for r in self.rows()] + [19]))
        status_w = max([len(r.status) for r in self.rows()] + [6])
        message_w = max(20, width - name_w - status_w - 4)
        lines = [self.title] if self.title else []
        header = f"{'check / crash point':<{name_w}}  {'result':<{status_w}}  message"
        lines += [header, "-" * min(width, len(header) + message_w - 7)]
        for row in self.rows():
            names = textwrap.wrap(row.name, name_w - 2 * row.level) or [""]
            messages = textwrap.wrap(row.message, message_w) or [""]
            for i in range(max(len(names), len(messages))):
                name = ("  " * row.level + names[i]) if i < len(names) else ""
                status = row.status if i == 0 else ""
                message = messages[i] if i < len(messages) else ""
                lines.append(f"{name:<{name_w}}  {status:<{status_w}}  {message}".rstrip())
        if not self._one_check():
            lines.append(self.summary())
        for note in self.notes:
            lines.extend(textwrap.wrap(note, width))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        colors = {True: "#1a7f37", False: "#cf222e", None: "#57606a"}
        cell = "padding:4px 8px;border-bottom:1px solid #d0d7de;text-align:left;vertical-align:top"
        verdicts = html.escape(json.dumps([_verdict_data(r) for r in self.results]), quote=True)
        parts = [f'<div class="checkpoint-lab-selfcheck" {VERDICTS_ATTRIBUTE}="{verdicts}">']
        if self.title:
            parts.append(f"<p><strong>{html.escape(self.title)}</strong></p>")
        parts.append('<table style="border-collapse:collapse">'
                     f'<thead><tr><th style="{cell}">check / crash point</th>'
                     f'<th style="{cell}">result</th><th style="{cell}">message</th></tr></thead>'
                     "<tbody>")
        for row in self.rows():
            indent = "padding-left:28px;" if row.level else "font-weight:600;"
            parts.append(
                f'<tr><td style="{cell};{indent}"><code>{html.escape(row.name)}</code></td>'
                f'<td style="{cell};color:{colors[row.passed]};font-weight:600;'
                f'white-space:nowrap">{html.escape(row.status)}</td>'
                f'<td style="{cell}">{html.escape(row.message)}</td></tr>')
        parts.append("</tbody></table>" + ("" if self._one_check() else
                                           f"<p>{html.escape(self.summary())}</p>"))
        parts.extend(f'<p class="checkpoint-lab-note">{html.escape(note)}</p>'
                     for note in self.notes)
        parts.append("</div>")
        return "".join(parts)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(str(self))

    def __repr__(self) -> str:
        return f"<ResultTable: {self.summary()}>"


def _own_problems(check) -> frozenset[str] | None:
    """The judge's problems ``check`` judges (None: every problem is its own)."""
    return check.problems or None


def _cause(check, verdict) -> tuple[tuple, str]:
    """(what groups ``verdict`` with others of the same cause, what it says for ``check``)."""
    evidence = verdict.evidence or {}
    problems = list(evidence.get("problems") or ())
    messages = evidence.get("messages") or {}
    own = _own_problems(check)
    mine = [p for p in problems if own is None or p in own]
    if evidence.get("points"):  # one verdict already standing for every moment of its cause
        text = verdict.message
    elif mine and all(p in messages for p in mine):
        text = " ".join(messages[p] for p in mine)
    else:
        text = verdict.message
    key = ("problems", *sorted(mine or problems)) if problems else ("message", text)
    return key, text


def _causes(check, failed: list) -> list[tuple[str, list[str]]]:
    """The distinct causes of ``failed`` (verdicts), in order: (the first one's text, every
    crash point where it happened)."""
    groups: dict[tuple, tuple[str, list[str]]] = {}
    for verdict in failed:
        key, text = _cause(check, verdict)
        groups.setdefault(key, (text, []))[1].append(verdict.point)
    return list(groups.values())


_NAMED_ID = re.compile(r"(\b[A-Za-z_][A-Za-z0-9_]*) \(id (toolu_[A-Za-z0-9]+)\)")


def short_ids(text: str) -> str:
    """``text`` without the ``(id toolu_...)`` after a tool's name, where each name in it has
    one id (the ids of the fake model's errors doubled a check's length; a name is enough)."""
    ids: dict[str, set[str]] = {}
    for name, tid in _NAMED_ID.findall(text):
        ids.setdefault(name, set()).add(tid)
    return _NAMED_ID.sub(lambda m: m.group(1) if len(ids[m.group(1)]) == 1 else m.group(0),
                         text)


def _num(value: float) -> str:
    return f"{value:g}"


def _verdict_data(result) -> dict:
    """What `graders.nbgrader_plumbing.validation` needs of a result to explain it in Validate
    (the check named as a student reads it: the output is theirs)."""
    check = result.check
    return {"check_id": check.shown_id, "title": check.title, "passed": bool(result.passed),
            "status": getattr(result, "status", "passed" if result.passed else "failed"),
            "points_earned": float(result.points_earned), "points": float(check.points),
            "message": result.message}
