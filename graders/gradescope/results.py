"""Gradescope's results.json for one submission, graded as ``checkpoint-lab grade`` grades.

Gradescope runs ``run_autograder`` once per submission, with the student's files in
``/autograder/submission/`` (https://gradescope-autograders.readthedocs.io/en/latest/specs/).
:func:`grade_folder` finds the exercise notebooks there (whatever their names, or inside a zip),
tells which exercise each one is by its answer cells' grade_ids, grades each with
:func:`graders.checks.grade_submission` (the sandbox, the observer, the judge) and returns the
results as Gradescope's format wants them: one test per check, with the message the student
reads in nbgrader's feedback; hidden checks ``after_published``; the written answers as tests
with a ``max_score`` and no ``score`` (marked by hand on Gradescope); a failing test for an
exercise whose notebook is missing or unreadable. :func:`write_results` writes the file
atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = ["MANIFEST_NAME", "VISIBILITIES", "Found", "course_manifest", "find_notebooks",
           "grade_folder", "write_results", "main"]

#: The file in the autograder's source folder that describes the course's assignment.
MANIFEST_NAME = "checkpoint_lab_course.json"

#: Gradescope's visibility values (its specs, "Controlling test case visibility").
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")

_MAX_FILES = 64
_MAX_NOTEBOOK_BYTES = 16 << 20


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


# -- the student's files -------------------------------------------------------------------------

@dataclass
class Found:
    """What a submission folder holds: notebooks by exercise, and what could not be used."""

    notebooks: dict[str, tuple[str, dict]] = field(default_factory=dict)  # exercise -> (name, nb)
    unreadable: dict[str, str] = field(default_factory=dict)  # display name -> why
    duplicates: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)  # notebooks of no exercise


def _skipped(rel: PurePosixPath) -> bool:
    return any(part.startswith(".") or part == "__MACOSX" for part in rel.parts)


def _candidates(folder: Path, scratch: Path) -> list[tuple[str, Path | None, str | None]]:
    """(display name, path or None, why unusable) for each notebook in ``folder`` or its zips."""
    out: list[tuple[str, Path | None, str | None]] = []
    for path in sorted(folder.rglob("*")):
        rel = PurePosixPath(path.relative_to(folder).as_posix())
        if _skipped(rel) or path.is_symlink() or not path.is_file():
            continue
        if path.suffix == ".ipynb":
            out.append((str(rel), path, None))
        elif path.suffix == ".zip":
            out.extend(_from_zip(path, str(rel), scratch))
        if len(out) >= _MAX_FILES:
            break
    return out


def _from_zip(path: Path, shown: str, scratch: Path) -> list[tuple[str, Path | None, str | None]]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        return [(shown, None, f"it is not a zip file we can open ({exc})")]
    out = []
    with archive:
        for index, info in enumerate(archive.infolist()[:_MAX_FILES]):
            rel = PurePosixPath(info.filename)
            if info.is_dir() or rel.suffix != ".ipynb" or _skipped(rel):
                continue
            name = f"{shown}:{info.filename}"
            if info.file_size > _MAX_NOTEBOOK_BYTES:
                out.append((name, None, f"it is larger than {_MAX_NOTEBOOK_BYTES >> 20} MiB"))
                continue
            target = scratch / f"{index}_{rel.name}"  # never the member's own path
            try:
                target.write_bytes(archive.read(info))
            except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
                out.append((name, None, f"it could not be taken out of the zip ({exc})"))
                continue
            out.append((name, target, None))
    return out


def find_notebooks(folder: Path, exercises: list[dict], scratch: Path) -> Found:
    """The exercise notebooks in ``folder`` (zips are opened into ``scratch``), by exercise.

    A notebook is recognised by its answer cells' grade_ids (nbgrader metadata), whatever its
    file name; an unreadable file is assigned to the exercise its file name names, if any.
    """
    from graders.checks import NotebookError, notebook_of, read_notebook

    by_name = {e["notebook"]: e["exercise"] for e in exercises}
    wanted = {e["exercise"] for e in exercises}
    found = Found()
    for shown, path, why in _candidates(Path(folder), scratch):
        nb = None
        if why is None and path is not None:
            if path.stat().st_size > _MAX_NOTEBOOK_BYTES:
                why = f"it is larger than {_MAX_NOTEBOOK_BYTES >> 20} MiB"
            else:
                try:
                    nb = read_notebook(path)
                except NotebookError as exc:
                    why = str(exc).replace(f"{path} is not a notebook", "it is not a notebook")
                except OSError as exc:
                    why = f"it could not be read ({exc.strerror})"
        if nb is None:
            found.unreadable[shown] = why or "it could not be read"
            continue
        exercise = notebook_of(nb)
        if exercise is None and PurePosixPath(shown).stem in by_name:
            exercise = by_name[PurePosixPath(shown).stem]
        if exercise not in wanted:
            found.others.append(shown)
        elif exercise in found.notebooks:
            found.duplicates.append(shown)
        else:
            found.notebooks[exercise] = (shown, nb)
    return found


# -- results.json ----------------------------------------------------------------------------

def _level(exercise: str) -> str:
    from graders.checks import NOTEBOOKS

    return NOTEBOOKS[exercise].split(":")[0]


def _check_test(check, result, number: str) -> dict[str, Any]:
    from graders.nbgrader_plumbing.cells import verdict_text

    title = check.title + (" (hidden check)" if check.hidden else "")
    return {
        "name": f"{_level(check.notebook)}: {title}",
        "number": number,
        "score": float(result.points_earned),
        "max_score": float(check.points),
        "status": "passed" if result.passed else "failed",
        "output": verdict_text(title, result.points_earned, check.points, result.message),
        "output_format": "text",
        "visibility": "after_published" if check.hidden else "visible",
        "tags": [check.id, check.notebook],
    }


def _written_test(exercise: str, written: dict, nb: dict | None, number: str) -> dict[str, Any]:
    grade_id, points = written["grade_id"], written["points"]
    answer = None
    for cell in (nb or {}).get("cells", []):
        if isinstance(cell, dict) and _nbgrader(cell).get("grade_id") == grade_id:
            answer = _text(cell).strip()
    what = grade_id.split("_", 1)[-1].replace("_", " ")
    lines = [f"Written answer ({what}): marked by hand, {points:g} points. The autograder gives "
             "it no score; your instructor marks it on Gradescope (a manually graded question "
             "of this assignment) against the course's mark scheme."]
    if nb is None:
        lines.append("Your notebook for this exercise was not found, so there is no answer.")
    elif not answer or answer.startswith("YOUR ANSWER HERE"):
        lines.append("Your notebook has no answer in this cell yet.")
    else:
        lines.append("Your answer, as handed in:\n\n" + answer)
    return {
        "name": f"{_level(exercise)}: written answer, {what} (marked by hand)",
        "number": number,
        "max_score": float(points),
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


def _not_graded(check, why: str, number: str) -> dict[str, Any]:
    from graders.checks import CheckResult

    return _check_test(check, CheckResult(check.id, False, 0, why), number)


def grade_folder(folder: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """results.json's content for the submission in ``folder`` (see the module docstring)."""
    from graders.checks import NOTEBOOKS, checks_for, grade_submission, submission_from_notebook
    from graders.sandbox.engine import grading_problem

    started = time.monotonic()
    tests: list[dict[str, Any]] = []
    summary: list[str] = []
    problem = grading_problem()
    with tempfile.TemporaryDirectory(prefix="checkpoint-lab-zip-") as scratch:
        found = find_notebooks(Path(folder), manifest["exercises"], Path(scratch))
    for index, entry in enumerate(manifest["exercises"], start=1):
        exercise = entry["exercise"]
        shown, nb = found.notebooks.get(exercise, (None, None))
        numbered = (f"{index}.{n}" for n in range(1, 100))
        checks = checks_for(exercise)
        if nb is None:
            tests.append(_missing_test(entry, found, next(numbered)))
            tests.extend(_not_graded(c, "Not graded: this exercise's notebook was not handed "
                                     "in, or could not be read (see above).", next(numbered))
                         for c in checks)
            summary.append(f"{NOTEBOOKS[exercise]}: not handed in or unreadable.")
        elif problem:
            tests.extend(_not_graded(c, "Not graded: the autograder could not start its sandbox "
                                     f"({problem}). This is not your fault: tell your "
                                     "instructor.", next(numbered)) for c in checks)
            summary.append(f"{NOTEBOOKS[exercise]}: {shown} (not graded: no sandbox here).")
        else:
            results = grade_submission(submission_from_notebook(nb, exercise), exercise)
            tests.extend(_check_test(c, results[c.id], next(numbered)) for c in checks)
            summary.append(f"{NOTEBOOKS[exercise]}: graded {shown}.")
        tests.extend(_written_test(exercise, w, nb, next(numbered)) for w in entry["written"])
    if found.duplicates:
        summary.append("Not graded, because another notebook of the same exercise came first "
                       f"(by name): {', '.join(found.duplicates)}.")
    if found.others:
        summary.append(f"Not exercise notebooks of this assignment: {', '.join(found.others)}.")
    auto = [t for t in tests if "score" in t]
    score = round(sum(t["score"] for t in auto), 4)
    out_of = sum(t["max_score"] for t in auto)
    written = sum(t["max_score"] for t in tests if "score" not in t)
    head = (f"Autograded: {score:g}/{out_of:g} points. The written answers ({written:g} points) "
            "are marked by hand and are not part of this score.")
    return {
        "score": score,
        "execution_time": max(1, round(time.monotonic() - started)),
        "output": "\n".join([head, *summary]),
        "output_format": "text",
        "tests": tests,
    }


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

