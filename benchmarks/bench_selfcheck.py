"""Benchmark of the self-check's observers, measured in one run and printed as ratios.

For each level: the self-check of its reference (every visible check, as ``checkpoint-lab
check`` runs them) through the in-process recorder, divided by the same self-check through
strace + bubblewrap (grading's sandbox). Goal: at most 1x. The two are timed in turns, so a
machine whose load changes meanwhile weighs on both alike; each figure is a median.

    .venv/bin/python benchmarks/bench_selfcheck.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graders.checks import NOTEBOOKS, grade_submission  # noqa: E402
from graders.sandbox import sandbox_problem  # noqa: E402
from graders.sandbox.engine import OBSERVER_ENV  # noqa: E402

#: The answer cell each level's reference goes in (Levels 1 and 2 take the whole source).
CELLS = {"03_power_cut": "l3_save_checkpoint", "04_parallel_tool_calls": "l4_run_agent"}


def reference(name: str) -> str:
    code = (ROOT / "solutions" / f"{name}.py").read_text()
    return f"# --- answer cell {CELLS[name]} ---\n{code}" if name in CELLS else code


def self_check(name: str, source: str, observer: str) -> float:
    """Seconds one self-check of ``source`` takes through ``observer``."""
    os.environ[OBSERVER_ENV] = observer
    started = time.perf_counter()
    results = grade_submission(source, name, include_hidden=False, allow_fallback=True)
    elapsed = time.perf_counter() - started
    failed = [k for k, r in results.items() if not r.passed]
    assert not failed, f"{name}'s reference failed {failed} through {observer}"
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    problem = sandbox_problem()
    if problem:
        print(f"cannot compare with the sandbox here: {problem}")
        return 1
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    for name in NOTEBOOKS:
        source = reference(name)
        self_check(name, source, "inprocess")  # warm caches and imports on both sides
        self_check(name, source, "sandbox")
        times: dict[str, list[float]] = {"inprocess": [], "sandbox": []}
        for _ in range(args.repeat):
            for observer in times:
                times[observer].append(self_check(name, source, observer))
        recorded, boxed = (statistics.median(times[o]) for o in ("inprocess", "sandbox"))
        print(f"{name}: self-check in-process {recorded * 1000:7.1f} ms, strace + bubblewrap "
              f"{boxed * 1000:7.1f} ms: ratio {recorded / boxed:4.2f}x (goal <= 1x)")
    os.environ.pop(OBSERVER_ENV, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
