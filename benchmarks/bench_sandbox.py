"""Benchmark of the sandboxed, traced grader, measured in one run and printed as ratios.

1. Every crash state of one scenario (one sandboxed, traced run, then the replay and the checks
   of every moment) divided by one plain run of the same loop (a fresh Python running the
   reference against the fake model in its own process), in rounds that run both (the median
   of the rounds' ratios). Goal: at most 1.3x.
2. Level 3: enumerating every power-cut state of one submission (from its recorded run) divided
   by the Level 2 crash matrix of the same run (replay and checks of every kill state). Goal: at
   most 1x.
3. Starting the sandbox (bubblewrap, prlimit, setpriv, running ``true``) divided by starting a
   bare process (``true``), and the sandbox's share of grading one whole submission (both
   notebooks, every check). Goal: the sandbox at most 10 % of a submission's grading time.
4. Level 2's atomic-save kinds with the runs beside the recorded one (a restart per distinct set
   of leftovers, a full disk) divided by the same kinds without them, for one scenario, and how
   many restarts that is against the crash states a restart per state would cost; once more for
   a save of thousands of 7-byte writes (choosing its restart once compared every pair of its
   crash moments: the whole submission took 61.6 s to grade, 3.4 s now).

    .venv/bin/python benchmarks/bench_sandbox.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fake_llm import load_scenario  # noqa: E402
from graders.checks import grade_submission  # noqa: E402
from graders.judge.checkpoint_rules import check  # noqa: E402
from graders.judge.matrix import (  # noqa: E402
    build_matrix,  # noqa: E402
    judge,  # noqa: E402
)
from graders.judge.power import judge_power  # noqa: E402
from graders.sandbox import record, sandbox_problem  # noqa: E402
from graders.sandbox.box import GRADER, _python, find_tools  # noqa: E402

REFERENCE = ROOT / "solutions" / "02_two_latent_failures.py"
PLAIN = """
import os, sys, tempfile
sys.path.insert(0, {root!r})
import fake_llm
sc = fake_llm.load_scenario({scenario!r})
ns = {{"__name__": "submission"}}
exec(compile(open({ref!r}).read(), "ref", "exec"), ns)
with tempfile.TemporaryDirectory(dir={tmp!r}) as folder:  # gone after the run, as a sandbox's
    os.chdir(folder)
    ns["run_agent"](sc.task, sc.tools, sc.model(), sc.executor())
    os.chdir("/")
"""


def median_time(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def sandbox_start_command() -> list[str]:
    tools = find_tools()
    box = [tools.bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr",
           "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
           "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev",
           "--tmpfs", "/tmp", "--tmpfs", "/work", "--chdir", "/work", "--clearenv"]
    if os.geteuid() != 0:
        box += ["--unshare-user"]
    limits = [tools.prlimit, "--nproc=128", "--as=1073741824", "--"]
    drop = ([tools.setpriv, "--reuid=61999", "--regid=61999", "--clear-groups",
             "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]
            if os.geteuid() == 0 else [])
    return [*box, "--", *limits, *drop, "/usr/bin/true"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    problem = sandbox_problem()
    if problem:
        print(f"cannot benchmark the sandbox here: {problem}")
        return 1
    source = REFERENCE.read_text()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; submissions "
          f"run on {_python()}")
    for name in ("support-tickets", "long-migration"):
        bench_crash_states(name, source, args.repeat)
    for name in ("support-tickets", "long-migration"):
        bench_power_cut(name, source, args.repeat)
    bench_sandbox_start(source, args.repeat)
    for name in ("support-tickets", "long-migration"):
        bench_extra_runs(name, source, max(3, args.repeat // 3))
    # thousands of torn-write moments: choosing the restarts must stay linear in them
    many = (ROOT / "tests" / "fixtures" / "02_two_latent_failures" / "adversarial" /
            "passes_many_small_writes.py").read_text()
    bench_extra_runs("long-migration", many, 3, label="7-byte writes")
    return 0


def bench_crash_states(name: str, source: str, repeat: int) -> None:
    """1. Every crash state of scenario ``name`` against one plain run of the same loop."""
    tmp = "/dev/shm" if os.path.isdir("/dev/shm") else None
    scenario = load_scenario(name)
    plain_code = PLAIN.format(root=str(ROOT), scenario=name, ref=str(REFERENCE), tmp=tmp)
    record(source, scenario)  # warm caches

    def plain():
        subprocess.run([sys.executable, "-I", "-c", plain_code], check=True)

    def graded():
        verdicts, _ = judge(record(source, scenario), scenario)
        assert all(v.passed for v in verdicts)

    recorded: list = []

    def only_record():
        recorded.append(record(source, scenario))

    # interleaved, each round's ratio from its own three runs: a machine that gets busier or
    # quieter meanwhile weighs on both sides of a ratio alike (the median of the rounds' ratios)
    rounds = [[median_time(fn, 1) for fn in (plain, graded, only_record)] for _ in range(repeat)]
    plain_s, graded_s, record_s = (statistics.median(r[i] for r in rounds) for i in range(3))
    ratio = statistics.median(r[1] / r[0] for r in rounds)
    verdicts, matrix = judge(recorded[-1], scenario)
    moments = sum(len(pm.moments) for pm in matrix.points)
    print(f"{name}: {len(verdicts)} crash points, {moments} crash states")
    print(f"  one plain run of the loop:          {plain_s * 1000:7.1f} ms")
    print(f"  {name}, every crash state (record + judge): {graded_s * 1000:7.1f} ms  ratio "
          f"{ratio:4.2f}x (goal <= 1.3x); the run in the sandbox alone {record_s * 1000:.1f} ms")
    lines = recorded[-1].trace.splitlines()
    loaded = "".join(f"\\x{b:02x}" for b in f"{GRADER}/submission.py".encode())  # as -xx
    before = next((i for i, line in enumerate(lines) if loaded in line), len(lines))
    # each traced call stops the run twice for strace: the count a busy machine multiplies
    print(f"  {name}: {len(lines)} traced calls a run, {before} of them before the code is "
          "loaded (the sandbox, prlimit, setpriv, Python and the bootstrap)")


def bench_power_cut(name: str, source: str, repeat: int) -> None:
    """2. Level 3's power-cut states of one recorded run against its kill matrix."""
    level3 = (ROOT / "solutions" / "03_power_cut.py").read_text()
    loop = source[source.index("def run_agent"):]
    scenario = load_scenario(name)
    rec = record(level3 + "\n\n" + loop, scenario)
    kill_s = median_time(lambda: judge(rec, scenario), repeat)
    matrix = build_matrix(rec, scenario)
    power_s = median_time(lambda: judge_power(matrix, scenario, check), repeat)
    print(f"{name}, Level 3 reference: power-cut enumeration {power_s * 1000:6.1f} ms vs the "
          f"kill matrix of the same run {kill_s * 1000:6.1f} ms: ratio "
          f"{power_s / kill_s:4.2f}x (goal <= 1x)")


def bench_sandbox_start(source: str, repeat: int) -> None:
    """3. Starting the sandbox against a bare process, and its share of grading a submission."""
    bare = median_time(lambda: subprocess.run(["/usr/bin/true"], check=True), repeat * 3)
    boxed_cmd = sandbox_start_command()
    boxed = median_time(lambda: subprocess.run(boxed_cmd, check=True), repeat * 3)
    level1 = (ROOT / "solutions" / "01_incomplete_checkpoint.py").read_text()
    level2 = source

    def whole():
        r1 = grade_submission(level1, "01_incomplete_checkpoint")
        r2 = grade_submission(level2, "02_two_latent_failures")
        assert all(r.passed for r in (*r1.values(), *r2.values()))

    whole_s = median_time(whole, max(3, repeat // 2))
    # Level 2: per scenario (two) the run, a restart (the reference leaves one kind of
    # leftover) and a full disk; Level 1: the save's run and the MISSING_FIELDS cell
    sandboxes = 2 * 3 + 2
    print(f"bare process start (true):            {bare * 1000:7.2f} ms")
    print(f"sandbox start (bwrap+prlimit+setpriv): {boxed * 1000:7.2f} ms  ratio "
          f"{boxed / bare:4.1f}x a bare start")
    print(f"grading one whole submission (both notebooks, every check): {whole_s:5.2f} s; its "
          f"{sandboxes} sandbox starts are {sandboxes * (boxed - bare) / whole_s * 100:4.1f} % "
          "of it (goal <= 10 %)")


def bench_extra_runs(name: str, source: str, repeat: int, label: str = "reference") -> None:
    """4. The atomic-save kinds with restarts and a full disk against the same without."""
    from graders.checks.two_latent_failures import ATOMIC_KINDS
    from graders.grading.recorded import TracedHarness
    from graders.submission import Submission

    submission = Submission.from_source(source, name="reference")
    one_shot = {"no_crash", "torn_write", "killed_before_rename"}
    found: list = []

    def grade(kinds):
        found[:] = TracedHarness(submission).run_matrix(name, kinds)

    without = median_time(lambda: grade(one_shot), repeat)
    states = sum(v.evidence.get("moments", 1) for v in found if v.kind != "no_crash")
    with_extra = median_time(lambda: grade({"no_crash", *ATOMIC_KINDS}), repeat)
    restarts = sum(1 for v in found if v.kind == "restart")
    print(f"{name} ({label}): the atomic-save kinds {without * 1000:6.0f} ms; with {restarts} "
          f"restart(s) (for {states} crash states) and a full disk {with_extra * 1000:6.0f} ms: "
          f"ratio {with_extra / without:4.2f}x")


if __name__ == "__main__":
    sys.exit(main())
