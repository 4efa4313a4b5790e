"""Benchmark: what grading safely costs, measured in one run, printed as ratios.

``checkpoint-lab grade`` on N submissions (default 10) with its trace on
(``CHECKPOINT_LAB_GRADE_TRACE``): the share of the whole run spent making the batch safe:
(1) the hand-ins' copy and the shadow course (``batch-start`` to ``batch-opened``;
reading and staging the hand-ins, which grading always did, is printed apart), and (2) the
commits, each student's folders swapped in and gradebook rows copied (``committing:<student>``
to ``done:<student>``, summed). Goal: both under 0.1x of the run.

    .venv/bin/python benchmarks/bench_grade_safety.py [--students 10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graders.nbgrader_plumbing.course import build_course  # noqa: E402
from graders.nbgrader_plumbing.durable import TRACE_ENV  # noqa: E402
from tests.fixtures.notebooks.submissions import SUBMISSIONS, write_all  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        course = build_course(scratch / "course")
        names = [n for n in SUBMISSIONS if n not in ("hang", "os_exit")][:args.students]
        handins = write_all(scratch / "handins", course.release_dir, names, not_json=None)
        trace = scratch / "trace.txt"
        env = dict(os.environ, **{TRACE_ENV: str(trace)},
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
        started = time.time()
        subprocess.run([sys.executable, "-m", "graders.cli", "grade", str(handins), "--course",
                        str(course.root), "--csv", str(scratch / "g.csv"), "--quiet"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        total = time.time() - started
        at = {}
        for line in trace.read_text().splitlines():
            name, when = line.rsplit(" ", 1)
            at.setdefault(name, float(when))
        setup = at["batch-opened"] - at["batch-start"]
        plan = at["planned"] - at["batch-opened"]
        commits = sum(at[f"done:{s}"] - at[f"committing:{s}"] for s in names
                      if f"done:{s}" in at)
        print(f"{len(names)} students graded in {total:.1f} s")
        print(f"the hand-ins' copy and shadow course: {setup / total:.3f}x of the run "
              "(goal: at most 0.1)")
        print(f"reading the hand-ins and staging them in the shadow: {plan / total:.3f}x")
        print(f"commits (folders swapped, gradebook rows): {commits / total:.3f}x of the run "
              "(goal: at most 0.1)")


if __name__ == "__main__":
    main()
