"""A grading process killed from outside (SIGKILL: no handler runs) leaves no run behind it.

A submission that loops for ever, and forks a second looping process in a session of its own,
is graded in each tier: the bubblewrap tier, the uid tier (Docker's default profile as root,
simulated) and the observer alone (``sandbox=False``, the self-check where no sandbox can run).
Once both of its processes run, the grader is killed. Its observer (strace) must then die with
it, and the submission's first process with strace; in the bubblewrap tier the forked process
too (its PID namespace ends). Where nothing can end the forked process at once (no PID
namespace), it runs under a CPU-time limit, and the next grading's sweep ends it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graders.sandbox import box
from graders.sandbox.sweep import sweep_left_behind
from tests.conftest import ROOT, contained, docker_root, grading_env, require_sandbox, require_tools

pytestmark = [pytest.mark.sandbox, pytest.mark.timeout(300)]

_TIMEOUT = 40.0

#: Grades argv[1] once; argv[2] is "1" for the sandbox, "0" for the observer alone.
_GRADER = r"""
import sys
from fake_llm import load_scenario
from graders.sandbox import record
# checkpoint-lab-killed-grader
record(open(sys.argv[1]).read(), load_scenario("support-tickets"), timeout=TIMEOUT,
       sandbox=sys.argv[2] == "1")
""".replace("TIMEOUT", str(_TIMEOUT))

_LOOPS = (ROOT / "solutions" / "02_two_latent_failures.py").read_text() + """
def run_agent(*args, **kwargs):
    import os
    if os.fork() == 0:
        os.setsid()
        while True:
            pass
    while True:
        pass
"""


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every live process (zombies left out)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            found[int(name)] = (int(fields[1]), cmdline.decode(errors="replace"))
    return found


def _descendants(root: int) -> dict[int, str]:
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _cmd) in procs.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in procs:
            found[pid] = procs[pid][1]
        todo += children.get(pid, [])
    return found


def _is_run(cmd: str) -> bool:
    """Whether ``cmd`` is a Python process of the submission (not a program before it whose
    arguments name the bootstrap)."""
    return "_bootstrap.py" in cmd and os.path.basename(cmd.split(" ", 1)[0]).startswith("python")


def _alive(pids) -> list[int]:
    procs = _processes()
    return [pid for pid in pids if pid in procs]


def _cpu_limit(pid: int) -> str:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max cpu time"):
            return line.split()[3]
    return "?"


def _kill_grader_mid_run(tmp_path: Path, *, sandbox: bool, wrap: tuple[str, ...] = ()
                         ) -> dict[str, list]:
    """Start the grader (under ``wrap``), wait until both looping processes run, SIGKILL the
    grader; return the run's pids by role and its processes' CPU limits, read before the
    kill."""
    submission = tmp_path / "loops.py"
    submission.write_text(_LOOPS)
    submission.chmod(0o644)
    os.chmod(tmp_path, 0o755)
    outer = subprocess.Popen([*wrap, sys.executable, "-c", _GRADER, str(submission),
                              "1" if sandbox else "0"], cwd=ROOT, env=grading_env(tmp_path),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    deadline = time.monotonic() + 120
    tree: dict[int, str] = {}
    while time.monotonic() < deadline:
        tree = _descendants(outer.pid)
        if sum(_is_run(cmd) for cmd in tree.values()) >= 2:
            break
        if outer.poll() is not None:
            pytest.fail(f"the grader ended before the run looped: {outer.stderr.read()[-2000:]}")
        time.sleep(0.1)
    else:
        pytest.fail(f"the run never had two looping processes: {sorted(tree.values())}")
    strace = [p for p, cmd in tree.items() if cmd.startswith(box.find_tools().strace)]
    procs = _processes()
    roles = {"grader": sorted({procs[p][0] for p in strace if p in procs}), "strace": strace,
             "bwrap": [p for p, cmd in tree.items() if "bwrap" in cmd.split(" ", 1)[0]],
             "submission": sorted(p for p, cmd in tree.items() if _is_run(cmd))}
    assert len(roles["grader"]) == 1 and "killed-grader" in tree[roles["grader"][0]], tree
    roles["wrapper"] = [outer.pid]
    roles["cpu_limits"] = [_cpu_limit(pid) for pid in roles["submission"]]
    os.kill(roles["grader"][0], signal.SIGKILL)
    return roles


def _gone_soon(pids: list[int], seconds: float = 20) -> list[int]:
    deadline = time.monotonic() + seconds
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _alive(pids)


def _end(roles: dict[str, list[int]]) -> None:
    """End what is left of the run, then clear what the killed grader left on the machine as the
    next grading's start would (its run folders), so that no later test's grading finds it."""
    pids = [p for role, pids in roles.items() if role != "cpu_limits" for p in pids]
    for pid in _alive(pids):
        try:
            os.killpg(pid, signal.SIGKILL) if pid in roles["wrapper"] else os.kill(
                pid, signal.SIGKILL)
        except OSError:
            pass
    _gone_soon(pids)
    sweep_left_behind()


def test_a_killed_grader_leaves_nothing_of_a_bubblewrap_run(tmp_path):
    require_sandbox()
    if box.tier().name != "bubblewrap":
        pytest.skip("this machine grades in the uid tier; the next test covers it")
    roles = _kill_grader_mid_run(tmp_path, sandbox=True)
    try:
        first, forked = roles["submission"]
        left = _gone_soon(roles["strace"] + roles["bwrap"] + [first, forked])
        assert not left, f"processes outlived their killed grader: {left} of {roles}"
    finally:
        _end(roles)


def test_a_killed_grader_leaves_no_observer_and_a_cpu_bound_orphan_in_the_uid_tier(tmp_path):
    require_tools()
    if os.geteuid() != 0:
        pytest.skip("the uid tier is simulated as root")
    roles = _kill_grader_mid_run(tmp_path, sandbox=True, wrap=(*contained(), *docker_root()))
    try:
        first, forked = roles["submission"]
        left = _gone_soon(roles["strace"] + [first])
        assert not left, f"the observer or the run outlived its killed grader: {left} of {roles}"
        assert roles["cpu_limits"] == [str(box.cpu_limit(_TIMEOUT))] * 2, roles
    finally:
        _end(roles)


def test_a_killed_self_check_leaves_no_observer_and_a_cpu_bound_orphan(tmp_path):
    require_tools()
    roles = _kill_grader_mid_run(tmp_path, sandbox=False)
    try:
        first, forked = roles["submission"]
        left = _gone_soon(roles["strace"] + [first])
        assert not left, f"the observer or the run outlived its killed grader: {left} of {roles}"
        assert roles["cpu_limits"] == [str(box.cpu_limit(_TIMEOUT))] * 2, roles
    finally:
        _end(roles)
