"""Every adversarial catalog in ONE real nbgrader batch, and the harm it may not do.

A fresh course is built; the reference, the starter and every entry of every exercise's catalog
(``tests/fixtures/<exercise>/adversarial/``, ``tests/fixtures/catalog.py``) hand in as one student
each (the entry's code in its exercise's answer cell, its ``# notebook:`` directives applied: a
split answer cell, an odd student id, a symbolic link, odd metadata, 40,000 cells, HTML in the
written answer); ``checkpoint-lab grade`` grades them all at once. Then:

- every student's scores in the gradebook are what ``expected.json`` says (the reference full
  marks, the starter 0 autograded points);
- no process the batch started is left alive;
- nothing was written outside scratch: the course directory (but for what nbgrader itself writes),
  the checkout's ``solutions/``, the submissions folder, and a decoy ``$HOME`` holding a decoy
  ``gradebook.db`` hash the same before and after; no file the catalog drops appeared in the
  machine's ``/tmp`` or ``/dev/shm``;
- the gradebook still holds the same scores 4 s after the batch ended (a daemon may wait);
- no connection reached a listener the test keeps open on 127.0.0.1:47613 for the whole batch;
- no terminal escape sequence and no spreadsheet formula from a student reaches the grade
  command's output or the CSV; the feedback of the student whose written answer is HTML holds
  none of it live.

Containment, so that a grader without a sandbox harms nothing but this test: the batch runs under
a shim that is process 1 of its own PID namespace (``unshare``). The shim starts the grade command
and, when it ends, stays up until the test has looked for leftover processes (every process in
the namespace, nested ones included, but the shim) and read the gradebook again; then it exits and
the kernel ends whatever is left.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from graders.nbgrader_plumbing.course import build_course
from tests.conftest import ROOT
from tests.fixtures import catalog
from tests.fixtures.notebooks.course_cache import TEST_CELL_TIMEOUT
from tests.fixtures.notebooks.submissions import submission_notebook
from tests.test_adversarial import (
    CHECK_IDS,
    LEVEL2,
    contained,
    grading_env,
    require_tools,
)

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

POINTS = catalog.POINTS
#: student id -> (exercise, catalog entry or None, check id -> must pass).
STUDENTS: dict[str, tuple[str, str | None, dict[str, bool]]] = {
    "reference": (LEVEL2, None, dict.fromkeys(CHECK_IDS, True)),
    "starter": (LEVEL2, None, dict.fromkeys(CHECK_IDS, False)),
    **{catalog.student_id(level, name): (level, name, catalog.EXPECTED[level][name])
       for level, name in catalog.entries()},
}
#: Students this branch alone grades wrong in the batch, and the helper each waits for.
PENDING = {catalog.student_id(level, name): helper for (level, name), helper in
           {**catalog.PENDING, **catalog.PENDING_IN_NOTEBOOKS}.items()}
_INSTRUCTOR = "instructor (issue 16 item 4, 13, 14, 15, 17 or 18)"
#: Students whose notebook has odd nbgrader metadata: nbgrader may refuse to autograde them.
ODD_METADATA = {student for student, (level, name, _) in STUDENTS.items()
                if name and "odd-grade-id" in catalog.directives(level, name)}
#: Students whose notebook is a symbolic link: a grader that refuses links may leave them out.
LINKED = {student for student, (level, name, _) in STUDENTS.items()
          if name and catalog.directives(level, name).get("symlink-to")}
LISTEN = ("127.0.0.1", 47613)
#: What nbgrader and the grade command themselves write in the course directory (not hashed).
NBGRADER_WRITES = ("gradebook.db", "autograded", "feedback", "submitted",
                   "checkpoint-lab-grade.log")
SOLUTIONS = "the checkout's solutions/"
#: Names the catalog's cheats drop in /tmp or /dev/shm when nothing stops them.
DROPPINGS = ("checkpoint-lab-fill.bin", ".checkpoint-lab-runs-", "checkpoint-lab-drop-")
class _LiveHtml(HTMLParser):
    """The live pieces of a page that the written-answer cheat planted: a script element that
    says "pwned", an ``on*`` handler attribute, a ``javascript:`` link (escaped text is not)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        for name, value in attrs:
            if name.startswith("on") and "pwned" in (value or ""):
                self.found.append(f"<{tag} {name}=...>")
            if name in ("href", "src") and (value or "").strip().lower().startswith(
                    "javascript:"):
                self.found.append(f"<{tag} {name}=javascript:...>")

    def handle_data(self, data):
        if self._in_script and "pwned" in data:
            self.found.append("<script>...pwned...</script>")

    def handle_endtag(self, tag):
        self._in_script = False


def _live_html(page: str) -> list[str]:
    parser = _LiveHtml()
    parser.feed(page)
    return parser.found
#: Waits for the batch's end on its stdin; starts the grade command; reports how it ended.
_SHIM = """
import subprocess, sys
proc = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL)
print("ENDED", proc.returncode, flush=True)
sys.stdin.readline()
"""


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


class _Listener:
    """Accepts and records every connection to 127.0.0.1:47613 until closed."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind(LISTEN)
        except OSError as err:
            self.sock.close()
            pytest.fail(f"cannot listen on {LISTEN[0]}:{LISTEN[1]} ({err}): another run of "
                        "this test, or another program, holds the port; stop it and run again")
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.seen: list[str] = []
        self.open = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.open:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(0.5)
            try:
                data = conn.recv(200)
            except OSError:
                data = b""
            conn.close()
            self.seen.append(f"{peer}: {data[:120]!r}")

    def close(self) -> list[str]:
        self.open = False
        self.thread.join(5)
        self.sock.close()
        return self.seen


def _hand_in(submissions: Path, releases: dict[str, dict]) -> list[str]:
    """Write every student's notebook; return the students handed in as a symbolic link."""
    links = []
    for student, (level, name, _) in STUDENTS.items():
        folder = submissions / student
        folder.mkdir(parents=True)
        target = folder / f"{level}.ipynb"
        if name is None:
            nb = submission_notebook(student, releases[level])
        else:
            link_to = catalog.directives(level, name).get("symlink-to")
            if link_to:
                links.append((target, Path("..") / link_to / f"{level}.ipynb"))
                continue
            nb = catalog.catalog_notebook(level, name, releases[level])
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


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """Build a course, hand in every student, grade them all in one contained batch."""
    require_tools()
    scratch = tmp_path_factory.mktemp("adversarial-batch")
    course = build_course(scratch / "course", cell_timeout=TEST_CELL_TIMEOUT)
    releases = {level: json.loads((course.release_dir / f"{level}.ipynb").read_text())
                for level in catalog.LEVELS}
    submissions = scratch / "submissions"
    _hand_in(submissions, releases)
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
    listener = _Listener()
    csv_path = scratch / "scores.csv"
    grade = [sys.executable, "-m", "graders.cli", "grade", str(submissions), "--course",
             str(course.root), "--csv", str(csv_path), "--quiet", "--no-feedback"]
    with (scratch / "stderr.txt").open("wb") as stderr:
        shim = subprocess.Popen([*contained(), sys.executable, "-c", _SHIM, *grade],
                                cwd=scratch, env=grading_env(home), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
    result: dict = {"course": course, "students": sorted(STUDENTS)}
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
                                 if pid.isdigit() and pid != "1" and _alive(shim_root, pid)]
                                if inner else
                                ["the shim itself is gone: cannot look inside its namespace"])
        words = (str(scratch),)
        result["outside"] = [_describe("/proc", str(pid)) for pid, start in _processes().items()
                             if before.get(pid) != start and pid not in (shim.pid, inner)
                             and _alive("/proc", str(pid)) and _mentions(pid, words)]
        result["scores"] = _scores(course.gradebook_path)
        time.sleep(4)
        result["scores_later"] = _scores(course.gradebook_path)
    finally:
        try:
            shim.stdin.write(b"done\n")
            shim.stdin.close()
        except OSError:
            pass
        try:
            shim.wait(timeout=60)
        except subprocess.TimeoutExpired:
            shim.kill()
            shim.wait()
        shim.stdout.close()
        err = (scratch / "stderr.txt").read_bytes()
        text = err.decode(errors="replace")
        first = text.find("Traceback")
        result["autograde_failed"] = set(re.findall(r"nbgrader could not autograde (.+?): ",
                                                    text))
        result["stderr"] = (text[first:first + 3000] + "\n...\n" if first >= 0 else "") \
            + text[-3000:]
        result["connections"] = listener.close()
    result["written"] = {label: _diff(hashed[label], _hash_tree(root, skip),
                                      new_files=label != SOLUTIONS)
                         for label, (root, skip) in canaries.items()}
    result["droppings"] = sorted(_droppings() - droppings)
    result["csv"] = csv_path.read_text(errors="replace") if csv_path.exists() else ""
    outputs = {"stdout": "".join(lines), "stderr": err.decode(errors="replace"),
               "the CSV": result["csv"]}
    result["escapes"] = [f"{where}: {said[max(0, i - 60):i + 60]!r}"
                         for where, said in outputs.items() for i in [said.find("\x1b")]
                         if i >= 0]
    result["feedback"] = {student: _feedback_html(course, student, level)
                          for student, (level, name, _) in STUDENTS.items()
                          if name and catalog.directives(level, name).get("written-answer")}
    return result


def _child_of(pid: int) -> int | None:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    return int(children[0]) if children else None


def _said(batch) -> str:
    return f"status {batch['status']}\n{batch['stdout']}\n{batch['stderr']}"


@pytest.mark.timeout(1800)
def test_the_batch_ends_and_grades_everyone(batch):
    assert batch["status"] is not None, f"checkpoint-lab grade did not end: {_said(batch)}"
    failed = batch["autograde_failed"]
    # nbgrader may refuse a notebook whose metadata is odd (that student's failure, said so),
    # and refuses a split answer cell until the grader joins them (a pending entry).
    allowed = {catalog.student_id(level, name) for level, name in catalog.PENDING_IN_NOTEBOOKS
               } | ODD_METADATA
    assert failed <= allowed, f"nbgrader failed {sorted(failed - allowed)}: {_said(batch)}"
    assert batch["status"] == (1 if failed else 0), _said(batch)
    missing = [s for s in batch["students"] if s not in batch["scores"] and s not in LINKED]
    assert not missing, f"not in the gradebook: {missing}\n{_said(batch)}"


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("student", [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=f"waits for {PENDING[s]}"))
    if s in PENDING else s for s in sorted(STUDENTS)])
def test_scores_match_expected(batch, student):
    scores = batch["scores"].get(student)
    if scores is None and student in LINKED:
        scores = {}  # a link refused: nothing of this student's was graded, so no points
    assert scores is not None, f"{student} is not in the gradebook: {_said(batch)}"
    level, _, expected = STUDENTS[student]
    want = {check: POINTS[check] if passed else 0 for check, passed in expected.items()}
    got = {check: scores.get(check, 0 if student in LINKED else None) for check in expected}
    assert got == want, f"{student} ({level}): gradebook {got}, expected {want}"


@pytest.mark.timeout(1800)
def test_the_reference_gets_full_marks_and_the_starter_none(batch):
    assert all(batch["scores"]["reference"].get(c) == POINTS[c] for c in CHECK_IDS)
    assert sum(batch["scores"]["starter"].get(c) or 0 for c in CHECK_IDS) == 0


@pytest.mark.timeout(1800)
def test_no_process_left_alive(batch):
    assert not batch["left_alive"], (
        "processes the batch started were still alive after it ended:\n"
        + "\n".join(batch["left_alive"][:40]))
    assert not batch["outside"], ("processes mentioning the batch's folders outlived it:\n"
                                  + "\n".join(batch["outside"][:40]))


@pytest.mark.timeout(1800)
def test_nothing_written_outside_scratch(batch):
    written = {label: paths for label, paths in batch["written"].items() if paths}
    assert not written, f"changed by the batch: {written}"
    assert not batch["droppings"], f"new files in /tmp or /dev/shm: {batch['droppings']}"


@pytest.mark.timeout(1800)
def test_gradebook_unchanged_after_the_batch(batch):
    changed = {s: (batch["scores"].get(s), batch["scores_later"].get(s))
               for s in set(batch["scores"]) | set(batch["scores_later"])
               if batch["scores"].get(s) != batch["scores_later"].get(s)}
    assert not changed, f"scores changed in the 4 s after the batch ended: {changed}"


@pytest.mark.timeout(1800)
def test_no_connection_reached_the_listener(batch):
    assert not batch["connections"], (
        f"connections to {LISTEN[0]}:{LISTEN[1]} during the batch: {batch['connections']}")


@pytest.mark.timeout(1800)
def test_no_terminal_escape_from_a_student_reaches_the_output_or_the_csv(batch):
    assert not batch["escapes"], batch["escapes"]


@pytest.mark.timeout(1800)
@pytest.mark.xfail(strict=True, reason=f"waits for {_INSTRUCTOR}: CSV injection (16.14)")
def test_no_csv_cell_starts_as_a_spreadsheet_formula(batch):
    cells = [cell for row in csv.reader(io.StringIO(batch["csv"])) for cell in row]
    assert cells, "no CSV written"
    formulas = [cell for cell in cells if cell[:1] in ("=", "+", "-", "@")]
    assert not formulas, formulas


@pytest.mark.timeout(1800)
@pytest.mark.xfail(strict=True, reason=f"waits for {_INSTRUCTOR}: student HTML (16.13)")
def test_html_in_a_written_answer_is_not_live_in_the_feedback(batch):
    assert batch["feedback"], "no student handed in HTML"
    for student, html in batch["feedback"].items():
        assert not html.startswith("(no feedback"), f"{student}: {html}"
        live = _live_html(html)
        assert not live, f"{student}'s feedback keeps {live} live"
