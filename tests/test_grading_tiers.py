"""The sandbox's tiers, for real: bubblewrap here, and the uid tier where namespaces cannot be made.

The uid tier is what grading uses as root without CAP_SYS_ADMIN or user namespaces (Docker's
default profile, Gradescope). It is tested under :func:`tests.conftest.docker_root` (a
simulation of that profile that maps every uid), inside a PID namespace of its own: each test
runs a small grader (``_RUNNER``) there that records submissions through
:func:`graders.sandbox.record` and reports what they saw and what was left. Then the whole
adversarial catalog is graded in one ``checkpoint-lab grade`` batch, and ``run_autograder`` from
the Gradescope zip runs, under the same simulation.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from graders.sandbox import box, record, uids
from tests.conftest import (
    LINKED,
    LISTEN,
    ODD_METADATA,
    POINTS,
    ROOT,
    STUDENTS,
    as_user,
    contained,
    docker_root,
    grade_catalog_batch,
    grading_env,
    require_tools,
    run_autograder_in,
    said_by,
)

pytestmark = pytest.mark.sandbox

if os.geteuid() != 0:
    pytest.skip("the uid tier is for a grader running as root", allow_module_level=True)

#: Records each submission of argv[1] (a JSON list of {"code", "keep"}), in threads when
#: argv[2] is "parallel"; prints one JSON result per submission.
_RUNNER = r"""
import json, os, stat, sys, threading
from pathlib import Path
from graders.sandbox import box, record

def facts(job):
    rec = record(job["code"] + "\nMISSING_FIELDS = [str(f) for f in FACTS]\n", None,
                 mode="missing_fields", keep=job.get("keep", False), timeout=job.get("timeout", 10))
    out = {"tier": rec.tier, "ended": rec.ended, "stderr": rec.stderr_tail[-2000:],
           "facts": [i["str"] for i in (rec.described or {}).get("items", [])],
           "protocol": rec.protocol, "trace": rec.trace}
    uid = next((f.split("=")[1] for f in out["facts"] if f.startswith("uid=")), None)
    if uid:
        out["left"] = [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == uid]
    if rec.kept:
        out["kept"] = {str(p): [oct(stat.S_IMODE(p.lstat().st_mode)), p.lstat().st_uid,
                                p.lstat().st_gid] for p in _walk(Path(rec.kept))}
    return out

def _uid_of(pid):
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    state = next(l.split()[1] for l in text.splitlines() if l.startswith("State:"))
    return None if state in "ZX" else next(l.split()[1] for l in text.splitlines()
                                           if l.startswith("Uid:"))

def _walk(top):
    yield top
    for child in sorted(top.iterdir()):
        if child.is_dir() and not child.is_symlink():
            yield from _walk(child)
        else:
            yield child

jobs = json.loads(sys.argv[1])
chosen = box.tier()
results = [None] * len(jobs)
def run(i):
    results[i] = facts(jobs[i])
if sys.argv[2] == "parallel":
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for t in threads: t.start()
    for t in threads: t.join()
else:
    for i in range(len(jobs)):
        run(i)
print(json.dumps({"tier": chosen if isinstance(chosen, str) else chosen.__dict__,
                  "results": results}))
"""

UID = "import os\nFACTS = [f'uid={os.getuid()}']\n"


def in_uid_tier(*jobs: dict, parallel: bool = False, timeout: float = 300) -> dict:
    """Run ``_RUNNER`` on ``jobs`` under the docker-root simulation, in a PID namespace."""
    require_tools()
    cmd = [*contained(), *docker_root(sys.executable, "-c", _RUNNER, json.dumps(jobs),
                                      "parallel" if parallel else "serial")]
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              env=grading_env(Path(home)), start_new_session=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def here(*jobs: dict) -> list[dict]:
    """The same jobs recorded on this machine as it is (the bubblewrap tier)."""
    found = []
    for job in jobs:
        rec = record(job["code"] + "\nMISSING_FIELDS = [str(f) for f in FACTS]\n", None,
                     mode="missing_fields", keep=job.get("keep", False))
        found.append({"tier": rec.tier, "facts": [i["str"] for i in rec.described["items"]],
                      "kept": rec.kept})
    return found


def test_the_tier_is_chosen_from_what_the_machine_allows():
    assert box.tier() == box.Tier("bubblewrap")
    report = in_uid_tier({"code": UID})
    tier = report["tier"]
    assert tier["name"] == "uid" and tier["renames_fail"], tier
    assert tier["landlock"] >= 2, "this machine's kernel has Landlock (its tests rely on it)"
    assert report["results"][0]["tier"] == "uid"
    assert "uid tier" in box.Tier(**tier).describe()


def test_submissions_run_on_the_graders_own_python_in_every_tier():
    code = ("import os, sys\nFACTS = [sys.version, os.path.realpath(sys.base_prefix), "
            "os.path.realpath(sys.executable)]\n")
    ours = [sys.version, os.path.realpath(sys.base_prefix)]
    assert here({"code": code})[0]["facts"][:2] == ours
    assert in_uid_tier({"code": code})["results"][0]["facts"][:2] == ours


def test_what_the_uid_can_read_and_write(tmp_path):
    # a course folder and a gradebook every user could read, as an instructor might leave them
    course = Path(tempfile.mkdtemp(prefix="checkpoint-lab-course-", dir="/var/tmp"))
    try:
        os.chmod(course, 0o755)
        (course / "gradebook.db").write_text("grades")
        os.chmod(course / "gradebook.db", 0o666)
        secrets = [str(ROOT / "solutions" / "02_two_latent_failures.py"), "/etc/passwd",
                   str(course / "gradebook.db"), str(ROOT / "README.md")]
        code = f"""
import errno, os
FACTS = []
for path in {secrets!r}:
    try:
        open(path).read(1)
        FACTS.append('read ' + path)
    except OSError as e:
        FACTS.append(path + ' ' + errno.errorcode[e.errno])
for d in ('/usr', '/', '/var/tmp', '/tmp', {str(course)!r}, '/dev/shm', '.', os.environ['TMPDIR']):
    try:
        with open(os.path.join(d, 'probe-written'), 'w') as f:
            f.write('x')
        FACTS.append('wrote ' + d)
    except OSError:
        pass
try:
    os.listdir('/dev/shm')
    FACTS.append('listed /dev/shm')
except OSError:
    pass
# its observer and its trace: strace may run as this very uid
tracer = [l.split()[1] for l in open('/proc/self/status') if l.startswith('TracerPid:')][0]
for name, attempt in (('trace', lambda: open('../trace', 'a').write('forged')),
                      ('observer fds', lambda: [open(f'/proc/{{tracer}}/fd/{{n}}', 'a')
                                                for n in os.listdir(f'/proc/{{tracer}}/fd')]),
                      ('observer signal', lambda: os.kill(int(tracer), 0))):
    try:
        attempt()
        FACTS.append('reached ' + name)
    except OSError as e:
        FACTS.append(name + ' ' + errno.errorcode[e.errno])
FACTS.append('tmp=' + os.environ['TMPDIR'])
FACTS.append(f'uid={{os.getuid()}}')
"""
        result = in_uid_tier({"code": code})["results"][0]
        assert result["ended"] == "finished", result["stderr"]
        facts = result["facts"]
        assert [f for f in facts if f.startswith(("read", "listed", "reached"))] == [], facts
        assert "trace EACCES" in facts and "observer fds EACCES" in facts, facts
        assert "observer signal EPERM" in facts, facts
        assert all(f.endswith("EACCES") for f in facts[:len(secrets)]), facts
        tmp = next(f for f in facts if f.startswith("tmp="))[len("tmp="):]
        assert [f for f in facts if f.startswith("wrote")] == \
            ["wrote /dev/shm", "wrote .", f"wrote {tmp}"], facts
        assert not (course / "probe-written").exists()
        assert not Path("/dev/shm/probe-written").exists(), "the grader removes what it leaves"
        assert result["protocol"] == [], "leaving a file is no fault of the run"
    finally:
        for item in course.iterdir():
            item.unlink()
        course.rmdir()


def test_the_network_is_refused_even_the_graders_loopback():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.2)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(b"\0checkpoint-lab-test-" + str(os.getpid()).encode())
    abstract.listen(4)
    port = server.getsockname()[1]
    code = f"""
import errno, socket
FACTS = []
for family, kind, address in ((socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', {port})),
                              (socket.AF_INET, socket.SOCK_DGRAM, ('127.0.0.1', 53)),
                              (socket.AF_INET6, socket.SOCK_STREAM, ('::1', {port})),
                              (socket.AF_UNIX, socket.SOCK_STREAM, {abstract.getsockname()!r}),
                              (socket.AF_UNIX, socket.SOCK_DGRAM, '/dev/log')):
    try:
        s = socket.socket(family, kind)
        s.settimeout(1)
        s.connect(address)
        s.sendall(b'hello')
        FACTS.append('connected')
    except OSError as e:
        FACTS.append(errno.errorcode.get(e.errno, str(e)))
"""
    try:
        facts = in_uid_tier({"code": code})["results"][0]["facts"]
        try:
            conn, _ = server.accept()
            conn.close()
            reached = True
        except OSError:
            reached = False
    finally:
        server.close()
        abstract.close()
    assert facts == ["EACCES"] * 5 and not reached, facts


DAEMONS = """
import os, time
FACTS = [f'uid={os.getuid()}']
started = 0
for _ in range(300):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:  # a child that cannot fork (the limit) must not go on as the parent would
        try:
            os.setsid()
            if os.fork() == 0:
                time.sleep(120)
        finally:
            os._exit(0)
    started += 1
FACTS.append(f'forked={started}')
"""


def test_processes_are_gone_and_a_fork_bomb_stops_at_the_limit():
    result = in_uid_tier({"code": DAEMONS, "timeout": 20})["results"][0]
    forked = int(next(f for f in result["facts"] if f.startswith("forked="))[len("forked="):])
    assert 0 < forked < box.LIMITS["nproc"], result["facts"]
    assert result["left"] == [], f"processes of the run's uid left: {result['left']}"
    uid = next(f for f in result["facts"] if f.startswith("uid="))[len("uid="):]
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == uid]


def _uid_of(pid: str) -> str | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return next(line.split()[1] for line in text.splitlines() if line.startswith("Uid:"))


NESTED = """
import ctypes, errno, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
FACTS = [str(libc.unshare(0x10000000)), errno.errorcode[ctypes.get_errno()]]
try:
    FACTS.append(str(subprocess.run(['unshare', '--user', 'true'], capture_output=True).returncode))
except OSError as e:
    FACTS.append(errno.errorcode[e.errno])
"""


def test_nested_user_namespaces_are_refused_in_both_tiers():
    assert here({"code": NESTED})[0]["facts"] == ["-1", "EPERM", "1"]
    assert in_uid_tier({"code": NESTED})["results"][0]["facts"] == ["-1", "EPERM", "1"]


_NESTED_AS_USER = """
import json, sys
from graders.sandbox import box, record
rec = record(sys.argv[1] + "\\nMISSING_FIELDS = [str(f) for f in FACTS]\\n", None,
             mode="missing_fields")
print(json.dumps([rec.tier, [i["str"] for i in rec.described["items"]],
                  "--disable-userns" in box.command(box.find_tools(), run_dir=box.Path("/r"),
                  trace=box.Path("/t"), fd=3, info_fd=4, mode="loop", sandbox=True, uid=1000)]))
"""


def test_unprivileged_bubblewrap_disables_nested_user_namespaces(tmp_path):
    os.chmod(tmp_path, 0o777)
    done = subprocess.run(as_user(sys.executable, "-c", _NESTED_AS_USER, NESTED),
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env=dict(os.environ, HOME=str(tmp_path), PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr[-2000:]
    tier, facts, disabled = json.loads(done.stdout.strip().splitlines()[-1])
    assert tier == "bubblewrap" and disabled
    assert facts[0] == "-1" and facts[1] in ("EPERM", "ENOSPC") and facts[2] == "1", facts


def test_a_rename_between_work_and_tmp_fails_and_the_trace_names_them_as_the_model_does():
    code = """
import errno, os, tempfile
FACTS = []
fd, temp = tempfile.mkstemp()
os.write(fd, b'{}')
os.close(fd)
for source, target in ((temp, 'checkpoint.json'), ('checkpoint.json', temp + '.back')):
    if source == 'checkpoint.json':
        open('checkpoint.json', 'w').write('{}')
    try:
        os.replace(source, target)
        FACTS.append('renamed')
    except OSError as e:
        FACTS.append(errno.errorcode[e.errno])
"""
    result = in_uid_tier({"code": code})["results"][0]
    assert result["facts"] == ["EXDEV", "EXDEV"], result["facts"]
    hexed = "".join(f"\\x{b:02x}" for b in b"/work/checkpoint.json")
    assert hexed in result["trace"]
    for real in ("checkpoint-lab-run-", "checkpoint-lab-tmp-"):
        assert "".join(f"\\x{b:02x}" for b in real.encode()) not in result["trace"]


def test_two_runs_never_share_a_uid(tmp_path):
    folder = tmp_path / "locks"
    folder.mkdir(mode=0o700)
    holders = [subprocess.Popen([sys.executable, "-c", _HOLD, str(folder), "60"], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True) for _ in range(4)]
    held = [h.stdout.readline().split() for h in holders]
    drawn = [uid for line in held for uid in line]
    assert len(drawn) == 4 * 60 and len(set(drawn)) == len(drawn)
    holders[0].kill()  # a grader that crashes frees its uids at once
    holders[0].wait()
    for uid in held[0]:
        fd = os.open(folder / uid, os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)
    for h in holders[1:]:
        h.kill()
        h.wait()
    report = in_uid_tier(*[{"code": UID}] * 6, parallel=True)
    ran_as = [r["facts"][0] for r in report["results"]]
    assert len(set(ran_as)) == 6, ran_as


_HOLD = """
import sys, time
from graders.sandbox import uids
held = [uids.reserve(sys.argv[1]) for _ in range(int(sys.argv[2]))]
print(' '.join(str(r.uid) for r in held), flush=True)
time.sleep(600)
"""


def test_run_folders_are_closed_to_other_users():
    bwrap = here({"code": UID, "keep": True})[0]
    kept = Path(bwrap["kept"])
    try:
        assert stat.S_IMODE(kept.stat().st_mode) == 0o700
        assert stat.S_IMODE((kept / "trace").stat().st_mode) == 0o600
        probe = subprocess.run(["setpriv", "--reuid=12345", "--regid=12345", "--clear-groups",
                                "ls", str(kept)], capture_output=True, text=True)
        assert probe.returncode != 0 and "Permission denied" in probe.stderr
    finally:
        subprocess.run(["rm", "-rf", str(kept)], check=False)
    report = in_uid_tier({"code": UID, "keep": True})
    result = report["results"][0]
    uid = int(result["facts"][0][len("uid="):])
    # strace writes the trace: root, or the run's uid where root lacks CAP_SYS_PTRACE (Landlock
    # then keeps the submission from it)
    observer = uid if report["tier"]["observer_uid"] else 0
    modes = result["kept"]
    run_dir = min(modes, key=len)
    try:
        assert modes[run_dir] == ["0o710", 0, uid], "passable by the run's uid alone"
        assert modes[f"{run_dir}/trace"][:2] == ["0o600", observer]
        assert modes[f"{run_dir}/work"] == ["0o700", uid, uid]
        assert modes[f"{run_dir}/grader/submission.py"] == ["0o640", 0, uid]
    finally:
        subprocess.run(["rm", "-rf", run_dir], check=False)


def test_uid_reservations_live_in_a_folder_only_the_grader_opens():
    folder = uids.lock_folder()
    info = os.lstat(folder)
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
    assert stat.S_IMODE(info.st_mode) == 0o700
    held = uids.reserve()
    try:
        assert held.uid in uids.UID_RANGE
    finally:
        held.release()


# -- the whole catalog in one batch, and Gradescope, in the uid tier --------------------------


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    require_tools()
    mode = (ROOT / "solutions").stat().st_mode
    try:
        yield grade_catalog_batch(tmp_path_factory.mktemp("uid-tier-batch"), tuple(docker_root()))
    finally:
        os.chmod(ROOT / "solutions", mode)  # grade closed it to other users in the uid tier


@pytest.mark.timeout(1800)
def test_the_batch_grades_everyone_in_the_uid_tier(batch):
    # nbgrader may refuse a notebook whose metadata is odd (that student's failure, said so)
    failed = batch["autograde_failed"]
    assert failed <= ODD_METADATA, f"nbgrader failed {sorted(failed - ODD_METADATA)}"
    assert batch["status"] == (1 if failed else 0), f"checkpoint-lab grade: {said_by(batch)}"
    assert "sandbox: uid tier" in batch["stdout"], said_by(batch)
    missing = [s for s in batch["students"] if s not in batch["scores"] and s not in LINKED]
    assert not missing, f"not in the gradebook: {missing}\n{said_by(batch)}"


#: Students the uid tier grades wrong, and why (for the lead: a gap of the tier, not of the test);
#: one graded right fails the test, so that it leaves this list.
UID_TIER_WRONG: dict[str, str] = {}


@pytest.mark.timeout(1800)
def test_the_uid_tier_gives_every_student_the_bubblewrap_score(batch):
    wrong = {}
    for student, (_, _, expected) in STUDENTS.items():
        scores = batch["scores"].get(student, {})
        want = {c: POINTS[c] if passed else 0 for c, passed in expected.items()}
        got = {c: scores.get(c, 0 if student in LINKED else None) for c in expected}
        if got != want:
            wrong[student] = (got, want)
    unexplained = {s: w for s, w in wrong.items() if s not in UID_TIER_WRONG}
    assert not unexplained, f"gradebook differs from the bubblewrap tier's scores: {unexplained}"
    right_now = set(UID_TIER_WRONG) - set(wrong)
    assert not right_now, f"graded right now: remove {sorted(right_now)} from UID_TIER_WRONG"


@pytest.mark.timeout(1800)
def test_the_uid_tier_batch_leaves_no_process_no_write_and_no_connection(batch):
    assert not batch["left_alive"], "\n".join(batch["left_alive"][:40])
    assert not batch["outside"], "\n".join(batch["outside"][:40])
    written = {label: paths for label, paths in batch["written"].items() if paths}
    assert not written, f"changed by the batch: {written}"
    assert not batch["droppings"], batch["droppings"]
    assert batch["scores"] == batch["scores_later"], "the gradebook changed after the batch"
    assert not batch["connections"], f"connections to {LISTEN}: {batch['connections']}"



#: Appended to the starter: reads the reference from the autograder and forges its results.
FORGE = '''
import os as _os
_ref = "/autograder/source/checkpoint-lab/solutions/02_two_latent_failures.py"
try:
    exec(open(_ref).read())
except OSError:
    pass
for _path in ("/autograder/results/results.json", "/autograder/source/checkpoint_lab_course.json"):
    try:
        with open(_path, "w") as _f:
            _f.write('{"score": 999, "tests": []}')
    except OSError:
        pass
'''


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    from tests.fixtures.notebooks.course_cache import shared_course

    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    done = subprocess.run([sys.executable, "-m", "graders.cli", "gradescope", "--course",
                           str(shared_course().root), "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return out


def _gradescope_score(results: dict) -> float:
    """The score Gradescope gives: the sum of the tests (no top-level score, which would tell
    the hidden checks before the grades are published)."""
    assert "score" not in results, "a top-level score tells the hidden checks"
    return sum(t["score"] for t in results["tests"])


@pytest.mark.timeout(1200)
def test_run_autograder_grades_in_the_uid_tier(autograder_zip, tmp_path):
    from graders.checks import checks_for
    from tests.fixtures.notebooks.course_cache import shared_course
    from tests.fixtures.notebooks.submissions import LEVEL2, STARTER2, _level2

    require_tools()
    source = {p.stem: json.loads(p.read_text())
              for p in sorted(shared_course().source_dir.glob("*.ipynb"))}
    release = json.loads((shared_course().release_dir / f"{LEVEL2}.ipynb").read_text())
    wrap = (*contained(), *docker_root())
    results = run_autograder_in(autograder_zip, tmp_path / "reference", {
        f"{name}.ipynb": json.dumps(nb).encode() for name, nb in source.items()}, wrap)
    full = sum(c.points for e in source for c in checks_for(e))
    assert _gradescope_score(results) == full > 0, results["output"]
    forged = _level2(release, STARTER2, FORGE)
    results = run_autograder_in(autograder_zip, tmp_path / "forged",
                                {f"{LEVEL2}.ipynb": json.dumps(forged).encode()}, wrap)
    assert _gradescope_score(results) == 0 and results["tests"], results["output"]
    manifest = json.loads((tmp_path / "forged" / "source" / "checkpoint_lab_course.json")
                          .read_text())
    assert "exercises" in manifest
