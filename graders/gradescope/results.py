"""Gradescope's results.json for one submission, graded as ``checkpoint-lab grade`` grades.

Gradescope runs ``run_autograder`` once per submission, with the student's files in
``/autograder/submission/`` (https://gradescope-autograders.readthedocs.io/en/latest/specs/).
:func:`grade_folder` finds the exercise notebooks there (whatever their names, or inside a zip:
`graders.gradescope.submission_files`), tells which exercise each one is by its answer cells'
grade_ids, grades each with :func:`graders.checks.grade_submission` (the sandbox, the observer,
the judge) and returns the results as Gradescope's format wants them: one test per check,
rendered from the check's record (`graders.checks.record`) as nbgrader's feedback renders it;
hidden checks ``after_published``, and no top-level score or output that tells them before the
grades are published; the written answers as tests of no points (marked by hand on Gradescope);
a failing test for an exercise whose notebook is missing or unreadable, and a notebook the
grader fails on costs only its own checks. :func:`write_results` writes the file atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from graders.gradescope.submission_files import Found, find_notebooks

if TYPE_CHECKING:
    from graders.checks.record import CheckRecord, SubmissionResult

__all__ = ["MANIFEST_NAME", "VISIBILITIES", "Found", "course_manifest", "find_notebooks",
           "grade_folder", "results_of", "graded_records", "write_results", "main"]

#: The file in the autograder's source folder that describes the course's assignment.
MANIFEST_NAME = "checkpoint_lab_course.json"

#: Gradescope's visibility values (its specs, "Controlling test case visibility").
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")

# -- the course's assignment ---------------------------------------------------------------------

def _nbgrader(cell: dict) -> dict:
    meta = cell.get("metadata", {}) if isinstance(cell, dict) else {}
    value = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    return value if isinstance(value, dict) else {}


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def course_manifest(source_dir: Path) -> dict[str, Any]:
    """What the autograder needs to know of a course's assignment, from its source notebooks.

    ``source_dir`` is ``<course>/source/<assignment>/``. Returns ``{"exercises": [...]}``, one
    entry per exercise notebook: its name, its exercise id (a key of
    `graders.checks.NOTEBOOKS`), and its written answers (the cells nbgrader marks by hand:
    ``grade`` and ``solution`` both true, not code) with their points.
    """
    from graders.checks import NOTEBOOKS, notebook_of, read_notebook

    exercises = []
    for path in sorted(Path(source_dir).glob("*.ipynb")):
        nb = read_notebook(path)
        exercise = notebook_of(nb) or (path.stem if path.stem in NOTEBOOKS else None)
        if exercise is None:
            continue
        written = [{"grade_id": _nbgrader(c)["grade_id"],
                    "points": float(_nbgrader(c).get("points", 0) or 0)}
                   for c in nb["cells"]
                   if _nbgrader(c).get("grade") and _nbgrader(c).get("solution")
                   and c.get("cell_type") != "code"]
        exercises.append({"notebook": path.stem, "exercise": exercise, "written": written})
    if not exercises:
        raise ValueError(f"{source_dir} holds no exercise notebook of Checkpoint Lab")
    return {"exercises": exercises}


# -- results.json ----------------------------------------------------------------------------

def _level(exercise: str) -> str:
    from graders.checks import NOTEBOOKS

    return NOTEBOOKS[exercise].split(":")[0]


def _check_test(record: CheckRecord, number: str) -> dict[str, Any]:
    """Check ``record`` as a Gradescope test."""
    from graders.nbgrader_plumbing.cells import record_text

    title = record.title + (" (hidden check)" if record.hidden else "")
    return {
        "name": f"{_level(record.notebook)}: {title}",
        "number": number,
        "score": record.score,
        "max_score": record.points,
        "status": "passed" if record.passed else "failed",
        "output": record_text(record),
        "output_format": "text",
        "visibility": "after_published" if record.hidden else "visible",
        "tags": [record.check_id, record.notebook],
    }


def _written_test(exercise: str, written: dict, nb: dict | None, number: str) -> dict[str, Any]:
    grade_id, points = written["grade_id"], written["points"]
    pieces = [_text(cell).strip() for cell in (nb or {}).get("cells", [])
              if isinstance(cell, dict) and _nbgrader(cell).get("grade_id") == grade_id]
    answer = "\n\n".join(p for p in pieces if p)
    what = grade_id.split("_", 1)[-1].replace("_", " ")
    lines = [f"Written answer ({what}): marked by hand, {points:g} points. The autograder gives "
             "it no score; your instructor marks it on Gradescope (a manually graded question "
             "of this assignment) against the course's mark scheme."]
    if nb is None:
        lines.append("Your notebook for this exercise was not found, so there is no answer.")
    elif not answer or answer.startswith("YOUR ANSWER HERE"):
        lines.append("Your notebook has no answer in this cell yet.")
    else:
        joined = " (it was in several cells, joined in notebook order)" if len(pieces) > 1 else ""
        lines.append(f"Your answer, as handed in{joined}:\n\n{answer}")
    return {
        "name": f"{_level(exercise)}: written answer, {what} (marked by hand)",
        "number": number,
        "score": 0.0,
        "max_score": 0.0,
        "output": "\n".join(lines),
        "output_format": "text",
        "visibility": "visible",
        "tags": [grade_id, exercise, "manual"],
    }


def _missing_test(entry: dict, found: Found, number: str) -> dict[str, Any]:
    from graders.checks import ANSWER_CELLS, NOTEBOOKS

    exercise, name = entry["exercise"], entry["notebook"] + ".ipynb"
    mine = [shown for shown in found.unreadable
            if PurePosixPath(shown.split(":")[-1]).stem == entry["notebook"]]
    if mine:
        why = "; ".join(f"{shown} could not be read: {found.unreadable[shown]}" for shown in mine)
        head = f"{NOTEBOOKS[exercise]}: {why}."
        todo = ("Download the notebook again from JupyterLab (File > Download), check that it "
                "opens, and submit again.")
    else:
        handed = sorted({*found.unreadable, *found.others,
                         *(shown for shown, _ in found.notebooks.values())})
        head = (f"{NOTEBOOKS[exercise]}: no notebook of this exercise was found in your "
                f"submission (it is the one with the answer cells "
                f"{', '.join(ANSWER_CELLS[exercise])}). Files found: "
                f"{', '.join(handed) if handed else 'none'}.")
        todo = f"Upload your {name} (or a zip of your notebooks) and submit again."
    return {
        "name": f"{_level(exercise)}: notebook {name}",
        "number": number,
        "score": 0.0,
        "max_score": 0.0,
        "status": "failed",
        "output": f"{head}\n{todo} Its checks below score 0 until then.",
        "output_format": "text",
        "visibility": "visible",
        "tags": [exercise, "notebook"],
    }


def _not_graded(checks, why: str, cause: str) -> list[CheckRecord]:
    from graders.checks.record import failure_record

    return [failure_record(c.id, c.points, why, cause, c) for c in checks]


def _graded(exercise: str, shown: str, nb: dict) -> tuple[list[CheckRecord], str]:
    """The records of one exercise's notebook, and the line the summary says of it. A notebook
    the grader fails on costs only its own checks, each saying so."""
    from graders.checks import NOTEBOOKS, checks_for, grade_submission, submission_from_notebook

    checks = checks_for(exercise)
    try:
        cells = submission_from_notebook(nb, exercise)
        results = grade_submission(cells, exercise)
    except Exception as exc:  # noqa: BLE001 - one notebook's fault costs only its own checks
        why = (f"Not graded: the autograder failed on {shown} ({type(exc).__name__}: {exc}). "
               "This is not your fault: tell your instructor.")
        return (_not_graded(checks, why, "grader_fault"),
                f"{NOTEBOOKS[exercise]}: {shown} could not be graded (see its checks).")
    return graded_records(exercise, shown, cells, results)


def graded_records(exercise: str, shown: str, cells, results) -> tuple[list[CheckRecord], str]:
    """The records of ``results`` (check id -> `CheckResult`, graded from the answer cells
    ``cells`` of the notebook ``shown``), in the exercise's order, and the summary's line."""
    from graders.checks import NOTEBOOKS, checks_for
    from graders.checks.record import record_of

    records = [record_of(results[c.id], c, cells) for c in checks_for(exercise)]
    return records, " ".join([f"{NOTEBOOKS[exercise]}: graded {shown}.", *cells.notes()])


def grade_folder(folder: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """results.json's content for the submission in ``folder`` (see the module docstring).

    No top-level score: Gradescope adds up the tests, each shown as its visibility says, so a
    hidden check's points are not told before the grades are published; the top-level output
    counts the visible checks only.
    """
    from graders.grading.observers import grading_problem

    started = time.monotonic()
    problem = grading_problem()
    found = find_notebooks(Path(folder), manifest["exercises"])
    rendered = results_of(found, manifest, _graded, problem)
    return {"execution_time": max(1, round(time.monotonic() - started)), **rendered}


def results_of(found: Found, manifest: dict[str, Any], grade: Callable[..., tuple],
               problem: str | None = None) -> dict[str, Any]:
    """results.json's content but ``execution_time``, for the notebooks ``found``, each graded
    by ``grade(exercise, shown, nb)`` -> (its records, the summary's line), none where
    ``problem`` says the sandbox cannot start (the golden files of ``tests/golden/`` render the
    records of a grading done once, through this)."""
    from graders.checks import NOTEBOOKS, checks_for
    from graders.checks.record import SubmissionResult

    tests: list[dict[str, Any]] = []
    records: list[CheckRecord] = []
    summary: list[str] = []
    for index, entry in enumerate(manifest["exercises"], start=1):
        exercise = entry["exercise"]
        shown, nb = found.notebooks.get(exercise, (None, None))
        numbered = (f"{index}.{n}" for n in range(1, 100))
        checks = checks_for(exercise)
        if nb is None:
            tests.append(_missing_test(entry, found, next(numbered)))
            mine = _not_graded(checks, "Not graded: this exercise's notebook was not handed in, "
                               "or could not be read (see above).", "not_handed_in")
            summary.append(f"{NOTEBOOKS[exercise]}: not handed in or unreadable.")
        elif problem:
            mine = _not_graded(checks, "Not graded: the autograder could not start its sandbox "
                               f"({problem}). This is not your fault: tell your instructor.",
                               "no_sandbox")
            summary.append(f"{NOTEBOOKS[exercise]}: {shown} (not graded: no sandbox here).")
        else:
            mine, line = grade(exercise, shown, nb)
            summary.append(line)
        tests.extend(_check_test(record, next(numbered)) for record in mine)
        records += mine
        tests.extend(_written_test(exercise, w, nb, next(numbered)) for w in entry["written"])
    if found.duplicates:
        summary.append("Not graded, because another notebook of the same exercise came first "
                       f"(by name): {', '.join(found.duplicates)}.")
    if found.others:
        summary.append(f"Not exercise notebooks of this assignment: {', '.join(found.others)}.")
    return {
        "output": "\n".join([_head(SubmissionResult(tuple(records)), manifest), *summary]),
        "output_format": "text",
        "tests": tests,
    }


def _head(result: SubmissionResult, manifest: dict[str, Any]) -> str:
    """The visible checks' points (the hidden ones are told when the grades are published)."""
    score = round(sum(r.score for r in result.visible), 4)
    out_of = sum(r.points for r in result.visible)
    hidden = sum(r.points for r in result.hidden)
    written = sum(w["points"] for e in manifest["exercises"] for w in e["written"])
    return (f"Visible checks: {score:g}/{out_of:g} points. The hidden checks ({hidden:g} points) "
            "are shown when your instructor publishes the grades. The written answers "
            f"({written:g} points) are marked by hand and are not part of this score.")


def write_results(results: dict[str, Any], path: Path) -> None:
    """Write ``results`` as JSON to ``path`` atomically (a temp file, then ``os.replace``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    """``python -m graders.gradescope [AUTOGRADER_DIR]``: what ``run_autograder`` runs.

    Grades ``AUTOGRADER_DIR/submission`` (default ``/autograder``) with the manifest in
    ``AUTOGRADER_DIR/source`` and writes ``AUTOGRADER_DIR/results/results.json``.
    """
    import sys

    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0] if argv else "/autograder")
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(results_dir, 0o755)  # never writable by the sandbox's own uid
    try:
        manifest = json.loads((root / "source" / MANIFEST_NAME).read_text(encoding="utf-8"))
        results = grade_folder(root / "submission", manifest)
    except Exception as exc:  # noqa: BLE001 - Gradescope must get a results.json whatever happens
        results = {"score": 0.0, "output": "The autograder failed before it could grade "
                   f"({type(exc).__name__}: {exc}). This is not your fault: tell your "
                   "instructor.", "tests": []}
        write_results(results, results_dir / "results.json")
        raise
    write_results(results, results_dir / "results.json")
    print(results["output"])
    return 0

