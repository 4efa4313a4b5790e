"""Shared pytest setup: where the project is, whether we run in CI, the adversarial catalog and
its one-batch grading (shared by the batch tests of every sandbox tier), the simulation of
Docker's default profile as root, and the browser fixtures.

The browser tests (``tests/test_browser*.py``) share one Chromium and one JupyterLab (started as
a student starts it, ``checkpoint-lab lab``) for the whole test session; each test gets a new tab
and a fresh copy of the released notebooks (``page``). A plain ``jupyter lab``, as Binder and
JupyterHub start it, is started once too, for the tests that ask for it (``plain_lab``). The
helpers they use are in ``tests/browser.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The tests and the kernels of the JupyterLab they start must agree on the order of each quiz's
# options (a test clicks the right one by its letter); how each student gets an order of their
# own is tested in tests/test_teaching_quiz.py, which sets and clears this itself.
os.environ.setdefault("CHECKPOINT_LAB_QUIZ_SEED", "authored")

#: ``--fast`` and ``--slow``, the suite's two speeds, and the fast tier's watch; every fixture
#: graded once per run (``dev_check``, ``graded``); the suite on several processes (the
#: ``xdist_group`` marks, what is computed once for every worker).
pytest_plugins = ["tests.workers", "tests.speeds", "tests.graded"]
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The project's top folder."""
    return ROOT


#: Docker's default capabilities (moby's ``DefaultCapabilities``): CAP_SYS_ADMIN is not among them.
DOCKER_CAPS = ("chown", "dac_override", "fsetid", "fowner", "mknod", "net_raw", "setgid", "setuid",
               "setfcap", "setpcap", "net_bind_service", "sys_chroot", "kill", "audit_write")

#: Runs ``argv[argv.index("--") + 1:]`` (run as real root) as uid 1000 (``user``), as in a
#: JupyterHub pod (``pod``: uid 1000 in a user namespace that allows no other) or, with
#: ``docker-root``, as Docker's default profile would as root: uid 0 without CAP_SYS_ADMIN
#: (Docker's capabilities only) in a user namespace that maps every uid to itself (so setpriv
#: can drop to any uid, as in a container) and whose parent allows no further user namespace
#: (bubblewrap then fails with EPERM, `unshare -U` with ENOSPC, as
#: `../shared/tools/envsim docker-root` has them). All run in a mount namespace of their own
#: where the grader's Python is readable by every user, as in a container image (a folder above
#: it that is closed to others, such as /root, is replaced by an open one holding only that
#: Python).
_DOCKER_ROOT = r"""
# checkpoint-lab test harness
import ctypes, os, signal, sys, tempfile
libc = ctypes.CDLL(None, use_errno=True)
NEWUSER, NEWNS, PRIVATE, REC, BIND, MOVE = 0x10000000, 0x20000, 1 << 18, 1 << 14, 4096, 8192

def ok(result, what):
    if result != 0:
        sys.exit(f"docker-root simulation: {what}: {os.strerror(ctypes.get_errno())}")

def open_up_python():
    ok(libc.unshare(NEWNS), "unshare(mount)")
    ok(libc.mount(b"none", b"/", None, REC | PRIVATE, None), "make / private")
    prefix = os.path.realpath(sys.base_prefix)
    path = prefix
    top = None
    while path != "/":
        path = os.path.dirname(path)
        if path != "/" and not os.stat(path).st_mode & 0o001:
            top = path
    if top is None:
        return
    keep = os.path.join(top, os.path.relpath(prefix, top).split("/")[0])
    hold = tempfile.mkdtemp()
    ok(libc.mount(keep.encode(), hold.encode(), None, BIND | REC, None), "bind " + keep)
    ok(libc.mount(b"tmpfs", top.encode(), b"tmpfs", 0, b"mode=0755"), "tmpfs on " + top)
    os.makedirs(keep)
    ok(libc.mount(hold.encode(), keep.encode(), None, MOVE, None), "move " + keep)
    os.rmdir(hold)  # an empty folder of the machine's /tmp now

def map_all(pid):
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write("0 0 4294967295\n")

def in_new_userns(then):
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        ok(libc.unshare(NEWUSER), "unshare(user)")
        os.write(ready_w, b"1")
        os.read(mapped_r, 1)
        then()
        os._exit(0)
    os.read(ready_r, 1)
    map_all(pid)
    os.write(mapped_w, b"1")
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)

def container():
    caps = "-all," + ",".join("+" + c for c in CAPS.split())
    os.execvp("setpriv", ["setpriv", "--bounding-set", caps, "--inh-caps", "-all", "--", *CMD])

def outer_userns():
    with open("/proc/sys/user/max_user_namespaces", "w") as f:
        f.write("1\n")
    in_new_userns(container)

CMD = sys.argv[sys.argv.index("--") + 1:]
MODE, CAPS = sys.argv[1], sys.argv[2]
open_up_python()
if MODE == "user":
    os.execvp("setpriv", ["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "--",
                          *CMD])
if MODE.startswith("pod"):
    mask = ["--ro-bind", "/dev/null", CAPS] if MODE == "pod-no-bwrap" else []
    os.execvp("bwrap", ["bwrap", "--dev-bind", "/", "/", *mask, "--unshare-user",
                        "--disable-userns", "--uid", "1000", "--gid", "1000", "--", *CMD])
in_new_userns(outer_userns)
"""


def docker_root(*cmd: str, caps: tuple[str, ...] = DOCKER_CAPS) -> list[str]:
    """``cmd`` run as in Docker's default profile as root (see ``_DOCKER_ROOT``), with ``caps``
    (e.g. ``DOCKER_CAPS + ("sys_ptrace",)`` for ``docker run --cap-add SYS_PTRACE``); needs
    root."""
    return [sys.executable, "-c", _DOCKER_ROOT, "docker-root", " ".join(caps), "--", *cmd]


def pod(*cmd: str, bwrap: bool = True) -> list[str]:
    """``cmd`` run as in a JupyterHub pod: uid 1000, no user namespaces, the grader's Python
    readable (the recipe of issue 17 over ``_DOCKER_ROOT``'s mount namespace); with
    ``bwrap=False`` bubblewrap is not there either. Needs root."""
    mode = "pod" if bwrap else "pod-no-bwrap"
    return [sys.executable, "-c", _DOCKER_ROOT, mode, shutil.which("bwrap") or "", "--", *cmd]


def as_user(*cmd: str) -> list[str]:
    """``cmd`` run as uid 1000 on this machine as it is (user namespaces allowed), the grader's
    Python readable (see ``_DOCKER_ROOT``); needs root."""
    return [sys.executable, "-c", _DOCKER_ROOT, "user", "", "--", *cmd]


def run_autograder_in(zip_path: Path, tree: Path, files: dict[str, bytes],
                      wrap: tuple[str, ...] = ()) -> dict:
    """Unpack the Gradescope zip into ``tree`` as Gradescope does, hand in ``files``, run
    ``run_autograder`` (under ``wrap``) with ``tree`` bound at ``/autograder``, return
    ``results.json``."""
    import zipfile

    for name in ("source", "results", "submission"):
        (tree / name).mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(tree / "source")
    shutil.copy(tree / "source" / "run_autograder", tree / "run_autograder")
    os.chmod(tree / "run_autograder", 0o755)
    (tree / "venv").symlink_to(sys.prefix)
    for name, data in files.items():
        (tree / "submission" / name).write_bytes(data)
    cmd = ["bwrap"]
    for top in sorted(os.listdir("/")):
        path = Path("/") / top
        if top == "autograder":
            continue
        if path.is_symlink():
            cmd += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            cmd += ["--dev-bind", str(path), str(path)]
    cmd += ["--bind", str(tree), "/autograder", "--chdir", "/autograder", "--die-with-parent",
            *wrap, "/autograder/run_autograder"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((tree / "results" / "results.json").read_text())


# -- the adversarial catalog (tests/test_adversarial.py) ----------------------------------------

def _catalog():
    from tests.fixtures import catalog

    return catalog


LEVEL2 = "02_two_latent_failures"
CATALOG = ROOT / "tests" / "fixtures" / LEVEL2 / "adversarial"
EXPECTED: dict[str, dict[str, bool]] = json.loads((CATALOG / "expected.json").read_text())
CHECK_IDS = ("l2_atomic_save", "l2_save_point_a", "l2_atomic_save_hidden",
             "l2_save_point_a_hidden")


def tools_problem() -> str | None:
    """Why these tests cannot run here (one line), or None."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox tests need Linux (bubblewrap, strace); this is {sys.platform}"
    missing = [tool for tool in ("bwrap", "strace", "unshare") if shutil.which(tool) is None]
    if missing:
        return (f"the sandbox tests need {' and '.join(missing)} "
                "(Debian: apt-get install bubblewrap strace util-linux)")
    probe = subprocess.run([*contained(), sys.executable, "-c", "pass"], capture_output=True,
                           text=True, timeout=60)
    if probe.returncode != 0:
        return f"cannot make a PID namespace to contain the catalog: {probe.stderr.strip()[:200]}"
    return None


def require_tools() -> None:
    """Skip with a one-line reason when the tools are missing; fail instead when CI=true."""
    problem = tools_problem()
    if problem:
        if IN_CI:
            pytest.fail(f"CI must run the sandbox tests: {problem}")
        pytest.skip(problem)


def require_sandbox() -> None:
    """Skip a test that grades in the sandbox where this machine has none (one line saying why);
    fail instead when CI=true. Asked at run time, never at import: collecting the fast tier must
    start no bubblewrap."""
    from graders.sandbox import sandbox_problem

    problem = sandbox_problem()
    if problem:
        if IN_CI:
            pytest.fail(f"CI must run the sandbox tests: {problem}")
        pytest.skip(problem)


@pytest.fixture
def sandbox_here() -> None:
    """:func:`require_sandbox` as a fixture, for ``pytest.mark.usefixtures``."""
    require_sandbox()


def contained() -> list[str]:
    """The command prefix that runs a program as process 1 of a new PID namespace.

    Process 1 of a namespace ignores SIGKILL sent from inside it, so ``kill(-1, SIGKILL)`` there
    ends everything but the grader; when process 1 ends, every process of the namespace ends.
    """
    prefix = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
    if os.geteuid() != 0:
        prefix[1:1] = ["--user", "--map-current-user"]
    return prefix


def grading_env(home: Path) -> dict[str, str]:
    """The environment graders get here: this checkout importable, HOME a folder of the test's."""
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(ROOT),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("TMPDIR", None)
    return env


# -- one batch of the whole catalog (tests/test_adversarial_batch.py, tests/test_grading_tiers.py)

POINTS = _catalog().POINTS
#: student id -> (exercise, catalog entry or None, check id -> must pass).
STUDENTS: dict[str, tuple[str, str | None, dict[str, bool]]] = {
    "reference": (LEVEL2, None, dict.fromkeys(CHECK_IDS, True)),
    "starter": (LEVEL2, None, dict.fromkeys(CHECK_IDS, False)),
    **{_catalog().student_id(level, name): (level, name, _catalog().EXPECTED[level][name])
       for level, name in _catalog().entries()},
}
#: Students whose notebook has odd nbgrader metadata: nbgrader may refuse to autograde them.
ODD_METADATA = {student for student, (level, name, _) in STUDENTS.items()
                if name and "odd-grade-id" in _catalog().directives(level, name)}
#: Students whose notebook is a symbolic link: a grader that refuses links may leave them out.
LINKED = {student for student, (level, name, _) in STUDENTS.items()
          if name and _catalog().directives(level, name).get("symlink-to")}
LISTEN = ("127.0.0.1", 47613)
#: What nbgrader and the grade command themselves write in the course directory (not hashed).
NBGRADER_WRITES = ("gradebook.db", "autograded", "feedback", "submitted", "gradebook-backups",
                   ".checkpoint-lab-grading",
                   "checkpoint-lab-grade.log")
SOLUTIONS = "the checkout's solutions/"
#: Names the catalog's cheats drop in /tmp or /dev/shm when nothing stops them.
DROPPINGS = ("checkpoint-lab-fill.bin", ".checkpoint-lab-runs-", "checkpoint-lab-drop-")
#: Process 1 of the batch's own PID and network namespaces: brings the namespace's loopback up
#: and listens on it at LISTEN (no other run's listener can collide with it there), runs the
#: grade command (argv), says how it ended ("ENDED <status>"), waits for the test's word on its
#: stdin, then says what reached the listener ("SEEN <json list>").
_SHIM = """
# checkpoint-lab test harness
import fcntl, json, socket, struct, subprocess, sys, threading
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as lo:
    fcntl.ioctl(lo, 0x8914, struct.pack("16sh22x", b"lo", 1))  # SIOCSIFFLAGS: IFF_UP
listener = socket.socket()
listener.bind(("127.0.0.1", PORT))
listener.listen(64)
seen = []

def serve():
    while True:
        conn, peer = listener.accept()
        conn.settimeout(0.5)
        try:
            data = conn.recv(200)
        except OSError:
            data = b""
        conn.close()
        seen.append("%s: %r" % (peer, data[:120]))

threading.Thread(target=serve, daemon=True).start()
proc = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL)
print("ENDED", proc.returncode, flush=True)
sys.stdin.readline()
print("SEEN", json.dumps(seen), flush=True)
""".replace("PORT", str(LISTEN[1]))


def _hash_tree(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Relative path -> sha256 of every file and link under ``root`` (top-level ``skip`` out)."""
    found = {}
    if not root.exists():
        return found
    for folder, dirs, files in os.walk(root):
        rel_folder = Path(folder).relative_to(root)
        if rel_folder == Path("."):
            dirs[:] = [d for d in dirs if d not in skip]
            files = [f for f in files if f not in skip]
        for name in sorted(files) + [d for d in dirs if (Path(folder) / d).is_symlink()]:
            path = Path(folder) / name
            rel = str(rel_folder / name)
            if path.is_symlink():
                found[rel] = "link -> " + os.readlink(path)
            elif path.is_file():
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                found[rel] = "not a regular file"
    return found


def _diff(before: dict[str, str], after: dict[str, str], *, new_files: bool = True) -> list[str]:
    keys = before.keys() | after.keys() if new_files else before.keys()
    return sorted({k for k in keys if before.get(k) != after.get(k)})


def _droppings() -> set[str]:
    found = set()
    for folder in ("/tmp", "/dev/shm"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found |= {f"{folder}/{n}" for n in names if n.startswith(DROPPINGS)}
    return found


def _processes() -> dict[int, str]:
    """pid -> start time, for every process of the machine."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                found[int(entry)] = stat.rsplit(")", 1)[1].split()[19]
            except (OSError, IndexError):
                pass
    return found


def _describe(proc_root: str, pid: str) -> str:
    try:
        cmd = Path(f"{proc_root}/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace").strip()
        uid = next(line.split()[1] for line in Path(f"{proc_root}/{pid}/status").read_text()
                   .splitlines() if line.startswith("Uid:"))
    except (OSError, StopIteration):
        return f"{pid} (gone)"
    return f"pid {pid} uid {uid}: {cmd[:160]}"


def _harness(proc_root: str, pid: str) -> bool:
    """Whether ``pid`` is the test's own shim or simulation (not something the batch started)."""
    try:
        return b"# checkpoint-lab test harness" in Path(f"{proc_root}/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _alive(proc_root: str, pid: str) -> bool:
    """Whether ``pid`` still runs (a zombie, dead and waiting for process 1 to reap it, does not).
    """
    try:
        status = Path(f"{proc_root}/{pid}/status").read_text()
    except OSError:
        return False
    return not any(line.startswith("State:") and line.split()[1] in ("Z", "X")
                   for line in status.splitlines())


def _mentions(pid: int, words: tuple[str, ...]) -> bool:
    texts = []
    for what in ("cmdline", "environ"):
        try:
            texts.append(Path(f"/proc/{pid}/{what}").read_bytes().decode(errors="replace"))
        except OSError:
            pass
    try:
        texts.append(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        pass
    return any(word in text for text in texts for word in words)


def _scores(gradebook: Path) -> dict[str, dict[str, float]]:
    """student -> test -> score (manual if set, else automatic) in the gradebook."""
    with sqlite3.connect(f"file:{gradebook}?mode=ro", uri=True, timeout=30) as db:
        rows = db.execute(
            """SELECT submitted_assignment.student_id, base_cell.name, grade.auto_score,
                      grade.manual_score
               FROM grade JOIN base_cell ON grade.cell_id = base_cell.id
               JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id
               JOIN submitted_assignment ON submitted_notebook.assignment_id =
                    submitted_assignment.id""").fetchall()
    found: dict[str, dict[str, float]] = {}
    for student, test, auto, manual in rows:
        found.setdefault(student, {})[test] = manual if manual is not None else auto
    return found


def _hand_in(submissions: Path, releases: dict[str, dict], students: dict) -> list[str]:
    """Write each of ``students``' notebooks; return the students handed in as a symbolic link."""
    from tests.fixtures.notebooks.submissions import submission_notebook

    links = []
    for student, (level, name, _) in students.items():
        folder = submissions / student
        folder.mkdir(parents=True)
        target = folder / f"{level}.ipynb"
        if name is None:
            nb = submission_notebook(student, releases[level])
        else:
            link_to = _catalog().directives(level, name).get("symlink-to")
            if link_to:
                links.append((target, Path("..") / link_to / f"{level}.ipynb"))
                continue
            nb = _catalog().catalog_notebook(level, name, releases[level])
        target.write_text(json.dumps(nb, indent=1))
    for target, points_at in links:
        target.symlink_to(points_at)
    return [str(target) for target, _ in links]


def _feedback_html(course, student: str, level: str) -> str:
    """``student``'s feedback HTML of notebook ``level``, generated by nbgrader after the batch
    (empty if nbgrader made none)."""
    code = ("import sys\nfrom pathlib import Path\nfrom graders.nbgrader_plumbing.course import "
            "nbgrader_api\napi = nbgrader_api(Path(sys.argv[1]))\n"
            "print(api.generate_feedback(sys.argv[2], sys.argv[3], force=True))")
    made = subprocess.run([sys.executable, "-c", code, str(course.root), course.assignment,
                           student], capture_output=True, text=True, timeout=300,
                          cwd=course.root)
    page = course.root / "feedback" / student / course.assignment / f"{level}.html"
    return page.read_text(errors="replace") if page.exists() else (
        f"(no feedback: {made.stdout[-400:]} {made.stderr[-400:]})")


def grade_catalog_batch(scratch: Path, wrap: tuple[str, ...] = (),
                        students: dict | None = None) -> dict:
    """Build a course in ``scratch``, hand in ``students`` (by default every one of
    :data:`STUDENTS`), grade them all in one batch contained in a PID namespace of its own, the
    grade command run under ``wrap`` (a command prefix, such as :func:`docker_root`'s); what the
    tests of the batch look at."""
    from tests.fixtures.notebooks.course_cache import fresh_course

    require_tools()
    course = fresh_course(scratch / "course")
    releases = {level: json.loads((course.release_dir / f"{level}.ipynb").read_text())
                for level in _catalog().LEVELS}
    students = STUDENTS if students is None else students
    submissions = scratch / "submissions"
    _hand_in(submissions, releases, students)
    home = scratch / "home"
    home.mkdir()
    (home / ".profile").write_text("# a decoy home: nothing may change here\n")
    (home / "gradebook.db").write_bytes(course.gradebook_path.read_bytes())

    # The checkout is shared with other work that may add files to solutions/ meanwhile: there,
    # a changed or deleted file counts, a new one does not.
    canaries = {
        "the course directory": (course.root, NBGRADER_WRITES),
        SOLUTIONS: (ROOT / "solutions", ()),
        "the submissions folder": (submissions, ()),
        "$HOME (with a decoy gradebook.db)": (home, ()),
    }
    hashed = {label: _hash_tree(root, skip) for label, (root, skip) in canaries.items()}
    droppings = _droppings()
    before = _processes()
    csv_path = scratch / "scores.csv"
    grade = [sys.executable, "-m", "graders.cli", "grade", str(submissions), "--course",
             str(course.root), "--csv", str(csv_path), "--quiet", "--no-feedback"]
    with (scratch / "stderr.txt").open("wb") as stderr:
        shim = subprocess.Popen([*contained(), "--net", sys.executable, "-c", _SHIM, *wrap,
                                 *grade],
                                cwd=scratch, env=grading_env(home), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
    result: dict = {"course": course, "students": sorted(students)}
    try:
        # The grade command's own output goes to stderr (tqdm, warnings) and stdout; the shim's
        # last line is "ENDED <status>".
        deadline = time.monotonic() + 1500
        lines = []
        while time.monotonic() < deadline:
            line = shim.stdout.readline()
            if not line:
                break
            lines.append(line.decode(errors="replace"))
            if line.startswith(b"ENDED"):
                break
        ended = next((x for x in lines if x.startswith("ENDED")), None)
        result["status"] = int(ended.split()[1]) if ended else None
        result["stdout"] = "".join(lines)[-3000:]
        # unshare forks: the shim (process 1 inside) is the child of the unshare we started;
        # through its root, /proc is the namespace's own, nested namespaces' processes included.
        inner = _child_of(shim.pid)
        shim_root = f"/proc/{inner}/root/proc"
        result["left_alive"] = ([_describe(shim_root, pid) for pid in os.listdir(shim_root)
                                 if pid.isdigit() and pid != "1" and _alive(shim_root, pid)
                                 and not _harness(shim_root, pid)]
                                if inner else
                                ["the shim itself is gone: cannot look inside its namespace"])
        words = (str(scratch),)
        result["outside"] = [_describe("/proc", str(pid)) for pid, start in _processes().items()
                             if before.get(pid) != start and pid not in (shim.pid, inner)
                             and _alive("/proc", str(pid)) and _mentions(pid, words)
                             and not _harness("/proc", str(pid))]
        result["scores"] = _scores(course.gradebook_path)
    finally:
        try:
            said, _ = shim.communicate(b"done\n", timeout=60)
        except (subprocess.TimeoutExpired, OSError):
            shim.kill()
            said, _ = shim.communicate()
        if "scores" in result:  # the shim, process 1, has ended: its namespace's processes too
            result["scores_later"] = _scores(course.gradebook_path)
        seen = [line[5:] for line in said.decode(errors="replace").splitlines()
                if line.startswith("SEEN ")]
        result["connections"] = json.loads(seen[0]) if seen else [
            f"the shim did not say what reached its listener: {said[-300:]!r}"]
        err = (scratch / "stderr.txt").read_bytes()
        text = err.decode(errors="replace")
        first = text.find("Traceback")
        result["autograde_failed"] = set(re.findall(r"nbgrader could not autograde (.+?): ",
                                                    text))
        result["stderr"] = (text[first:first + 3000] + "\n...\n" if first >= 0 else "") \
            + text[-3000:]
    result["written"] = {label: _diff(hashed[label], _hash_tree(root, skip),
                                      new_files=label != SOLUTIONS)
                         for label, (root, skip) in canaries.items()}
    result["droppings"] = sorted(_droppings() - droppings)
    result["csv"] = csv_path.read_text(errors="replace") if csv_path.exists() else ""
    outputs = {"stdout": "".join(lines), "stderr": text, "the CSV": result["csv"]}
    result["escapes"] = [f"{where}: {said[max(0, i - 60):i + 60]!r}"
                         for where, said in outputs.items() for i in [said.find("\x1b")]
                         if i >= 0]
    result["feedback"] = {student: _feedback_html(course, student, level)
                          for student, (level, name, _) in students.items()
                          if name and _catalog().directives(level, name).get("written-answer")}
    return result


def _child_of(pid: int) -> int | None:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    return int(children[0]) if children else None


def said_by(batch) -> str:
    """What the batch's grade command said, for a failing assertion."""
    return f"status {batch['status']}\n{batch['stdout']}\n{batch['stderr']}"


# -- the browser ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's chromium (a skip that says how to install it, or a failure in CI)."""
    from tests.browser import require_browser

    return require_browser()


@pytest.fixture(scope="session")
def playwright_session(chromium):
    """The session's one Playwright: a sync Playwright refuses to start while another runs in
    the same thread, so every browser test starts its Chromium from this one."""
    from playwright.sync_api import sync_playwright

    manager = sync_playwright().start()
    try:
        yield manager
    finally:
        manager.stop()


@pytest.fixture(scope="session")
def browser(chromium, playwright_session, tmp_path_factory):
    """One headless Chromium context for the session (a fresh profile)."""
    from tests.browser import chromium_context

    with chromium_context(chromium, tmp_path_factory.mktemp("chromium-profile"),
                          playwright_session) as context:
        yield context


@pytest.fixture(scope="session")
def lab(chromium, tmp_path_factory):
    """``checkpoint-lab lab --no-browser`` on a fresh workspace of the real course."""
    from tests.browser import start_lab, stop_lab

    scratch = tmp_path_factory.mktemp("lab")
    running = start_lab(scratch / "workspace", scratch)
    try:
        yield running
    finally:
        stop_lab(running)


@pytest.fixture
def page(browser, lab):
    """A new tab on the session's JupyterLab, whose notebooks are as released."""
    from tests.browser import TIMEOUT_MS, fresh_notebooks

    fresh_notebooks(lab)
    tab = browser.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    try:
        yield tab
    finally:
        tab.close()


@pytest.fixture(scope="session")
def plain_lab(chromium, tmp_path_factory):
    """A plain ``jupyter lab``, as Binder and JupyterHub start it, in a new environment where the
    course is installed as ``environment.yml`` installs it (a minute or more), serving a copy of the
    repository's notebooks (``lessons/``, ``exercises/*.ipynb``) as the student image holds them;
    a new user with no Jupyter settings of their own."""
    from tests.browser import install_like_binder, start_plain_lab, stop_lab

    scratch = tmp_path_factory.mktemp("plain-lab")
    bin_dir = install_like_binder(scratch / "env")
    root = scratch / "checkpoint-lab"
    shutil.copytree(ROOT / "lessons", root / "lessons",
                    ignore=shutil.ignore_patterns("*.py", ".ipynb_checkpoints"))
    (root / "exercises").mkdir()
    for notebook in sorted((ROOT / "exercises").glob("*.ipynb")):
        shutil.copyfile(notebook, root / "exercises" / notebook.name)
    running = start_plain_lab(root, scratch, bin_dir)
    try:
        yield running
    finally:
        stop_lab(running)


# -- the authored exercises as notebooks (tests/test_exercise_content.py, test_cli_check.py) ----

def notebook_variant(name: str, variant: str):
    """The notebook built from the authored file ``exercises/src/<name>.py`` with the ``starter``
    or ``reference`` answers.

    ``starter`` is what a student receives (the starter code in each answer cell, an empty
    written answer); ``reference`` has the solutions in the answer cells.
    """
    from graders.nbgrader_plumbing.build import build_source_notebook

    nb = build_source_notebook(ROOT / "exercises" / "src" / f"{name}.py")
    for cell in nb.cells:
        if not cell.metadata.get("nbgrader", {}).get("solution"):
            continue
        if cell.cell_type == "code":
            if variant == "starter":
                cell.source = cell.metadata["checkpoint_lab"]["starter"]
            else:
                cell.source = "\n".join(line for line in cell.source.splitlines()
                                        if "BEGIN SOLUTION" not in line
                                        and "END SOLUTION" not in line)
        elif variant == "starter":
            cell.source = "YOUR ANSWER HERE"
    return nb


# -- opt-in tests --------------------------------------------------------------------------------

def pytest_collection_modifyitems(config, items):
    """Tests marked ``index`` ask the package index for its newest releases: their outcome moves
    with the index, so they run only when asked for (``-m index``, or any ``-m`` naming it)."""
    if "index" in (config.getoption("markexpr") or ""):
        return
    kept = [item for item in items if item.get_closest_marker("index") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept
