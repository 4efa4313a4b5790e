"""Benchmark of the sandbox's tiers, measured in one run and printed as a ratio.

Grading one submission (Level 2's reference, every check, hidden ones included) in the uid tier
(no namespaces: Docker's default profile as root, simulated as ``tests/conftest.py``'s
``docker_root`` does, where strace runs as the submission's uid) divided by the same grading in
the bubblewrap tier on this machine. Goal: at most 1.2x. The bubblewrap tier is timed before and
after the uid tier (the machine is shared: the median of both rounds is taken). The uid tier
runs with its disk budget on (:mod:`graders.sandbox.uid_budget`); the watcher's share is the CPU
time its threads spent looking, over the uid tier's grading time.

    .venv/bin/python benchmarks/bench_tiers.py [--repeat 5]   (as root, Linux)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graders.checks import grade_submission  # noqa: E402
from graders.sandbox import box  # noqa: E402

EXERCISE = "02_two_latent_failures"
SOURCE = (ROOT / "solutions" / f"{EXERCISE}.py").read_text()


def grade_times(repeat: int) -> tuple[str, list[float], float]:
    """(the tier, seconds of each grading of the reference, seconds the disk budget's watchers
    spent in them) in this process."""
    from graders.sandbox import uid_budget

    watched = [0.0]
    stop = uid_budget.Watcher.stop

    def counted(watcher):
        over = stop(watcher)
        watched[0] += watcher.spent
        return over

    uid_budget.Watcher.stop = counted
    chosen = box.tier()
    if isinstance(chosen, str):
        raise SystemExit(f"cannot benchmark here: {chosen}")
    grade_submission(SOURCE, EXERCISE)  # warm: imports, the tier's probe, the filters
    watched[0] = 0.0
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        results = grade_submission(SOURCE, EXERCISE)
        times.append(time.perf_counter() - started)
        if not all(r.passed for r in results.values()):
            raise SystemExit(f"the reference did not pass in the {chosen.name} tier: "
                             + "; ".join(r.message for r in results.values() if not r.passed))
    return chosen.name, times, watched[0]


def uid_tier_times(repeat: int) -> tuple[str, list[float], float]:
    """The same, in a child process under the docker-root simulation (the uid tier)."""
    from tests.conftest import docker_root

    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run(
            docker_root(sys.executable, __file__, "--child", "--repeat", str(repeat)),
            capture_output=True, text=True, cwd=ROOT, timeout=1800,
            env=dict(os.environ, HOME=home, PYTHONPATH=str(ROOT)))
    if done.returncode != 0:
        raise SystemExit(f"the uid tier could not be timed: {done.stderr.strip()[-1500:]}")
    name, times, watched = json.loads(done.stdout.strip().splitlines()[-1])
    return name, times, watched


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(grade_times(args.repeat)))
        return 0
    if os.geteuid() != 0:
        print("cannot benchmark the uid tier here: it is for a grader running as root")
        return 1
    first, before, _ = grade_times(args.repeat)
    name, uid, watched = uid_tier_times(args.repeat)
    _, after, _ = grade_times(args.repeat)
    if first != "bubblewrap" or name != "uid":
        print(f"expected the bubblewrap tier here and the uid tier simulated, got {first} and "
              f"{name}")
        return 1
    bwrap = statistics.median(before + after)
    ours = statistics.median(uid)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; grading "
          f"{EXERCISE}'s reference (every check), median of {args.repeat}")
    print(f"  bubblewrap tier: {bwrap:.2f} s   uid tier: {ours:.2f} s")
    print(f"uid tier / bubblewrap tier: {ours / bwrap:.2f}x  (goal: at most 1.2x)")
    print(f"disk budget watcher's share of the uid tier's time: {watched / sum(uid):.1%} "
          f"({watched:.2f} s of CPU in {sum(uid):.2f} s of grading)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
