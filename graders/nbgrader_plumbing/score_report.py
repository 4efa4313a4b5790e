"""The scores as people read them: the CSV (one row per student), a summary of the class, and a
text table per student; all rendered from the checks' records (`graders.checks.record`) and
nbgrader's scores, never from each other's text.

Everything a student's code or files could have written (a student id is a folder name, a
message quotes an exception) is made safe on the way out: printable on a terminal
(`graders.text.printable`), and never a formula in a spreadsheet (a cell that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return gets a ``'`` in front, as OWASP's CSV injection
guidance says).
"""

from __future__ import annotations

import csv
import shutil
import textwrap
from pathlib import Path

from graders.nbgrader_plumbing.gradebook import StudentResult, TestScore
from graders.text import plural, printable, shorten

__all__ = ["write_csv", "format_student", "format_class", "csv_cell"]

_FORMULA = ("=", "+", "-", "@")


def csv_cell(value: object) -> str:
    """``value`` as a CSV cell a spreadsheet shows as text: printable (a tab or a carriage
    return is a space), and never a formula: a ``'`` before a leading ``=``, ``+``, ``-``, ``@``
    (OWASP's CSV injection guidance)."""
    text = printable(value)
    return "'" + text if text.lstrip(" ").startswith(_FORMULA) else text


def _notes(result: StudentResult) -> list[str]:
    return [*result.notes, *(f"{notebook}.ipynb was not submitted: its tests score 0"
                             for notebook in result.not_submitted)]


def write_csv(path: Path, results: list[StudentResult]) -> None:
    """One row per student: the student id (twice: ``student``, and ``SIS User ID`` for an LMS
    gradebook import such as Canvas's), one column per autograded test, then the totals (points
    and percent) and notes."""
    tests = [t.test for t in results[0].tests] if results else []
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "SIS User ID", *tests, "autograded_score", "autograded_max",
                         "autograded_percent", "notes"])
        for result in results:
            by_test = {t.test: t for t in result.tests}
            writer.writerow([
                csv_cell(result.student), csv_cell(result.student),
                *("" if by_test[t].score is None else f"{by_test[t].score:g}" for t in tests),
                f"{result.score:g}", f"{result.max_score:g}", _percent(result),
                csv_cell(" | ".join(_notes(result)))])


def _percent(result: StudentResult) -> str:
    """The autograded total as a percentage of its maximum, two decimals at most."""
    if not result.max_score:
        return ""
    return f"{round(100 * result.score / result.max_score, 2):g}"


def _width(width: int | None) -> int:
    return width or max(60, min(120, shutil.get_terminal_size((100, 24)).columns))


def _wrap(text: str, width: int, indent: int) -> list[str]:
    return textwrap.wrap(printable(text), width, initial_indent=" " * indent,
                         subsequent_indent=" " * indent, break_on_hyphens=False)


_WORDS = {"passed": "passed", "failed": "not passed", "not_checked": "NOT CHECKED",
          "not_submitted": "not submitted"}


#: Causes that are not the judge's problem codes, in words.
_CAUSES = {"not_checked": "not checked", "failed": "failed", "load": "could not be loaded",
           "no_crash": "fails with no crash at all"}


def _cause_words(cause: str, *, capital: bool = True) -> str:
    """A cause as the instructor reads it: what the judge's code means, the code after it (a
    sentence's start, or with ``capital`` False, its middle)."""
    from graders.judge.recording import PARALLEL_PROBLEMS, PROBLEMS

    words = (PROBLEMS.get(cause) or PARALLEL_PROBLEMS.get(cause) or _CAUSES.get(cause)
             if cause else "no reason recorded")
    if words is None:
        return cause
    words = f"{words[:1].upper()}{words[1:]}" if capital else words
    return f"{words} ({cause})" if cause and cause != words else words


def _twin(test: TestScore, by_id: dict[str, TestScore]) -> TestScore | None:
    """The visible check a hidden one repeats on a longer task, when it failed the same way."""
    twin = by_id.get(test.test.removesuffix("_hidden"))
    if twin is None or twin is test or twin.status != test.status:
        return None
    return twin if twin.cause == test.cause else None


def _test_lines(test: TestScore, by_id: dict[str, TestScore], said: dict[str, str],
                name_w: int, width: int) -> list[str]:
    """The lines of one check: its status, and why (once per reason: a check that says what an
    earlier one said, or fails as its visible twin did, names that check instead)."""
    score = "-" if test.score is None else f"{test.score:g}"
    status = _WORDS.get(test.status, test.status)
    if test.status == "passed" and test.score is not None and test.score < test.max_score:
        status = "partly"
    head = f"  {test.test:<{name_w}}  {score:>4}/{test.max_score:<3g} {status}"
    if test.status == "passed":
        return [head]
    twin = _twin(test, by_id)
    if test.message in said:
        return _wrap_head(f"{head}: the same reason as {said[test.message]}", width)
    if test.message:
        said[test.message] = test.test
    if twin is not None:
        failed, points = ((test.record.failed, test.record.crash_points) if test.record
                          else (None, None))
        counted = f"; {failed} of {points} crash points failed" if failed else ""
        cause = _cause_words(twin.cause, capital=False)
        return _wrap_head(f"{head}, as {twin.test} ({cause}){counted}", width)
    return [head, *_wrap(test.message, width, 6)] if test.message else [head]


def _wrap_head(line: str, width: int) -> list[str]:
    """A check's line, its words past ``width`` on lines of their own, indented."""
    line = printable(line)
    if len(line) <= width:
        return [line]
    cut = line.rfind(" ", 0, width + 1)
    return [line[:cut], *_wrap(line[cut + 1:], width, 6)]


def format_student(result: StudentResult, width: int | None = None) -> str:
    """A student's scores as a text table: each check of each notebook handed in, its points,
    its status, and under a check that was not passed the reason, wrapped to ``width`` (default:
    the terminal's); a hidden check that failed as its visible twin did says so in one line; a
    notebook not handed in is one line; then the notes."""
    width = _width(width)
    handed = [t for t in result.tests if t.submitted]
    name_w = max([len(t.test) for t in handed] + [4])
    by_id = {t.test: t for t in result.tests}
    lines = [printable(f"{result.student}: {result.score:g}/{result.max_score:g} autograded "
                       "points")]
    said: dict[str, str] = {}
    for test in handed:
        lines += _test_lines(test, by_id, said, name_w, width)
    for notebook in result.not_submitted:
        mine = [t for t in result.tests if t.notebook == notebook]
        lines.append(f"  {notebook}.ipynb: not submitted ({plural(len(mine), 'check')}, "
                     f"{sum(t.max_score for t in mine):g} points, scored 0)")
    for note in result.notes:
        lines.extend(textwrap.wrap(printable(note), width, initial_indent="  note: ",
                                   subsequent_indent=" " * 8, break_on_hyphens=False))
    return "\n".join(lines)


def _zero_groups(results: list[StudentResult],
                 test: str) -> dict[str, list[tuple[str, TestScore]]]:
    """cause -> (student, score) of each student who handed ``test`` in and earned nothing."""
    groups: dict[str, list[tuple[str, TestScore]]] = {}
    for result in results:
        score = next((t for t in result.tests if t.test == test), None)
        if score is not None and score.submitted and not score.score:
            cause = score.cause or ("not_checked" if score.status == "not_checked" else "")
            groups.setdefault(cause, []).append((result.student, score))
    return groups


def _example(scores: list[tuple[str, TestScore]]) -> str:
    """The shortest reason of a group, as an example of what its students read."""
    reasons = [t.summary for _, t in scores]
    return shorten(min((r for r in reasons if r), key=len, default=""), 300)


def _zero_lines(test: str, points: float, groups: dict, shown: dict, width: int) -> list[str]:
    """Who earned nothing on ``test``, by cause; a hidden check whose groups are its visible
    twin's says so in one line, and an example already shown is named, not repeated."""
    key = {cause: sorted(s for s, _ in scores) for cause, scores in groups.items()}
    twin = test.removesuffix("_hidden")
    if twin != test and shown.get(("groups", twin)) == key:
        return _wrap(f"{test} ({points:g} points): the same students, for the same reasons, as "
                     f"{twin}", width, 2)
    shown[("groups", test)] = key
    lines = [f"  {test} ({points:g} points)"]
    for cause, scores in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0])):
        names = ", ".join(printable(student) for student, _ in scores)
        lines.extend(_wrap(f"{_cause_words(cause)} ({len(scores)}): {names}", width, 4))
        example = _example(scores)
        if example and example in shown:
            lines.extend(_wrap(f"e.g. as under {shown[example]}", width, 6))
        elif example:
            shown[example] = test
            lines.extend(_wrap(f"e.g. {example}", width, 6))
    return lines


def format_class(results: list[StudentResult], width: int | None = None) -> str:
    """The class at a glance: per check how many passed, then who earned nothing on it and why,
    grouped by cause (each group with its shortest reason as an example)."""
    width = _width(width)
    if not results:
        return "No students."
    tests = [(t.test, t.max_score) for t in results[0].tests]
    name_w = max([len(t) for t, _ in tests] + [5])
    lines = [f"Class: {plural(len(results), 'student')}, "
             f"{results[0].max_score:g} autograded points each",
             f"  {'check':<{name_w}}  passed"]
    for test, _points in tests:
        handed = [s for r in results for s in r.tests if s.test == test and s.submitted]
        passed = sum(1 for s in handed if s.status == "passed" and s.score
                     and s.score >= s.max_score)
        lines.append(f"  {test:<{name_w}}  {passed} of {len(handed)} handed in")
    zero = [(test, points, _zero_groups(results, test)) for test, points in tests]
    if any(groups for _, _, groups in zero):
        lines.append("Who earned nothing, and why:")
    shown: dict = {}
    for test, points, groups in zero:
        if groups:
            lines += _zero_lines(test, points, groups, shown, width)
    not_in: dict[str, list[str]] = {}
    for result in results:
        for notebook in result.not_submitted:
            not_in.setdefault(notebook, []).append(printable(result.student))
    for notebook, students in not_in.items():
        lines.extend(_wrap(f"{notebook}.ipynb not submitted ({len(students)}): "
                           f"{', '.join(students)}", width, 2))
    return "\n".join(lines)
