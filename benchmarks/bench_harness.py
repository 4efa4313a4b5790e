"""Benchmark of the crash harness: what one crash point and a whole matrix cost on this machine.

Run it with ``.venv/bin/python benchmarks/bench_harness.py [--repeat N]``. Everything is measured
in this one run and compared with a bare fork-and-exit measured the same way, so the ratios
carry over to other machines. Goals: at most 5 ms a crash point, and 0.3 s for the whole
support-tickets matrix, the runner's python start included.
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

from graders.notebook import Harness, Submission  # noqa: E402

REFERENCE = ROOT / "solutions" / "02_two_latent_failures.py"


def bare_fork(times: int) -> float:
    """Median seconds of fork + _exit + waitpid from this process."""
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="repetitions (default 7)")
    args = parser.parse_args()
    sub = Submission.from_file(REFERENCE)
    import fake_llm  # noqa: F401 - a process of the runner's size forks like the runner

    fork = bare_fork(200)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"bare fork + _exit + waitpid:          {fork * 1000:6.2f} ms (median of 200)")
    for scenario in ("support-tickets", "long-migration"):
        for jobs in (1, 2):
            walls, points_cost, child, starts = [], [], [], []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                with Harness(sub, jobs=jobs) as harness:
                    harness.load_problem()
                    t1 = time.perf_counter()
                    verdicts = harness.run_matrix(scenario)
                    t2 = time.perf_counter()
                walls.append(time.perf_counter() - t0)
                starts.append(t1 - t0)
                assert all(v.passed for v in verdicts)
                points_cost.append((t2 - t1) / len(verdicts))
                with Harness(sub, jobs=1) as harness:
                    points = [p for p in harness.crash_points(scenario) if p.kind != "no_crash"]
                    child += [obs.elapsed for _, obs in harness._run(scenario, points)]
            n = len(verdicts)
            per_point = statistics.median(points_cost)
            one = statistics.median(child)
            print(f"{scenario}, jobs={jobs}: {n} crash points")
            goal = " (goal <= 0.3 s)" if scenario == "support-tickets" else ""
            print(f"  {scenario}, jobs={jobs}, whole matrix (median of {args.repeat}; runner "
                  f"start {statistics.median(starts):.3f} s), runner start included: "
                  f"{statistics.median(walls):6.3f} s{goal}")
            print(f"  {scenario}, jobs={jobs}, one crash point, matrix wall / points "
                  f"({per_point / fork:5.1f} x a bare fork): {per_point * 1000:6.2f} ms "
                  "(goal <= 5 ms)")
            print(f"  one crash point, fork to reap (median of {len(child)}): {one * 1000:6.2f} ms "
                  f"= {one / fork:5.1f} x a bare fork")
    return 0


if __name__ == "__main__":
    sys.exit(main())
