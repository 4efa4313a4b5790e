"""Benchmark: grading through nbgrader, measured in one run, printed as ratios.

1. Autograding one whole submission (both notebooks; nbgrader's own Autograde with the course's
   preprocessors, in process: every check in the sandbox, no kernel) divided by nbgrader
   autograding a one-cell notebook with its default configuration (same run, same method).
   Goal: at most 0.5x.
2. Grading 40 submissions with ``checkpoint-lab grade`` (parallel, sandboxed) against sequential
   stock ``nbgrader autograde`` of the same 40 (nbgrader's default preprocessors: each notebook
   run in a kernel; one command, nbgrader's own serial loop), each in its own copy of the course.
   Goal: at least 3x faster on 2 cores.

    .venv/bin/python benchmarks/bench_grading.py [--students 40] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from graders.nbgrader_plumbing.course import build_course, nbgrader_api  # noqa: E402
from graders.nbgrader_plumbing.grading_worker import quiet_sqlalchemy  # noqa: E402
from tests.fixtures.notebooks.submissions import (  # noqa: E402
    LEVEL1,
    LEVEL2,
    REFERENCE1,
    STARTER1,
    _level1,
    submission_notebook,
)

BIN = Path(sys.executable).parent
ENV = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
#: The mix of the 40: mostly honest attempts, some cheats and broken ones (no hang: a hang costs
#: the cell timeout in both ways of grading and says nothing about either).
MIX = ["reference", "starter", "fix_write_only", "fix_save_point_a_only", "reference",
       "cheat_json_load", "os_exit", "renamed_function", "deleted_test_cell", "reference"]


#: Appended to a copy of the course's config: nbgrader's own autograde (a kernel per notebook).
STOCK_AUTOGRADE = """
_NB = "nbgrader.preprocessors."
# (RestoreTestCells: nbgrader 0.9.6's OverwriteCells raises on the editable crash-point cell)
c.Autograde.sanitize_preprocessors = [_NB + n for n in (
    "ClearOutput", "DeduplicateIds", "OverwriteKernelspec")] + [
    "graders.nbgrader_plumbing.preprocessors.RestoreTestCells", _NB + "CheckCellMetadata"]
c.Autograde.autograde_preprocessors = [
    _NB + "Execute", _NB + "IgnorePattern", "nbconvert.preprocessors.ClearMetadataPreprocessor",
    _NB + "LimitOutput", _NB + "SaveAutoGrades", _NB + "AssignLatePenalties",
    _NB + "CheckCellMetadata"]
"""


def _one_cell_course(folder: Path):
    """A plain nbgrader course (default config) whose assignment is one notebook of one cell."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    nb = nbformat.v4.new_notebook()
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("assert 1 + 1 == 2")
    cell.metadata.nbgrader = {"grade": True, "grade_id": "one", "locked": True, "points": 1,
                              "schema_version": 3, "solution": False}
    nb.cells = [cell]
    (folder / "source" / "one").mkdir(parents=True)
    nbformat.write(nb, folder / "source" / "one" / "one.ipynb")
    config = Config()
    coursedir = CourseDirectory(config=config, root=str(folder))
    api = NbGraderAPI(coursedir=coursedir, config=config)
    assert api.generate_assignment("one", force=True, create=True)["success"]
    (folder / "submitted" / "s" / "one").mkdir(parents=True)
    shutil.copy(folder / "release" / "one" / "one.ipynb", folder / "submitted" / "s" / "one")
    return api


def _time_autograde(api, assignment: str, student: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = api.autograde(assignment, student, force=True, create=True)
        times.append(time.perf_counter() - started)
        assert result["success"], result.get("log", "")[-2000:]
    return statistics.median(times)


def _write_submissions(folder: Path, release: Path, count: int) -> Path:
    release2 = json.loads((release / f"{LEVEL2}.ipynb").read_text())
    release1 = json.loads((release / f"{LEVEL1}.ipynb").read_text())
    for i in range(count):
        name = MIX[i % len(MIX)]
        student = folder / f"s{i:02d}_{name}"
        student.mkdir(parents=True)
        (student / f"{LEVEL2}.ipynb").write_text(json.dumps(submission_notebook(name, release2)))
        level1 = REFERENCE1 if name == "reference" else STARTER1
        (student / f"{LEVEL1}.ipynb").write_text(json.dumps(_level1(release1, level1)))
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    quiet_sqlalchemy()
    os.environ["PATH"] = ENV["PATH"]
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        tmp = Path(tmp)
        course = build_course(tmp / "course")
        bench_one_submission(course, tmp, args.repeat)
        bench_many_submissions(course, tmp, args.students)
    return 0


def bench_one_submission(course, tmp: Path, repeat: int) -> None:
    """1. One submission against a one-cell notebook, same method, same run: print the ratios."""
    one_api = _one_cell_course(tmp / "onecell")
    api = nbgrader_api(course.root)
    _submit_the_reference(course)
    _time_autograde(one_api, "one", "s", 1)  # warm up imports and the kernel spec
    _time_autograde(api, "lesson2", "level2", 1)
    runs: dict[str, list[float]] = {"one": [], "level2": [], "both": []}
    for _ in range(repeat):  # interleaved, so that a busy moment hits every kind
        runs["one"].append(_time_autograde(one_api, "one", "s", 1))
        runs["level2"].append(_time_autograde(api, "lesson2", "level2", 1))
        runs["both"].append(_time_autograde(api, "lesson2", "both", 1))
    base, level2, both = (statistics.median(runs[k]) for k in ("one", "level2", "both"))
    print(f"one-cell notebook, nbgrader defaults:     {base:6.2f} s (median of {repeat},"
          f" interleaved; load average {os.getloadavg()[0]:.1f})")
    print(f"one submission, Level 2 notebook only:    {level2:6.2f} s  ratio "
          f"{level2 / base:4.2f}x")
    print(f"one submission, both notebooks:           {both:6.2f} s  ratio "
          f"{both / base:4.2f}x (goal <= 0.5x)")


def _submit_the_reference(course) -> None:
    """Students ``both`` (the reference in both notebooks) and ``level2`` (Level 2's only)."""
    release = course.release_dir
    release2 = json.loads((release / f"{LEVEL2}.ipynb").read_text())
    release1 = json.loads((release / f"{LEVEL1}.ipynb").read_text())
    for student, notebooks in [
        ("both", {LEVEL2: submission_notebook("reference", release2),
                  LEVEL1: _level1(release1, REFERENCE1)}),
        ("level2", {LEVEL2: submission_notebook("reference", release2)}),
    ]:
        folder = course.submitted_dir(student)
        folder.mkdir(parents=True)
        for name, nb in notebooks.items():
            (folder / f"{name}.ipynb").write_text(json.dumps(nb))


def bench_many_submissions(course, tmp: Path, students: int) -> None:
    """2. ``students`` submissions: checkpoint-lab grade against sequential nbgrader autograde."""
    subs = _write_submissions(tmp / "subs", course.release_dir, students)
    serial, dropped = _time_stock_autograde(course, subs, tmp / "serial")
    timings = _time_checkpoint_lab_grade(course, subs, tmp)
    print(f"{students} submissions, sequential stock nbgrader autograde: {serial:6.1f} s "
          f"({dropped} of them it could not grade)")
    for label, seconds in timings.items():
        print(f"{students} submissions, checkpoint-lab grade ({label}): {seconds:6.1f} s"
              f"  {serial / seconds:4.2f}x faster (goal >= 3x on 2 cores; "
              f"{os.cpu_count()} cores here)")


def _time_stock_autograde(course, subs: Path, serial_course: Path) -> tuple[float, int]:
    """Seconds stock ``nbgrader autograde`` takes on ``subs`` in a copy of the course, and how
    many submissions it could not grade."""
    shutil.copytree(course.root, serial_course)
    config = serial_course / "nbgrader_config.py"  # stock autograde: run every notebook
    config.write_text(config.read_text() + STOCK_AUTOGRADE)
    for student in sorted(p.name for p in subs.iterdir()):
        shutil.copytree(subs / student, serial_course / "submitted" / student / "lesson2")
    started = time.perf_counter()
    proc = subprocess.run([str(BIN / "nbgrader"), "autograde", "lesson2"], cwd=serial_course,
                          env=ENV, capture_output=True, text=True)
    serial = time.perf_counter() - started
    # stock nbgrader drops the submissions that kill its kernel (os._exit) or break it
    dropped = (proc.stdout + proc.stderr).count("There was an error processing assignment")
    return serial, dropped


def _time_checkpoint_lab_grade(course, subs: Path, tmp: Path) -> dict[str, float]:
    """Seconds ``checkpoint-lab grade`` takes on ``subs``, without and with feedback."""
    parallel_course = tmp / "parallel"
    shutil.copytree(course.root, parallel_course)
    timings = {}
    for label, extra in [("no feedback", ["--no-feedback"]), ("with feedback", [])]:
        started = time.perf_counter()
        proc = subprocess.run(
            [str(BIN / "checkpoint-lab"), "grade", str(subs), "--course", str(parallel_course),
             "--csv", str(tmp / "scores.csv"), "--quiet", *extra],
            env=ENV, capture_output=True, text=True)
        timings[label] = time.perf_counter() - started
        assert proc.returncode == 0, proc.stderr[-3000:]
    return timings


if __name__ == "__main__":
    sys.exit(main())
