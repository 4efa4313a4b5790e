"""Run folders left by a grader killed from outside are swept; a live run's never are.

Real processes make the folders (:func:`graders.recording.run_folders.make`), one of them in a
PID namespace of its own (another grader beside this one, whose pids this process cannot see),
and are killed with SIGKILL; then the sweep runs, and, with a real grading run in the sandbox,
``checkpoint-lab check`` and ``checkpoint-lab grade`` themselves.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graders.recording import run_folders
from tests.conftest import ROOT, _child_of, contained, grading_env, require_tools

if not hasattr(os, "fork"):
    pytest.skip("run folders are swept where there is flock (POSIX)", allow_module_level=True)

#: Makes a run folder in argv[1], says its path, and holds it until killed.
_HOLDER = r"""
import sys, time
from graders.recording import run_folders
folder = run_folders.make("run", sys.argv[1])
print(folder.path, flush=True)
time.sleep(600)
"""


def _hold(root: Path, *prefix: str) -> tuple[subprocess.Popen, Path]:
    proc = subprocess.Popen([*prefix, sys.executable, "-c", _HOLDER, str(root)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), start_new_session=True)
    line = proc.stdout.readline().strip()
    assert line, f"the holder said nothing (exit {proc.poll()})"
    return proc, Path(line)


def _kill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_a_folder_whose_maker_was_killed_is_swept_and_a_live_ones_never(tmp_path):
    killed, left = _hold(tmp_path)
    beside, live = _hold(tmp_path, *contained())  # its pids are not this process's
    try:
        owner = json.loads((left / run_folders.OWNER_FILE).read_text())
        assert owner["pid"] == killed.pid and owner["started"], owner
        (left / "trace").write_text("what the run wrote")
        _kill(killed)
        removed = run_folders.sweep([str(tmp_path)])
        assert [r.split(" ")[0] for r in removed] == [str(left)], removed
        assert f"left by process {killed.pid}" in removed[0]
        assert not left.exists()
        assert live.is_dir(), "a live run's folder was removed"
        assert run_folders.sweep([str(tmp_path)]) == []
    finally:
        _kill(beside)
    deadline = time.monotonic() + 30  # its holder, unshare's child, dies just after unshare
    while live.exists() and time.monotonic() < deadline:
        removed += run_folders.sweep([str(tmp_path)])
        time.sleep(0.05)
    assert [r.split(" ")[0] for r in removed[1:]] == [str(live)]


def test_a_run_that_ends_removes_its_own_folder_and_one_kept_is_never_swept(tmp_path):
    ended = run_folders.make("run", tmp_path)
    ended.remove()
    kept = run_folders.make("run", tmp_path)
    kept.keep()
    assert not ended.path.exists()
    assert run_folders.sweep([str(tmp_path)]) == []
    assert kept.path.is_dir()


def test_the_sweep_touches_nothing_it_did_not_make(tmp_path):
    """Folders named like a run's but never marked (a dry run's, the uid locks'), a link to a
    left run folder, a file: all stay, and the link's target is not followed."""
    unmarked = tmp_path / "checkpoint-lab-dry-run-x"
    unmarked.mkdir()
    (tmp_path / "checkpoint-lab-note").write_text("x")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = run_folders.make("run", elsewhere)
    target.release()  # as if its maker had died
    (tmp_path / "checkpoint-lab-run-link").symlink_to(target.path)
    forged = tmp_path / "checkpoint-lab-run-forged"
    forged.mkdir()
    (forged / run_folders.OWNER_FILE).write_text("[]")  # an owner file that names no one
    assert run_folders.sweep([str(tmp_path)]) == []
    assert unmarked.is_dir() and target.path.is_dir() and forged.is_dir()
    assert (tmp_path / "checkpoint-lab-note").is_file()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a folder of another user")
def test_the_sweep_never_removes_another_users_folder(tmp_path):
    other = run_folders.make("run", tmp_path)
    other.release()
    os.chown(other.path, 65534, 65534)
    assert run_folders.sweep([str(tmp_path)]) == []
    assert other.path.is_dir()


# -- a real grading run, killed -----------------------------------------------------------------

#: Records argv[1] once in the sandbox (the grading of one scenario).
_GRADER = r"""
import sys
from fake_llm import load_scenario
from graders.sandbox import record
rec = record(sys.argv[1], load_scenario("support-tickets"), timeout=300)
print("ENDED", rec.ended, flush=True)
"""

#: A submission whose run waits for the test's word (SIGUSR1, :func:`_go_on`), at most 240 s,
#: before it does anything.
_WAITS = (ROOT / "solutions" / "02_two_latent_failures.py").read_text() + """
import signal as _signal, time as _time
_told = []
_signal.signal(_signal.SIGUSR1, lambda *_: _told.append(True))
_run_agent = run_agent
def run_agent(*args, **kwargs):
    deadline = _time.monotonic() + 240
    while not _told and _time.monotonic() < deadline:
        _time.sleep(0.05)
    return _run_agent(*args, **kwargs)
"""


def _started(pid: int) -> str | None:
    """The process's start time (/proc/PID/stat field 22), the same seen from any namespace."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _marked(proc: subprocess.Popen) -> set[Path]:
    """The run folders made by ``proc``'s grader (itself, or unshare's child when contained): by
    its pid and start time, so that a run of another test or another checkout never counts."""
    inner = _child_of(proc.pid)
    makers = {(proc.pid, _started(proc.pid))} | ({(1, _started(inner))} if inner else set())
    found = set()
    for root in run_folders.sweep_roots():
        for path in Path(root).glob(f"{run_folders.PREFIX}*"):
            try:
                owner = json.loads((path / run_folders.OWNER_FILE).read_text())
            except (OSError, ValueError, AttributeError):
                continue
            if (owner.get("pid"), str(owner.get("started"))) in makers:
                found.add(path)
    return found


def _grade(env: dict, *prefix: str) -> subprocess.Popen:
    return subprocess.Popen([*prefix, sys.executable, "-c", _GRADER, _WAITS],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=env, start_new_session=True)


def _waiting(pid: int) -> bool:
    """Whether ``pid`` runs the sandbox's bootstrap and catches SIGUSR1: the submission waits
    for it."""
    try:
        if b"/grader/_bootstrap.py" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return False
        caught = next(line.split()[1] for line in Path(f"/proc/{pid}/status").read_text()
                      .splitlines() if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return False
    return bool(int(caught, 16) & (1 << (signal.SIGUSR1 - 1)))


def _go_on(proc: subprocess.Popen) -> int:
    """Tell the submission that ``proc`` grades to go on, once it waits; how many processes
    were told."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text()
                                          .rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    below, told = {proc.pid}, 0
    while True:
        more = {pid for pid, parent in parents.items() if parent in below} - below
        if not more:
            break
        below |= more
    for pid in below - {proc.pid}:
        if _waiting(pid):
            try:
                os.kill(pid, signal.SIGUSR1)
                told += 1
            except OSError:
                pass
    return told


def _wait_for(condition, timeout: float = 120,
              what: str = "the grading run made no run folder in time"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    pytest.fail(what)


@pytest.mark.sandbox
@pytest.mark.timeout(600)
def test_a_grading_run_killed_leaves_a_folder_the_next_check_and_grade_remove(tmp_path):
    """A grading process SIGKILLed mid-run leaves its run folder; ``checkpoint-lab check``'s
    start removes it, while a grading run in another PID namespace goes on and keeps its own;
    ``checkpoint-lab grade``'s start removes the next one so left."""
    require_tools()
    env = grading_env(tmp_path)
    live = _grade(env, *contained())
    killed = _grade(env)
    try:
        left = _wait_for(lambda: _marked(killed))
        theirs = _wait_for(lambda: _marked(live))
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
        assert all(p.is_dir() for p in left), "a killed grader's folder is left until a sweep"
        check = subprocess.run([sys.executable, "-m", "graders.cli", "check", "no-such-exercise",
                                "--workspace", str(tmp_path)], capture_output=True, text=True,
                               cwd=tmp_path, env=env, timeout=120)
        assert check.returncode == 2, check.stderr  # it swept, then refused the name
        assert not [p for p in left if p.exists()], "check's start left the killed run's folder"
        assert all(p.is_dir() for p in theirs), "check's start removed a live run's folder"
        again = _grade(env)
        left = _wait_for(lambda: _marked(again))
        os.kill(again.pid, signal.SIGKILL)
        again.wait(timeout=30)
        grade = subprocess.run([sys.executable, "-m", "graders.cli", "grade", str(tmp_path / "x"),
                                "--course", str(tmp_path / "no-course"), "--csv",
                                str(tmp_path / "g.csv")], capture_output=True, text=True,
                               cwd=tmp_path, env=env, timeout=300)
        assert grade.returncode == 2, grade.stderr
        assert not [p for p in left if p.exists()], "grade's start left the killed run's folder"
        # other runs on this machine (another worker's, another checkout's) may leave some too
        assert re.search(r"cleared \d+ item\(s\) of residue of grading killed before it ended",
                         grade.stdout), grade.stdout
        assert all(p.is_dir() for p in theirs), "grade's start removed a live run's folder"
        _wait_for(lambda: _go_on(live), what="the live run's submission did not wait")
        out, err = live.communicate(timeout=300)
        assert "ENDED finished" in out, err[-2000:]
        assert not [p for p in theirs if p.exists()], "a run that ended left its folder"
    finally:
        for proc in (live, killed):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
