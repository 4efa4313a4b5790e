"""What one run may do to the runs beside it in the uid tier (issue 29.1-29.3), for real.

Runs are recorded side by side (threads of one grader, as a batch's workers are) under the
Docker-root simulation (:func:`tests.conftest.docker_root`), in a PID namespace of its own, with
Landlock as the kernel has it and switched off (a seccomp filter of the test's own answers
ENOSYS to ``landlock_create_ruleset``, as a kernel before 5.13 does). An honest neighbour is
recorded beside each harm and alone: its recording and its verdicts are the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import pytest

from graders.sandbox import box, uid_walls
from tests.conftest import (
    DOCKER_CAPS,
    LINKED,
    ODD_METADATA,
    POINTS,
    ROOT,
    STUDENTS,
    contained,
    docker_root,
    grade_catalog_batch,
    grading_env,
    require_tools,
    said_by,
)

pytestmark = pytest.mark.sandbox

if os.geteuid() != 0:
    pytest.skip("the uid tier is for a grader running as root", allow_module_level=True)

#: Records argv[1] (a JSON list of submissions) in threads on the reference's scenario, judges
#: each, and prints what was recorded and what the run's uids left behind.
_RUNNER = r"""
import json, os, sys, threading
from fake_llm import load_scenario
from graders.judge.matrix import judge
from graders.sandbox import box, record, uids
from graders.sandbox.session import Session

used = []
_reserve = uids.reserve
def reserve(*args):
    held = _reserve(*args)
    used.append(held.uid)
    return held
uids.reserve = reserve
folders = []
_stop = Session.stop
def stop(self):
    folders.extend(str(f) for f in (self.run_dir, self.tmp_parent) if f is not None)
    _stop(self)
Session.stop = stop

if sys.argv[2] == "one-filesystem":  # a machine whose /dev/shm is too small to use
    from graders.sandbox import uid_tier
    _temp = uid_tier.roots()[0]
    uid_tier.roots = lambda: (_temp, _temp)
scenario = load_scenario("support-tickets")
jobs = json.loads(sys.argv[1])
results = [None] * len(jobs)
def run(i):
    rec = record(jobs[i], scenario, timeout=60)
    verdicts, _ = judge(rec, scenario)
    results[i] = {"ended": rec.ended, "detail": rec.detail, "over_budget": rec.over_budget,
                  "trace_lost": rec.trace_lost, "protocol": rec.protocol,
                  "stdout": rec.stdout_tail, "stderr": rec.stderr_tail[-1500:],
                  "verdicts": [[v.point, v.passed] for v in verdicts],
                  "messages": [v.message for v in verdicts],
                  "error": rec.error}
threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
for t in threads: t.start()
for t in threads: t.join()

def owner(path):
    try:
        return os.stat(path, follow_symlinks=False).st_uid
    except OSError:
        return None
left = []
for folder in ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue"):
    try:
        left += [os.path.join(folder, n) for n in os.listdir(folder)
                 if owner(os.path.join(folder, n)) in used]
    except OSError:
        pass
for table in ("shm", "msg", "sem"):
    lines = open(f"/proc/sysvipc/{table}").read().splitlines()
    head = lines[0].split()
    for line in lines[1:]:
        row = dict(zip(head, line.split()))
        if int(row["uid"]) in used or int(row["cuid"]) in used:
            left.append(f"{table} {line}")
left += [f for f in folders if os.path.lexists(f)]
left += [f"process {p}" for p in os.listdir("/proc") if p.isdigit() and owner(f"/proc/{p}") in used]
chosen = box.tier()
print(json.dumps({"tier": chosen.__dict__, "results": results, "left": left}))
"""

#: Loads a seccomp filter that answers ENOSYS to Landlock's calls (a kernel without Landlock),
#: then runs the rest of argv.
_NO_LANDLOCK = r"""
import errno, os, sys
import pyseccomp as sc
f = sc.SyscallFilter(sc.ALLOW)
for name in ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"):
    f.add_rule(sc.ERRNO(errno.ENOSYS), name)
f.load()
os.execv(sys.argv[1], sys.argv[1:])
"""

HONEST = (ROOT / "solutions" / "02_two_latent_failures.py").read_text()
CATALOG = ROOT / "tests" / "fixtures" / "02_two_latent_failures" / "adversarial"


def side_by_side(*sources: str, landlock: bool = True, one_filesystem: bool = False,
                 names: Path | None = None) -> dict:
    """Record ``sources`` side by side in the uid tier; the grader's command line ``names`` a
    folder (as the grade command names the course and the submissions)."""
    require_tools()
    inner = [sys.executable, "-c", _RUNNER, json.dumps(list(sources)),
             "one-filesystem" if one_filesystem else "as-is", str(names or ROOT)]
    caps = DOCKER_CAPS
    if not landlock:  # as the issue found it: with the capability the grader's message advises
        inner = [sys.executable, "-c", _NO_LANDLOCK, *inner]
        caps = (*DOCKER_CAPS, "sys_ptrace")
    cmd = [*contained(), *docker_root(*inner, caps=caps)]
    with tempfile.TemporaryDirectory() as home:
        env = grading_env(Path(home))
        if not landlock:
            env[box.WITHOUT_LANDLOCK_ENV] = "1"  # grade --without-landlock
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT,
                              env=env, start_new_session=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["tier"]["name"] == "uid"
    assert (found["tier"]["landlock"] >= 2) == landlock, found["tier"]
    return found


def harm(name: str) -> str:
    return (CATALOG / f"{name}.py").read_text()


LANDLOCK = [pytest.param(True, id="landlock"), pytest.param(False, id="no-landlock")]


@pytest.fixture(scope="module")
def alone():
    return side_by_side(HONEST)["results"][0]


def _honest_unharmed(neighbour: dict, alone: dict) -> None:
    assert neighbour["ended"] == "finished", neighbour
    assert not neighbour["trace_lost"] and not neighbour["over_budget"], neighbour
    assert neighbour["verdicts"] == alone["verdicts"]
    assert all(passed for _, passed in alone["verdicts"]), alone["verdicts"]


@pytest.mark.parametrize("landlock", LANDLOCK)
@pytest.mark.parametrize("filler", ["cheat_fallocate_many_files", "cheat_many_empty_files"])
def test_a_run_that_fills_the_disk_is_stopped_named_and_harms_no_neighbour(filler, landlock,
                                                                          alone):
    found = side_by_side(harm(filler), HONEST, HONEST, landlock=landlock)
    cheat, *neighbours = found["results"]
    assert cheat["over_budget"] and cheat["over_budget"].startswith("filled the disk"), cheat
    assert cheat["verdicts"] and not any(passed for _, passed in cheat["verdicts"])
    for neighbour in neighbours:
        _honest_unharmed(neighbour, alone)
    assert found["left"] == [], found["left"]


@pytest.mark.parametrize("landlock", LANDLOCK)
def test_no_ipc_object_is_made_and_none_outlives_the_run(landlock, alone):
    found = side_by_side(harm("cheat_sysv_ipc_channel"), HONEST, landlock=landlock)
    cheat, neighbour = found["results"]
    assert cheat["stdout"].strip(), cheat
    said = json.loads(cheat["stdout"].strip().splitlines()[0])
    assert said == {"shm": "EPERM", "msg": "EPERM", "sem": "EPERM", "mq": "EPERM"}, said
    _honest_unharmed(neighbour, alone)
    assert found["left"] == [], found["left"]


def test_what_a_uid_made_in_sysv_ipc_is_removed():
    """The second wall: an object the uid made (here made for it, as root) is removed."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    uid = 63999
    pid = os.fork()
    if pid == 0:
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        os._exit(0 if libc.shmget(0, 4096, 0o1666) >= 0 and libc.msgget(0, 0o1666) >= 0
                 and libc.semget(0, 1, 0o1666) >= 0 else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    removed = uid_walls.remove_ipc(uid)
    assert sorted(r.split()[0] for r in removed) == ["msg", "sem", "shm"], removed
    assert not [r for r in removed if "not removed" in r]
    for table in ("shm", "msg", "sem"):
        rows = Path(f"/proc/sysvipc/{table}").read_text().splitlines()[1:]
        assert not [r for r in rows if r.split()[4 if table != "sem" else 3] == str(uid)]


def test_a_temp_file_renamed_from_tmp_over_the_checkpoint_is_judged_alike_in_every_tier():
    """Where /tmp and the working folder share one filesystem and no Landlock splits them, the
    rename would succeed on the grading machine; the run is refused it (EXDEV) all the same, as
    with Landlock, and judged as the real machine would judge it."""
    runs, tiers = {}, {}
    for landlock in (True, False):
        found = side_by_side(harm("fails_all_mkstemp_in_tmp"),
                             harm("fails_atomic_shutil_move_from_tmp"), landlock=landlock,
                             one_filesystem=True)
        runs[landlock], tiers[landlock] = found["results"], found["tier"]
    assert not tiers[False]["renames_fail"], "the machine itself must let the rename through"
    for landlock, (renamed, moved) in runs.items():
        assert renamed["ended"] == "raised", renamed  # os.replace raised EXDEV, as for real
        assert moved["ended"] == "finished", moved  # shutil.move copied, as it does for real
        for run in (renamed, moved):
            assert not all(passed for _, passed in run["verdicts"]), (landlock, run)
    assert [r["verdicts"] for r in runs[True]] == [r["verdicts"] for r in runs[False]]


CANARY = "canary-29-2-gradebook"


@pytest.fixture
def course():
    """A course folder every user could read, as an instructor might leave it."""
    folder = Path(tempfile.mkdtemp(prefix="checkpoint-lab-course-", dir="/var/tmp"))
    os.chmod(folder, 0o755)
    (folder / "submitted" / "alice").mkdir(parents=True)
    for path in (folder / "gradebook.db", folder / "submitted" / "alice" / "02.ipynb"):
        path.write_text(CANARY)
        os.chmod(path, 0o644)
    yield folder
    shutil.rmtree(folder)


@pytest.mark.parametrize("landlock", LANDLOCK)
def test_no_course_file_reaches_a_run_by_plain_permissions(landlock, course, alone):
    assert uid_walls.close_to_others([course]) == [str(course)]  # what grade does here
    found = side_by_side(harm("cheat_reads_cmdline_paths"), HONEST, landlock=landlock,
                         names=course)
    cheat, neighbour = found["results"]
    assert CANARY not in json.dumps(cheat), cheat
    assert cheat["verdicts"] and not any(passed for _, passed in cheat["verdicts"])
    _honest_unharmed(neighbour, alone)


def test_without_landlock_what_a_run_read_outside_its_folders_is_never_passed_on(course):
    """The course left open to every user, and no Landlock: the cheat does read the gradebook
    (the trace shows it open it), and its error, which carries those bytes, is not passed on."""
    found = side_by_side(harm("cheat_reads_cmdline_paths"), landlock=False, names=course)
    cheat = found["results"][0]
    assert CANARY not in json.dumps(cheat), cheat
    assert cheat["ended"] == "raised", cheat
    assert cheat["error"]["message"].startswith("(not shown: your code opened "), cheat["error"]
    assert str(course) in cheat["error"]["message"]


def test_the_uid_tier_without_landlock_is_refused_unless_asked_for():
    require_tools()
    code = ("import sys\nfrom graders.sandbox import box\nprint(box.tier())\n")
    cmd = [*contained(), *docker_root(sys.executable, "-c", _NO_LANDLOCK, sys.executable,
                                      "-c", code, caps=(*DOCKER_CAPS, "sys_ptrace"))]
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                              env=grading_env(Path(home)), start_new_session=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no Landlock" in done.stdout and "--without-landlock" in done.stdout, done.stdout


def test_an_interpreter_under_a_closed_home_is_refused_with_what_to_do(course, monkeypatch):
    home = course / "root"  # a folder every user may pass through, holding a closed one
    (home / "pyenv" / "bin").mkdir(parents=True)
    os.chmod(home, 0o700)
    monkeypatch.setattr(box, "_python", lambda: str(home / "pyenv" / "bin" / "python3"))
    monkeypatch.setattr(sys, "base_prefix", str(home / "pyenv"))
    said = box.interpreter_problem()
    assert said and f"under {home}," in said and "mode 700" in said, said
    assert f"chmod o+x {home}" in said and "/usr/local" in said
    os.chmod(home, 0o711)
    assert box.interpreter_problem() is None


def test_closing_never_closes_what_a_run_needs(course):
    inner = course / "home"
    inner.mkdir(mode=0o755)
    os.chmod(inner, 0o755)
    closed = uid_walls.close_to_others(["/", "/usr", sys.base_prefix, "/tmp", str(inner)])
    assert closed == [str(inner)]
    assert os.stat(inner).st_mode & 0o777 == 0o750
    assert os.stat("/").st_mode & 0o005 == 0o005


def test_outside_reads_are_the_files_opened_beyond_the_runs_folders_and_the_system():
    def hx(text):
        return "".join(f"\\x{b:02x}" for b in text.encode())

    def opened(path, flags="O_RDONLY|O_CLOEXEC"):
        return f'12  openat(AT_FDCWD<{hx("/w")}>, "{hx(path)}", {flags}) = 3<{hx(path)}>'

    trace = "\n".join([opened("/", "O_RDONLY|O_CLOEXEC|O_DIRECTORY"), opened("/w/x"),
                       opened("/usr/lib/python3/json/__init__.py"), opened("/etc/localtime"),
                       opened("/var/tmp/c/gradebook.db"), opened("/home/t/.profile"),
                       opened(os.path.realpath(sys.executable)),
                       opened(os.path.join(sys.prefix, "pyvenv.cfg"))])
    assert uid_walls.outside_reads(trace, ["/w"]) == ["/home/t/.profile",
                                                      "/var/tmp/c/gradebook.db"]


def test_a_withheld_run_names_what_it_opened_wherever_the_course_sorts(monkeypatch):
    """CI's clone lives at /check/...: the run's opened files there sort before /var/tmp, so the
    note must name more than the first of them."""
    rec = types.SimpleNamespace(
        trace="", stdout_tail="x", stderr_tail="y", error={"message": "canary"}, load=None,
        described=None)
    found = ["/a/grader/python", "/var/tmp/c/gradebook.db", "/var/tmp/c/s/02.ipynb", "/z/4"]
    monkeypatch.setattr(uid_walls, "outside_reads", lambda trace, folders: found)
    uid_walls.withhold_outside_reads(rec, ["/w"])
    assert rec.error["message"] == (
        "(not shown: your code opened /a/grader/python, /var/tmp/c/gradebook.db, "
        "/var/tmp/c/s/02.ipynb and 1 more file(s) outside its own folders, so what it printed "
        "or raised is not passed on)")
    assert (rec.stdout_tail, rec.stderr_tail) == (rec.error["message"], "")


@pytest.fixture(scope="module")
def batch_without_landlock(tmp_path_factory):
    """The whole catalog (the new cheats among honest neighbours) graded in one batch in the uid
    tier with Landlock switched off, as ``grade --without-landlock`` allows it."""
    require_tools()
    wrap = docker_root(sys.executable, "-c", _NO_LANDLOCK, "/usr/bin/env",
                       f"{box.WITHOUT_LANDLOCK_ENV}=1", caps=(*DOCKER_CAPS, "sys_ptrace"))
    solutions = ROOT / "solutions"
    mode = solutions.stat().st_mode
    try:
        yield grade_catalog_batch(tmp_path_factory.mktemp("uid-no-landlock"), tuple(wrap))
    finally:
        os.chmod(solutions, mode)  # grade puts it back itself; this, if the test's timeout hit


#: Students graded wrong without Landlock, and why: what ``--without-landlock`` gives up (a
#: file every user may read that the grader did not close); one graded right fails the test.
WITHOUT_LANDLOCK_WRONG = {
    "cheat_reads_reference": "it finds /work/main/solutions, another checkout on this machine "
                             "that every user may read (the grading checkout's is closed)",
}


@pytest.mark.timeout(1800)
def test_without_landlock_the_batch_gives_every_student_the_bubblewrap_score(
        batch_without_landlock):
    batch = batch_without_landlock
    assert "no Landlock" in batch["stdout"], said_by(batch)
    assert batch["autograde_failed"] <= ODD_METADATA, said_by(batch)
    wrong = {}
    for student, (_, _, expected) in STUDENTS.items():
        scores = batch["scores"].get(student, {})
        want = {c: POINTS[c] if passed else 0 for c, passed in expected.items()}
        got = {c: scores.get(c, 0 if student in LINKED else None) for c in expected}
        if got != want:
            wrong[student] = (got, want)
    unexplained = {s: w for s, w in wrong.items() if s not in WITHOUT_LANDLOCK_WRONG}
    assert not unexplained, f"gradebook differs from the bubblewrap tier's scores: {unexplained}"
    other = Path("/work/main/solutions")  # the cheat's guess: readable only as another checkout
    readable = (other.exists() and other.resolve() != (ROOT / "solutions").resolve()
                and other.stat().st_mode & 0o005 == 0o005)
    right_now = {s for s in WITHOUT_LANDLOCK_WRONG if s not in wrong and readable}
    assert not right_now, f"graded right now: remove {sorted(right_now)} from the list"
    assert not batch["left_alive"], "\n".join(batch["left_alive"][:40])
    written = {label: paths for label, paths in batch["written"].items() if paths}
    assert not written, f"changed by the batch: {written}"
    assert not batch["droppings"], batch["droppings"]


def test_what_no_student_may_read_is_named_in_a_checkout_and_in_site_packages(tmp_path):
    from graders.cli.grade import not_for_students

    named = {p.relative_to(ROOT).as_posix() for p in not_for_students(ROOT)}
    assert {"solutions", "exercises/src", "tests", "fake_llm/scenarios/release-audit.json"} \
        <= named, named
    # a pip install (site-packages): no checkout's folders, the hidden checks' scenario alone
    scenarios = tmp_path / "fake_llm" / "scenarios"
    scenarios.mkdir(parents=True)
    for name in ("release-audit.json", "support-tickets.json"):
        (scenarios / name).write_text("{}")
    assert not_for_students(tmp_path) == [scenarios / "release-audit.json"]


@pytest.mark.timeout(1200)
def test_without_landlock_a_cheat_finds_the_grading_checkout_closed(tmp_path_factory):
    """Without Landlock the run's uid reads every file any user may: a cheat follows its
    grader's command line to the checkout and runs a passing submission from its tests/.
    ``grade`` closes what no student may read there while it grades, says so, and puts the
    modes back: the cheat scores as the starter, its honest neighbour in full."""
    from graders.cli.grade import not_for_students

    cheat = "cheat_runs_a_passing_fixture"
    students = {name: STUDENTS[name] for name in ("reference", cheat)}
    wrap = docker_root(sys.executable, "-c", _NO_LANDLOCK, "/usr/bin/env",
                       f"{box.WITHOUT_LANDLOCK_ENV}=1", caps=(*DOCKER_CAPS, "sys_ptrace"))
    closed = not_for_students(ROOT)
    modes = {path: path.stat().st_mode & 0o7777 for path in closed}
    try:
        batch = grade_catalog_batch(tmp_path_factory.mktemp("uid-no-landlock-checkout"),
                                    tuple(wrap), students=students)
    finally:
        after = {path: path.stat().st_mode & 0o7777 for path in closed}
        for path, mode in modes.items():
            os.chmod(path, mode)  # grade puts them back itself; this, if the test's timeout hit
    assert "no Landlock" in batch["stdout"], said_by(batch)
    assert after == modes, "grade left a mode changed"
    for student, (_, _, expected) in students.items():
        want = {c: POINTS[c] if passed else 0 for c, passed in expected.items()}
        got = {c: batch["scores"].get(student, {}).get(c) for c in expected}
        assert got == want, (student, got, said_by(batch))
    said = next(line for line in batch["stdout"].splitlines() if "closed to other users" in line)
    for path in closed:
        assert str(path) in said, (path, said)


#: As a sandbox uid (argv[1]): a file at the top of /dev/shm and of /tmp, then sleeps (a
#: process that outlived its grader). Says "ready" once they exist.
_LEFT_BY_UID = r"""
import os, sys, time
uid = int(sys.argv[1])
os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)
for folder in ("/dev/shm", "/tmp"):
    with open(os.path.join(folder, f"tmp-left-{uid}"), "w") as f:
        f.write("left")
print("ready", flush=True)
time.sleep(600)
"""


def _owner(pid: str) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def test_what_a_killed_graders_uid_left_is_cleared_and_a_live_runs_uid_never():
    """A grader killed mid-run leaves its uid's process and files; the next start ends and
    removes them, and leaves those of a uid a live run (another grader) holds."""
    from graders.sandbox import sweep, uids

    folder = uids.lock_folder()
    dead, live = uids.reserve(folder), uids.reserve(folder)
    procs = [subprocess.Popen([sys.executable, "-c", _LEFT_BY_UID, str(held.uid)],
                              stdout=subprocess.PIPE, text=True) for held in (dead, live)]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready"
        dead.release()  # its grader was killed: the kernel dropped the lock
        removed = sweep.clear_unheld_uids()
        procs[0].wait(timeout=30)  # (reaped already by the sweep, a child subreaper's due)
        assert not [p for p in os.listdir("/proc") if p.isdigit() and _owner(p) == dead.uid]
        for place in ("/dev/shm", "/tmp"):
            assert f"{place}/tmp-left-{dead.uid}" in removed, removed
            assert not os.path.exists(f"{place}/tmp-left-{dead.uid}")
            assert os.path.exists(f"{place}/tmp-left-{live.uid}"), "a live run's file went"
        assert procs[1].poll() is None, "a live run's process was ended"
        assert not [r for r in removed if str(live.uid) in r], removed
    finally:
        live.release()
        for proc in procs:
            proc.kill()
            proc.wait()
        sweep.clear_unheld_uids()
    assert not os.path.exists(f"/tmp/tmp-left-{live.uid}")


def test_what_a_killed_checks_uid_left_is_cleared_by_the_next_check(tmp_path):
    """`checkpoint-lab check` run as root runs each submission as a sandbox uid; killed, it
    leaves that uid's process and files. The next `check` clears them as the next `grade`
    does, before it even reads its notebook (here one that is not there)."""
    from graders.sandbox import uids

    dead = uids.reserve(uids.lock_folder())
    proc = subprocess.Popen([sys.executable, "-c", _LEFT_BY_UID, str(dead.uid)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        dead.release()  # the check was killed: the kernel dropped its lock
        checked = subprocess.run([sys.executable, "-m", "graders.cli", "check",
                                  str(tmp_path / "not-there.ipynb")], cwd=ROOT,
                                 capture_output=True, text=True, timeout=120)
        assert checked.returncode == 2, checked.stdout + checked.stderr
        proc.wait(timeout=30)
        assert proc.returncode == -9, "the left process was ended"
        assert not [p for p in os.listdir("/proc") if p.isdigit() and _owner(p) == dead.uid]
        for place in ("/dev/shm", "/tmp"):
            assert not os.path.exists(f"{place}/tmp-left-{dead.uid}"), place
        assert "Traceback" not in checked.stderr
    finally:
        proc.kill()
        proc.wait()
        for place in ("/dev/shm", "/tmp"):
            Path(f"{place}/tmp-left-{dead.uid}").unlink(missing_ok=True)


def _opened(*paths: Path) -> dict[str, str]:
    """Each path whose mode keeps other users out, with its mode."""
    return {str(p): oct(p.stat().st_mode & 0o777) for p in paths if not p.stat().st_mode & 0o005}


@pytest.mark.timeout(1200)
def test_grade_puts_back_every_mode_it_closed_and_a_killed_grades_next_start_does(
        tmp_path_factory):
    """The uid tier's grade closes the course, the submissions, its home and the checkout's
    solutions to other users while it grades, says so in one line, and opens them again when the
    batch ends; one killed mid-batch leaves them closed, and the next grade's start opens them."""
    from graders.nbgrader_plumbing.durable import KILL_ENV

    one = {"reference": STUDENTS["reference"]}
    for killed in (False, True):
        scratch = tmp_path_factory.mktemp("killed" if killed else "ended")
        env = ("/usr/bin/env", f"{KILL_ENV}=planned") if killed else ()
        batch = grade_catalog_batch(scratch, tuple(docker_root(*env)), students=one)
        folders = (batch["course"].root, scratch / "submissions", scratch / "home",
                   ROOT / "solutions")
        assert "closed to other users while grading (chmod o-rwx, put back when it ends)" \
            in batch["stdout"], said_by(batch)
        if not killed:
            assert batch["status"] == 0, said_by(batch)
            assert _opened(*folders) == {}, "left closed after the batch ended"
            continue
        assert batch["status"] not in (0, None), said_by(batch)  # killed (through a userns)
        assert len(_opened(*folders)) == 4, "a killed grade's closing was put back already"
        cmd = [*contained(), *docker_root(sys.executable, "-m", "graders.cli", "grade",
                                          str(scratch / "none"), "--course", str(scratch / "no"),
                                          "--csv", str(scratch / "x.csv"))]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                              env=grading_env(scratch / "home"), start_new_session=True)
        assert done.returncode == 2, done.stderr[-2000:]
        assert "closed to other users (its mode put back)" in done.stdout, done.stdout
        assert _opened(*folders) == {}, "the next grade's start left them closed"


@pytest.mark.timeout(1500)
def test_gradescope_grades_without_landlock_only_when_the_instructor_built_it_so(tmp_path):
    """Gradescope's container holds one student and closes /autograder (0700), yet what it
    gives up without Landlock (every file the image leaves world-readable) is the instructor's
    call, as for ``grade``: ``run_autograder`` refuses, saying what to do, unless the zip was
    built with ``checkpoint-lab gradescope --without-landlock``."""
    from tests.conftest import run_autograder_in
    from tests.fixtures.notebooks.course_cache import shared_course

    require_tools()
    level2 = shared_course().source_dir / "02_two_latent_failures.ipynb"
    wrap = (*contained(), *docker_root(sys.executable, "-c", _NO_LANDLOCK,
                                       caps=(*DOCKER_CAPS, "sys_ptrace")))
    graded = {}
    for flag in ((), ("--without-landlock",)):
        out = tmp_path / f"autograder{len(flag)}.zip"
        done = subprocess.run([sys.executable, "-m", "graders.cli", "gradescope", "--course",
                               str(shared_course().root), "-o", str(out), *flag],
                              capture_output=True, text=True, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        results = run_autograder_in(out, tmp_path / f"tree{len(flag)}",
                                    {level2.name: level2.read_bytes()}, wrap)
        checks = [t for t in results["tests"] if t["max_score"]
                  and "notebook was not handed in" not in t["output"]]  # Level 2's alone
        assert checks, results
        graded[bool(flag)] = (sum(t["score"] for t in checks),
                              sum(t["max_score"] for t in checks), checks)
    score, full, checks = graded[False]
    assert score == 0
    for test in checks:
        said = " ".join(test["output"].split())
        assert "Not graded: the autograder could not start its sandbox" in said, said
        assert "no Landlock" in said and "checkpoint-lab gradescope --without-landlock" in said
    score, full, checks = graded[True]
    assert score == full > 0, [t["output"][:300] for t in checks]


# -- without Landlock: what lies under the folders every run may read (/dev, /proc, /etc) --------

SHM_CANARY = "canary-29-4-dev-shm"
#: An honest neighbour that also leaves a file every user may read in /dev/shm while it runs.
DROPS_IN_SHM = HONEST + f'''
import os as _os, time as _time
_fd = _os.open(f"/dev/shm/checkpoint-lab-canary-{{_os.getuid()}}",
               _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL, 0o644)
_os.fchmod(_fd, 0o644)
_os.write(_fd, b"{SHM_CANARY}")
_os.close(_fd)
_honest_run_agent = run_agent
def run_agent(*args, **kwargs):
    _time.sleep(4)
    return _honest_run_agent(*args, **kwargs)
'''
#: Waits for a neighbour's file in /dev/shm, reads it, and raises an error carrying it.
READS_SHM = HONEST + '''
import os as _os, time as _time
def run_agent(task, tools, call_model, execute_tool):
    found, deadline = [], _time.time() + 10
    while not found and _time.time() < deadline:
        for entry in _os.scandir("/dev/shm"):
            if entry.name.startswith("checkpoint-lab-canary-"):
                with open(entry.path) as f:
                    found.append(f.read())
        _time.sleep(0.05)
    raise RuntimeError("read beside me: " + "; ".join(found))
'''
#: Reads every other process's command line and raises an error carrying them.
READS_CMDLINES = HONEST + '''
import os as _os
def run_agent(task, tools, call_model, execute_tool):
    said = []
    for pid in _os.listdir("/proc"):
        if pid.isdigit() and int(pid) != _os.getpid():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    said.append(f.read().replace(b"\\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    raise RuntimeError("the other processes: " + " | ".join(said))
'''


def test_without_landlock_a_neighbours_file_in_dev_shm_never_reaches_feedback(alone):
    """/dev/shm is under /dev, which every run may read: a file another run left there is not
    the system's, and the run that read it has what it printed and raised withheld; the
    neighbour, which made its file itself, is graded and shown as alone."""
    found = side_by_side(READS_SHM, DROPS_IN_SHM, landlock=False)
    cheat, neighbour = found["results"]
    assert SHM_CANARY not in json.dumps(cheat), cheat
    assert cheat["ended"] == "raised", cheat
    assert cheat["error"]["message"].startswith(
        "(not shown: your code opened /dev/shm/checkpoint-lab-canary-"), cheat["error"]
    _honest_unharmed(neighbour, alone)
    assert "not shown" not in neighbour["stdout"] + json.dumps(neighbour["error"])
    assert found["left"] == [], found["left"]


def test_without_landlock_other_processes_command_lines_never_reach_feedback(course):
    """/proc is the system's, but another process's folder there is not: the grader's command
    line names the course (closed, yet its path and the students' names are bytes of the
    machine's), and quoting it is withheld."""
    uid_walls.close_to_others([course])
    found = side_by_side(READS_CMDLINES, landlock=False, names=course)
    cheat = found["results"][0]
    assert str(course) not in json.dumps(cheat), cheat
    assert cheat["ended"] == "raised", cheat
    assert cheat["error"]["message"].startswith("(not shown: your code opened /proc/"), cheat


def test_outside_reads_under_proc_dev_and_etc_are_what_is_not_the_systems_or_the_runs():
    def hx(text):
        return "".join(f"\\x{b:02x}" for b in text.encode())

    def opened(path, flags="O_RDONLY|O_CLOEXEC", pid=12):
        return f'{pid}  openat(AT_FDCWD<{hx("/w")}>, "{hx(path)}", {flags}) = 3<{hx(path)}>'

    made = "/dev/shm/sem.mp-own"
    venv_package = os.path.join(sys.prefix, "lib", "site-packages", "fake_llm", "hidden.json")
    trace = "\n".join([
        opened("/proc/12/status"), opened("/proc/13/task/13/stat", pid=13),
        opened("/proc/sys/kernel/cap_last_cap"), opened("/proc/99999/cmdline"),
        opened("/dev/urandom"), opened("/dev/shm/psm_own", "O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW"),
        f'12  link("{hx("/dev/shm/sem.tmpXYZ")}", "{hx(made)}") = 0', opened(made, "O_RDWR"),
        opened("/dev/shm/checkpoint-lab-canary-61001"), opened("/dev/mqueue/theirs"),
        opened("/dev/shm/theirs", "O_RDWR|O_CREAT"),
        opened("/etc/ld.so.cache"), opened("/etc/passwd"), opened("/etc/ssl/certs/ca.pem"),
        opened("/etc/jupyter/nbgrader_config.py"), opened("/etc/checkpoint-lab/gradebook.db"),
        opened("/sys/devices/system/cpu/online"), opened(venv_package)])
    outside = ["/dev/mqueue/theirs", "/dev/shm/checkpoint-lab-canary-61001", "/dev/shm/theirs",
               "/etc/checkpoint-lab/gradebook.db", "/etc/jupyter/nbgrader_config.py",
               "/proc/99999/cmdline"]
    if os.path.realpath(sys.prefix) != os.path.realpath(sys.base_prefix):  # a venv: its packages
        outside.append(venv_package)
    assert uid_walls.outside_reads(trace, ["/w"]) == sorted(outside)
