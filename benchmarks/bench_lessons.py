"""How long each lesson notebook takes to Run All, next to an empty notebook (kernel start).

Both are executed the same way, by nbclient with a fresh ``python3`` kernel each time, in one
run of this script, so the ratio says how much the lesson's own work adds to starting a kernel.
Each lesson's ratio is the median over rounds of (its time / the empty notebook's time just
before it).
Goal: every lesson at most 2x an empty notebook.

    .venv/bin/python benchmarks/bench_lessons.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
GOAL = 2.0


def run_all(nb: nbformat.NotebookNode, workdir: str) -> float:
    """Seconds to execute ``nb`` top to bottom in a fresh kernel, start and shutdown included."""
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": workdir}})
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    if errors:
        raise SystemExit(f"a notebook raised {errors[0].ename}: {errors[0].evalue}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds (medians are printed)")
    parser.add_argument("--lesson", action="append", metavar="PREFIX",
                        help="only the lessons whose file name starts so (repeatable), e.g. 04")
    args = parser.parse_args(argv)
    lessons = [p for p in sorted((ROOT / "lessons").glob("*.ipynb"))
               if not args.lesson or p.name.startswith(tuple(args.lesson))]
    if not lessons:
        print("no lesson notebooks in lessons/", file=sys.stderr)
        return 1
    empty = nbformat.v4.new_notebook()
    empty.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}
    baselines: list[float] = []
    seconds: dict[str, list[float]] = {p.name: [] for p in lessons}
    ratios: dict[str, list[float]] = {p.name: [] for p in lessons}
    with tempfile.TemporaryDirectory() as workdir:
        run_all(nbformat.from_dict(empty), workdir)  # warm the disk cache, not measured
        # Each round measures the empty notebook right before each lesson, so a machine that
        # gets busier or quieter during the run shifts both sides of a ratio alike.
        for _ in range(args.repeat):
            for path in lessons:
                baseline = run_all(nbformat.from_dict(empty), workdir)
                elapsed = run_all(nbformat.read(path, as_version=4), workdir)
                baselines.append(baseline)
                seconds[path.name].append(elapsed)
                ratios[path.name].append(elapsed / baseline)
    print(f"empty notebook (kernel start + shutdown): {statistics.median(baselines):.2f} s "
          f"(median of {len(baselines)})")
    print(f"{'lesson':<48} {'Run All':>8} {'ratio':>6}   (medians of {args.repeat})")
    worst = 0.0
    for name in seconds:
        ratio = statistics.median(ratios[name])
        worst = max(worst, ratio)
        print(f"{name:<48} {statistics.median(seconds[name]):>7.2f}s {ratio:>5.2f}x "
              f"(goal <= {GOAL:g}x)")
    print(f"worst ratio {worst:.2f}x (goal: at most {GOAL:g}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
