"""What a handed-in notebook could do to a ``checkpoint-lab grade`` batch, and what the instructor
reads: each harm of issue 16 (items 4, 13, 14, 15, 18) and the first hour of issue 19 (items 3,
11, 13), in one real batch (real nbgrader, the real sandbox, the real gradebook).

One submissions folder holds: an honest reference split by JupyterLab's *Split Cell*; a written
answer with live HTML; a student id that is a spreadsheet formula; an exception message with
terminal escape sequences; a notebook and a student folder that are symbolic links to another
student's; a notebook of 2,500 cells. Each test asserts one harm is gone.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from graders.checks.base import HINT_LINE
from tests.fixtures.notebooks.course_cache import shared_course
from tests.fixtures.notebooks.submissions import (
    LEVEL2,
    STARTER2,
    _level2,
    split_cell,
    submission_notebook,
    write_all,
)

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

LEVEL4 = "04_parallel_tool_calls"
ENV = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
FORMULA = "=2+5"
#: A written answer that would run script in the feedback page or in formgrader.
PAYLOAD = ("The first failure is the in-place write.\n\n"
           "<script>window.__xss = 'script'</script>\n"
           "<img src=x onerror=\"window.__xss = 'onerror'\">\n"
           "[a markdown link](javascript:window.__xss='markdown')\n"
           "<a href=\"javascript:window.__xss='href'\">an html link</a>\n"
           "\n![a pixel](https://tracker.invalid/md.png)\n"
           "<img src=\"https://tracker.invalid/img.gif\" alt=\"a pixel\">\n"
           "<img src=\"//tracker.invalid/relative-scheme.gif\">\n"
           "<img srcset=\"https://tracker.invalid/srcset.png 2x\">\n"
           "<picture><source srcset=\"https://tracker.invalid/source.png\"></picture>\n"
           "<span style=\"background: url(https://tracker.invalid/style.png)\">styled</span>\n"
           "<video poster=\"https://tracker.invalid/poster.png\"></video>\n"
           "<link rel=\"stylesheet\" href=\"https://tracker.invalid/sheet.css\">\n")
#: An exception message that rewrites the instructor's terminal: erase the line, go up, forge.
FORGED_ROW = "l2_atomic_save             3/3   passed"
FORGE = ("\x1b[2K\r\x1b[1A\x1b[2K" + FORGED_ROW + "\n  l2_save_point_a  3/3   passed\u202e")


def _cells(nb: dict, grade_id: str) -> list[int]:
    return [i for i, c in enumerate(nb["cells"])
            if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]


def _set(nb: dict, grade_id: str, source: str) -> dict:
    nb["cells"][_cells(nb, grade_id)[0]]["source"] = source
    return nb


def _write(folder: Path, student: str, nb: dict, name: str = LEVEL2) -> Path:
    (folder / student).mkdir(parents=True, exist_ok=True)
    path = folder / student / f"{name}.ipynb"
    path.write_text(json.dumps(nb))
    return path


def _grade(folder: Path, course, csv_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "graders.cli", "grade", str(folder), "--course",
                           str(course.root), "--csv", str(csv_path), *extra],
                          capture_output=True, text=True, env=ENV, timeout=900)


@pytest.fixture(scope="module")
def course():
    return shared_course()


@pytest.fixture(scope="module")
def batch(course, tmp_path_factory):
    """``checkpoint-lab grade`` on the harms folder: (the run, CSV rows by student)."""
    folder = tmp_path_factory.mktemp("harms") / "submissions"
    release = json.loads((course.release_dir / f"{LEVEL2}.ipynb").read_text())
    reference = submission_notebook("reference", release)
    split = split_cell(_set(reference, "l2_name_the_failures", "First, the in-place write.\n\n"
                            "Second, no save point A."), "l2_save_checkpoint",
                       "def save_checkpoint(")
    _write(folder, "harm_split", split_cell(split, "l2_name_the_failures", "Second,"))
    xss = _set(submission_notebook("starter", release), "l2_name_the_failures", PAYLOAD)
    _write(folder, "harm_xss", xss)
    _write(folder, "harm_xss", json.loads((course.release_dir / f"{LEVEL4}.ipynb").read_text()),
           LEVEL4)
    _write(folder, FORMULA, reference)
    _write(folder, "harm_forger", _level2(release, STARTER2,
                                          save_extra=f"    raise RuntimeError({FORGE!r})\n"))
    victim = _write(folder, "harm_victim", reference)
    (folder / "harm_linker").mkdir()
    (folder / "harm_linker" / f"{LEVEL2}.ipynb").symlink_to(victim)
    (folder / "harm_linkdir").symlink_to(folder / "harm_victim")
    huge = copy.deepcopy(reference)
    huge["cells"] += [{"cell_type": "markdown", "metadata": {}, "source": ""}] * 2500
    _write(folder, "harm_huge", huge)
    csv_path = folder.parent / "scores.csv"
    proc = _grade(folder, course, csv_path)
    with open(csv_path, newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    return proc, rows


def _row(rows: dict, student: str) -> dict:
    return rows.get(student) or rows[f"'{student}"]


def _feedback(course, student: str, notebook: str = LEVEL2) -> str:
    return (course.feedback_dir(student) / f"{notebook}.html").read_text()


def test_the_batch_grades_every_student_it_should(batch):
    proc, rows = batch
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {"harm_split", "harm_xss", "harm_forger", "harm_victim", "harm_huge", "harm_linker",
            "harm_linkdir"} <= set(rows)


def test_an_honest_notebook_split_by_split_cell_gets_every_point(batch, course):
    _, rows = batch
    assert rows["harm_split"]["autograded_score"] == "10", rows["harm_split"]
    assert "l2_save_checkpoint was in 2 cells" in rows["harm_split"]["notes"]
    feedback = " ".join(_feedback(course, "harm_split").split())
    assert "Graded as one cell." in feedback and "l2_name_the_failures" in feedback
    nb = nbformat.read(course.autograded_dir("harm_split") / f"{LEVEL2}.ipynb", as_version=4)
    answer = nb.cells[_cells(nb, "l2_name_the_failures")[0]].source
    assert "First, the in-place write." in answer and "Second, no save point A." in answer


class _Live(HTMLParser):
    """What in a page could run the payload's code (``__xss``): a script body, an on*
    attribute, a javascript: URL (the page's own scripts and handlers do not name it)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._script = False

    def handle_starttag(self, tag, attrs):
        self._script = tag == "script"
        for name, value in attrs:
            live = name.startswith("on") or (value or "").strip().lower().startswith("javascript:")
            if live and "__xss" in (value or ""):
                self.found.append(f"<{tag} {name}={value!r}>")

    def handle_data(self, data):
        if self._script and "__xss" in data:
            self.found.append(f"<script>{data}</script>")

    def handle_endtag(self, tag):
        self._script = False


def _live(html: str) -> list[str]:
    parser = _Live()
    parser.feed(html)
    return parser.found


class _Loads(HTMLParser):
    """Everything a page would fetch by itself: each attribute that loads a URL (a link one
    clicks is not a load), and each ``url(...)`` in a style, that is not embedded data."""

    LOADING = {"src", "srcset", "poster", "data", "background", "action", "formaction",
               "manifest", "xlink:href"}

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.meta: list[dict] = []
        self._style = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._style = tag == "style"
        if tag == "meta":
            self.meta.append(attrs)
        if tag in ("link", "image", "use") and attrs.get("href"):
            self.found.append(f"<{tag} href={attrs['href']!r}>")
        if tag == "script" and attrs.get("src"):
            self.found.append(f"<script src={attrs['src']!r}>")
        for name, value in attrs.items():
            value = (value or "").strip()
            if name in self.LOADING and value and not value.startswith("data:"):
                self.found.append(f"<{tag} {name}={value!r}>")
            if name == "style":
                self.found += _remote_urls(value)

    def handle_data(self, data):
        if self._style:  # elsewhere it is text: an escaped tag the student wrote is harmless
            self.found += _remote_urls(data)

    def handle_endtag(self, tag):
        self._style = False


def _remote_urls(css: str) -> list[str]:
    """``url(...)`` in ``css`` that reach another host (``url(https://...)``, ``url(//...)``)."""
    import re

    return [m.group(0) for m in re.finditer(r"url\(\s*['\"]?\s*(https?:)?//[^)]*\)", css, re.I)]


def test_the_feedback_loads_nothing_from_the_network(batch, course):
    """Issue 28 item 5, issue 29 item 6: no MathJax from a CDN, no student image from a remote
    host (src, srcset, source, poster, style url()), and a Content-Security-Policy as a second
    wall."""
    for student, notebook in [("harm_xss", LEVEL2), ("harm_xss", LEVEL4),
                              ("harm_split", LEVEL2)]:
        html = _feedback(course, student, notebook)
        parser = _Loads()
        parser.feed(html)
        assert parser.found == [], (student, notebook, parser.found)
        assert "mathjax" not in html.lower()
        csp = [m["content"] for m in parser.meta
               if m.get("http-equiv", "").lower() == "content-security-policy"]
        assert csp and "default-src 'none'" in csp[0], parser.meta
        assert "script-src" not in csp[0] and "http" not in csp[0], csp
    html = _feedback(course, "harm_xss")
    assert "tracker.invalid/md.png" not in html and "tracker.invalid/img.gif" not in html
    assert "a pixel" in html  # the image's alt text is still there


def test_a_written_answer_cannot_run_script_in_the_feedback(batch, course):
    html = _feedback(course, "harm_xss")
    assert "The first failure is the in-place write." in html
    assert _live(html) == [], _live(html)
    assert "__xss" in html  # still there, as text the student can read


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _in_container() -> bool:
    return Path("/.dockerenv").exists() or Path("/run/.containerenv").exists()


def test_formgrader_starts_as_documented_and_shows_the_answer_inert(batch, course):
    from nbgrader.api import Gradebook

    from graders.nbgrader_plumbing.settings import LAB_CONFIG

    with Gradebook(course.db_url) as gb:
        submission = gb.find_submission_notebook(LEVEL2, course.assignment, "harm_xss").id
    port, token = _free_port(), "checkpoint-lab-test"
    cmd = [str(Path(sys.executable).parent / "jupyter"), "lab", f"--config={LAB_CONFIG}",
           "--no-browser", f"--port={port}", f"--ServerApp.token={token}"]
    if os.geteuid() == 0 and not _in_container():
        cmd.append("--allow-root")  # README: outside a container, root must say so
    lab = subprocess.Popen(cmd, cwd=course.root, env=ENV, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    try:
        page, deadline = None, time.monotonic() + 90
        while page is None and time.monotonic() < deadline:
            assert lab.poll() is None, f"JupyterLab exited at once: {lab.stderr.read()[-2000:]}"
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/formgrader/submissions/{submission}/",
                headers={"Authorization": f"token {token}"})
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    page = response.read().decode()
            except OSError:
                time.sleep(1)
        assert page is not None, "formgrader never answered"
    finally:
        lab.terminate()
        lab.wait(timeout=30)
    assert "The first failure is the in-place write." in page
    assert _live(page) == [], _live(page)


def test_a_student_string_cannot_forge_rows_in_the_terminal(batch):
    proc, _ = batch
    assert "\x1b" not in proc.stdout + proc.stderr and "\u202e" not in proc.stdout
    block = proc.stdout.split("\nharm_forger: ")[1].split("\n\n")[0].splitlines()
    rows = [line for line in block if line.startswith("  l2_")]
    assert rows and all(" 0/" in row for row in rows), block
    assert not [line for line in block if line.strip().startswith(FORGED_ROW)], block
    assert "\\x1b[2K" in proc.stdout  # shown, not obeyed


def test_a_student_id_is_never_a_formula_in_the_csv(batch):
    _, rows = batch
    assert f"'{FORMULA}" in rows and FORMULA not in rows
    assert rows[f"'{FORMULA}"]["SIS User ID"] == f"'{FORMULA}"
    assert rows[f"'{FORMULA}"]["autograded_score"] == "10"


def test_a_symbolic_link_is_never_followed(batch):
    proc, rows = batch
    assert rows["harm_victim"]["autograded_score"] == "10"
    for student in ("harm_linker", "harm_linkdir"):
        assert rows[student]["autograded_score"] == "0", rows[student]
        assert "symbolic link" in rows[student]["notes"], rows[student]
    assert "symbolic link" in proc.stderr


def test_a_notebook_far_larger_than_the_exercise_is_refused_as_its_students(batch):
    _, rows = batch
    assert rows["harm_huge"]["autograded_score"] == "0"
    assert "cells, more than the 2,000" in rows["harm_huge"]["notes"], rows["harm_huge"]


def test_the_table_starts_with_the_class_and_never_says_hint_or_repeats_a_status(batch, course):
    proc, _ = batch
    tier, out = proc.stdout.split("\n", 1)  # one line on the sandbox that graded, then the table
    assert tier.startswith("sandbox: ") and " tier " in tier, tier
    assert out.startswith("Class: "), out[:300]
    assert "Who earned nothing, and why:" in out
    assert "harm_xss" in out.split("\n\n")[0]  # the class summary names who earned nothing
    for student in ("harm_xss", "harm_forger"):
        assert HINT_LINE not in _feedback(course, student)
    assert "hint()" not in out
    assert "(hidden check): not passed" not in out
    assert "(hidden check)" not in out


def test_the_table_and_csv_render_from_the_stored_record_not_the_text(batch, course):
    from graders.nbgrader_plumbing.gradebook import read_results
    from graders.nbgrader_plumbing.score_report import format_student

    path = course.autograded_dir("harm_forger") / f"{LEVEL2}.ipynb"
    nb = json.loads(path.read_text())
    cell = nb["cells"][_cells(nb, "l2_atomic_save")[0]]
    record = cell["metadata"]["checkpoint_lab"]["result"]
    assert record["status"] == "failed" and record["cause"] and record["points"] == 3
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "rendered text only"}]
    record["message"] = "the record's own words"
    path.write_text(json.dumps(nb))
    table = format_student(read_results(course, ["harm_forger"])[0], width=100)
    assert "the record's own words" in table and "rendered text only" not in table


def test_a_clean_batch_leaves_no_empty_log_in_the_course_folder(course, tmp_path):
    from graders.nbgrader_plumbing.grading_worker import LOG_NAME

    release = json.loads((course.release_dir / f"{LEVEL2}.ipynb").read_text())
    _write(tmp_path / "subs", "harm_clean", submission_notebook("reference", release))
    proc = _grade(tmp_path / "subs", course, tmp_path / "s.csv", "--quiet", "--no-feedback")
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = course.root / LOG_NAME
    assert not log.exists() or log.stat().st_size > 0, "an empty log was left behind"


def test_the_exchange_is_what_release_assignment_wants(course, tmp_path):
    proc = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "release_assignment",
                           course.assignment, "--force"], cwd=course.root, env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Permissions for exchange directory" not in proc.stdout + proc.stderr
    shutil.rmtree(course.root / "exchange" / "checkpoint-lab", ignore_errors=True)


def test_a_student_whose_grading_outlasts_its_time_is_stopped_and_recorded(course, tmp_path):
    write_all(tmp_path / "subs", course.release_dir, ["reference"], not_json=None)
    (tmp_path / "subs" / "reference").rename(tmp_path / "subs" / "harm_slow")  # four notebooks
    proc = _grade(tmp_path / "subs", course, tmp_path / "s.csv", "--student-timeout", "1",
                  "--quiet")
    with open(tmp_path / "s.csv", newline="") as f:
        row = next(csv.DictReader(f))
    assert row["autograded_score"] == "0"
    assert "took longer than 1 s" in row["notes"], row
    assert proc.returncode == 1 and "took longer than 1 s" in proc.stderr
