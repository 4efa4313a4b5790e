"""Grading as people see it, in Debian's Chromium: the Validate dialog and the feedback page.

- A student clicks Validate on the released Level 2 notebook in JupyterLab: the dialog says, for
  each check, what the check cell says (not passed, the points, and why), not nbgrader's
  "Partial credit; passed some but not all of the tests", and its text wraps in the dialog.
- An instructor opens a student's feedback HTML at 1280 px: no horizontal scrolling, each
  verdict's reason readable in full; a written answer not yet marked says it awaits marking,
  and after marking, regenerated feedback (`nbgrader generate_feedback --force`) shows its score.

Screenshots in ``test-artifacts/browser/``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from tests.browser import (
    NBGRADER_PARTIAL,
    TIMEOUT_MS,
    Lab,
    close_dialog,
    free_port,
    open_notebook,
    save,
    shot,
    stop_lab,
    validate,
)

pytestmark = pytest.mark.browser

EXERCISE = "exercises/lesson2/02_two_latent_failures.ipynb"


def _no_sideways_scrolling(page, selector: str) -> list:
    """Elements matching ``selector`` (and the page) whose content is wider than their box."""
    return page.evaluate(
        """(sel) => {
            const wide = [...document.querySelectorAll(sel)]
                .filter(e => e.scrollWidth > e.clientWidth + 1)
                .map(e => [e.tagName, e.scrollWidth, e.clientWidth, e.innerText.slice(0, 80)]);
            const doc = document.scrollingElement;
            if (doc.scrollWidth > doc.clientWidth + 1) wide.push(['page', doc.scrollWidth,
                                                                  doc.clientWidth, '']);
            return wide;
        }""", selector)


def test_validate_on_the_released_notebook_says_what_each_check_says(page, lab):
    open_notebook(page, lab, EXERCISE)
    save(page)
    kind, text = validate(page)
    verdicts = page.locator(".jp-Dialog-body pre").filter(
        has_text=re.compile(r": not passed \(0/3 points\)"))
    verdicts.first.scroll_into_view_if_needed()
    shot(page, "20-validate-released-says-why")
    dialog = page.locator(".jp-Dialog-content").bounding_box()
    boxes = [v.bounding_box() for v in verdicts.all()]
    wide = _no_sideways_scrolling(page, ".jp-Dialog .jp-Dialog-body pre")
    close_dialog(page)

    assert "validation-failed" in kind, text
    assert NBGRADER_PARTIAL not in text, text
    # Both visible checks, each as its check cell says it: not passed, the points, and why.
    said = " ".join(text.split())
    assert len(re.findall(r"\w: not passed \(0/3 points\)", said)) == 2, said
    # ... and what each found is held back until part 1 is written in the saved notebook (the
    # diagnosis is the student's to make first): it ran, it did not pass, nothing of the judge's
    assert said.count("Its findings appear once your written answer") == 2, said
    assert "torn" not in said.lower() and "crash point" not in said, said
    assert "You did not provide a response." in said  # the empty written answer, as nbgrader says
    # ... named by its question, not by its placeholder text
    assert "YOUR ANSWER HERE" not in said, said
    assert ('Your written answer to "Part 1: name the two failures" (4 points, marked by hand) '
            "is still empty") in said, said
    # Wrapped inside the dialog: nothing to scroll sideways, each verdict within the dialog.
    assert not wide, wide
    assert len(boxes) == 2
    for box in boxes:
        assert dialog["x"] <= box["x"] and box["x"] + box["width"] <= dialog["x"] + dialog["width"]


# -- the feedback page ------------------------------------------------------------------------


WRITTEN_ANSWER = ("The save writes checkpoint.json in place, so a crash mid-save leaves half a "
                  "file; and nothing is saved before a tool runs, so resume runs it again.")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course directory as `checkpoint-lab course` builds it, with student ann."""
    from graders.nbgrader_plumbing.course import build_course

    return build_course(tmp_path_factory.mktemp("course") / "course", students=["ann"])


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    """``course`` with ann graded: the released Level 2 notebook, written answer filled in."""
    from graders.cli import main

    root = tmp_path_factory.mktemp("feedback")
    nb = nbformat.read(course.release_dir / "02_two_latent_failures.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "l2_name_the_failures":
            cell.source = WRITTEN_ANSWER
    (root / "subs" / "ann").mkdir(parents=True)
    nbformat.write(nb, root / "subs" / "ann" / "02_two_latent_failures.ipynb")
    status = main(["grade", str(root / "subs"), "--course", str(course.root), "--csv",
                   str(root / "grades.csv"), "--quiet"])
    assert status == 0
    return course


def _open(page, path: Path) -> None:
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(path.as_uri(), timeout=TIMEOUT_MS)


@pytest.mark.nbgrader
def test_feedback_wraps_every_reason_and_says_what_awaits_marking(browser, graded):
    html = graded.feedback_dir("ann") / "02_two_latent_failures.html"
    tab = browser.new_page()
    try:
        _open(tab, html)
        # No horizontal scrolling at 1280 px: not the page, not one output or code block.
        assert _no_sideways_scrolling(tab, "pre, .output_area, .output_subarea, .input_area") \
            == []
        verdict = tab.locator(".output_area pre").filter(
            has_text="survives a kill during a save: not passed (0/3 points)")
        verdict.scroll_into_view_if_needed()
        shot(tab, "21-feedback-verdict-wrapped")
        box = verdict.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1280, box
        said = " ".join(verdict.inner_text().split())
        assert "At torn_write_save_1: Killed" in said and "Resume would fail on json.load" in said

        notes = tab.locator(".checkpoint-lab-awaiting-marking")
        assert notes.count() == 2, notes.all_inner_texts()
        top = " ".join(notes.first.inner_text().split())
        assert "awaiting marking" in top and "l2_name_the_failures (4 points)" in top, top
        under = notes.nth(1)
        under.scroll_into_view_if_needed()
        shot(tab, "22-feedback-awaiting-marking")
        assert "Awaiting marking." in under.inner_text()
        # It sits right under the student's answer, inside the page's width.
        answer = tab.locator(".nbgrader_cell").filter(has_text=WRITTEN_ANSWER[:40])
        assert answer.bounding_box()["y"] < under.bounding_box()["y"]
        assert under.bounding_box()["x"] + under.bounding_box()["width"] <= 1280
    finally:
        tab.close()


@pytest.mark.nbgrader
def test_feedback_regenerated_after_marking_shows_the_mark(browser, graded):
    from nbgrader.api import Gradebook

    from graders.nbgrader_plumbing.course import nbgrader_api

    with Gradebook(graded.db_url) as gb:
        grade = gb.find_grade("l2_name_the_failures", "02_two_latent_failures",
                              graded.assignment, "ann")
        grade.manual_score = 3
        gb.db.commit()
    html = graded.feedback_dir("ann") / "02_two_latent_failures.html"
    before = html.read_text()
    result = nbgrader_api(graded.root).generate_feedback(graded.assignment, "ann", force=True)
    assert result["success"], result
    assert html.read_text() != before
    tab = browser.new_page()
    try:
        _open(tab, html)
        shot(tab, "23-feedback-after-marking")
        assert tab.locator(".checkpoint-lab-awaiting-marking").count() == 0
        assert "Written response (Score: 3.0 / 4.0)" in " ".join(
            tab.locator("#toc").inner_text().split())
    finally:
        tab.close()



# -- the course directory in JupyterLab --------------------------------------------------------


def _start_course_lab(course, scratch: Path) -> Lab:
    """JupyterLab in the course directory, started the way README says (LAB_COMMAND)."""
    from graders.nbgrader_plumbing.settings import LAB_COMMAND

    port, token = free_port(), os.urandom(12).hex()
    runtime_dir, log = scratch / "runtime", scratch / "course-lab.log"
    jupyter = Path(sys.executable).with_name("jupyter")
    cmd = [str(jupyter), *LAB_COMMAND.split()[1:], "--no-browser", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    env = dict(os.environ, JUPYTER_TOKEN=token, JUPYTER_RUNTIME_DIR=str(runtime_dir))
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, cwd=course.root, stdout=out, stderr=subprocess.STDOUT,
                                   env=env, start_new_session=True)
    lab = Lab(f"http://127.0.0.1:{port}", token, course.root, process, log, runtime_dir)
    for _ in range(300):
        if process.poll() is not None:
            raise AssertionError(f"jupyter lab exited: {log.read_text()[-3000:]}")
        try:
            lab.api("GET", "/api/status")
            return lab
        except OSError:
            time.sleep(0.2)
    stop_lab(lab)
    raise AssertionError(f"JupyterLab did not answer: {log.read_text()[-3000:]}")


def test_formgrader_in_the_course_directory_has_no_news_question_and_no_exchange_warning(
        browser, course, tmp_path):
    lab = _start_course_lab(course, tmp_path)
    tab = browser.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    try:
        tab.goto(f"{lab.url}/lab?reset&token={lab.token}")
        tab.get_by_role("menuitem", name="Nbgrader", exact=True).click()
        tab.get_by_role("menuitem", name="Formgrader").click()
        formgrader = tab.frame_locator("iframe").first
        formgrader.get_by_text("lesson2").first.wait_for()
        shot(tab, "24-course-formgrader")
        # What formgrader says when nbgrader's exchange is missing, or the course id unset.
        assert formgrader.locator("#warning-exchange, #warning-course-id").count() == 0
        assert formgrader.get_by_text("does not exist").count() == 0
        # Nothing covers formgrader: no news question, no other notification.
        assert tab.get_by_text("Jupyter news").count() == 0
        assert tab.locator(".Toastify__toast").count() == 0
        settings = lab.api("GET", "/lab/api/settings/@jupyterlab/apputils-extension:notification")
        assert settings["settings"]["fetchNews"] == "false"
    finally:
        tab.close()
        stop_lab(lab)
