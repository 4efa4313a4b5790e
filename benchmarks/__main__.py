"""Every benchmark in one command, then each ratio with its goal beside it.

    .venv/bin/python -m benchmarks [--quick] [--only sandbox --only lessons ...]
    checkpoint-lab dev bench [--quick]

Each benchmark runs as its own script, one after the other (each measures both sides of its
ratios in its own run, side by side, so the machine's load weighs on both alike); its output is
shown as it comes. At the end, every line that states a goal, marked ``meets`` or ``MISSES``.
``--quick`` takes fewer rounds and 4 submissions instead of 40: a first look, noisier.
Exit status 1 when a benchmark could not run (a goal missed is reported, not a failure).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: name -> (its arguments, its arguments with --quick), in the order they run.
BENCHMARKS = {
    "sandbox": ([], ["--repeat", "3"]),
    "grading": ([], ["--repeat", "2", "--students", "4"]),
    "lessons": ([], ["--repeat", "1"]),
    "selfcheck": ([], ["--repeat", "3"]),
    "tiers": ([], ["--repeat", "2"]),
    "harness": ([], ["--repeat", "2"]),
    "grade_safety": ([], ["--students", "3"]),
}
_NUMBER = r"(\d+(?:\.\d+)?)"
_GOAL = re.compile(rf"goal:?\s*(<=|>=|at most|at least)\s*{_NUMBER}")


def verdict(line: str) -> str | None:
    """``meets`` or ``MISSES`` for a line that states a measured figure and its goal, else
    None: the figure is the last number before ``goal``, compared as the goal says."""
    goal = _GOAL.search(line)
    if not goal:
        return None
    before = re.findall(_NUMBER, line[:goal.start()])
    if not before:
        return None
    value, limit = float(before[-1]), float(goal.group(2))
    ok = value <= limit if goal.group(1) in ("<=", "at most") else value >= limit
    return "meets" if ok else "MISSES"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds: a first look")
    parser.add_argument("--only", action="append", choices=list(BENCHMARKS), metavar="NAME",
                        help=f"only this benchmark (repeatable): {', '.join(BENCHMARKS)}")
    args = parser.parse_args(argv)
    goals: list[tuple[str, str]] = []
    failed: list[str] = []
    started = time.perf_counter()
    for name in args.only or BENCHMARKS:
        extra = BENCHMARKS[name][1 if args.quick else 0]
        print(f"== {name} (benchmarks/bench_{name}.py {' '.join(extra)})".rstrip(), flush=True)
        proc = subprocess.Popen([sys.executable, str(HERE / f"bench_{name}.py"), *extra],
                                cwd=HERE.parent, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            print(f"   {line}", end="", flush=True)
            if verdict(line):
                goals.append((name, line.strip()))
        if proc.wait() != 0:
            failed.append(f"{name} (exit status {proc.returncode})")
    print(f"\nWhere the project stands ({time.perf_counter() - started:.0f} s, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}):")
    for name, line in goals:
        print(f"  {verdict(line):6} {name:9} {line}")
    for item in failed:
        print(f"  could not run: {item}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
