"""Every JupyterLab in the course's environment behaves as ``checkpoint-lab lab`` does (issue 28
items 1 and 2), driven in Chromium.

One server for every assert here (they are slow): the course's own editable ``.venv`` (which
copies none of pyproject's data files; ``course.py`` ran ``checkpoint-lab doctor --repair``), its
plain ``jupyter lab`` with nothing of the course on the command line and a new user's settings,
started the way a repo2docker image (Binder, Zero to JupyterHub) starts it: the repository's
``start`` first, which opens a workspace made from the repository root. The ``pip install .``
environment is driven by tests/test_browser_hub.py (``plain_lab``). Screenshots in
``test-artifacts/browser/``.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from graders.cli.doctor import examine
from tests.browser import (
    BIN,
    NBGRADER_PARTIAL,
    TIMEOUT_MS,
    close_dialog,
    modified_on_open,
    open_notebook,
    run_all,
    save,
    shot,
    start_plain_lab,
    stop_lab,
    validate,
    visible,
)

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

#: The notebooks that were marked modified on open at the repository root (issue 28).
SEEN_MODIFIED = ["lessons/02_two_save_points.ipynb", "lessons/03_atomic_save.ipynb",
                 "lessons/05_several_tool_calls_in_one_turn.ipynb",
                 "exercises/lesson2/03_power_cut.ipynb"]
STARTER = "exercises/lesson2/02_two_latent_failures.ipynb"


@pytest.fixture(scope="module")
def binder_lab(chromium, tmp_path_factory):
    """``start`` then ``jupyter lab`` from the editable .venv, as repo2docker's entrypoint runs."""
    wrong = [f"{f.path} {f.problem}" for f in examine(BIN.parent) if f.problem]
    assert not wrong, f"course.py did not put the course's settings into .venv: {wrong}"
    scratch = tmp_path_factory.mktemp("binder-lab")
    home = scratch / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHECKPOINT_LAB")}
    env.update(HOME=str(home), REPO_DIR=str(ROOT), PATH=f"{BIN}{os.pathsep}{env['PATH']}")
    made = subprocess.run(["bash", str(ROOT / "start"), "pwd"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    workspace = home / "workspace"
    assert made.stdout.strip().splitlines()[-1] == str(workspace)
    running = start_plain_lab(workspace, scratch, BIN)
    try:
        yield running
    finally:
        stop_lab(running)


def _tab(browser):
    tab = browser.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    return tab


def test_no_news_question_only_the_assignment_list_and_each_lesson_once(browser, binder_lab):
    tab = _tab(browser)
    try:
        tab.goto(f"{binder_lab.url}/lab/tree/lessons?token={binder_lab.token}")
        listing = tab.locator(".jp-DirListing-content .jp-DirListing-itemText")
        listing.first.wait_for()
        time.sleep(3)  # JupyterLab asks its news question a moment after it starts
        names = sorted(listing.all_inner_texts())
        shot(tab, "40-binder-lessons-listing")
        assert names == sorted(p.name for p in (ROOT / "lessons").glob("*.ipynb")), names
        assert tab.get_by_text("Jupyter news").count() == 0
        assert tab.locator(".Toastify__toast").count() == 0
        tab.get_by_role("menuitem", name="Nbgrader", exact=True).click()
        menu = tab.locator(".lm-Menu:visible .lm-Menu-itemLabel")
        menu.first.wait_for()
        items = [t.strip() for t in menu.all_inner_texts() if t.strip()]
        shot(tab, "41-binder-nbgrader-menu")
        assert items == ["Assignment List"], items
        tab.keyboard.press("Escape")
        sidebar = " ".join(tab.locator(".jp-SideBar .lm-TabBar-tab").evaluate_all(
            "tabs => tabs.map(t => t.getAttribute('title') || t.textContent)"))
        assert "Create Assignment" not in sidebar and "nbgrader" not in sidebar.lower(), sidebar
    finally:
        tab.close()


def test_no_notebook_is_marked_modified_on_open(browser, binder_lab):
    tab = _tab(browser)
    try:
        dirty = [relpath for relpath in SEEN_MODIFIED
                 if modified_on_open(tab, binder_lab, relpath, "42-binder-modified-on-open")]
        assert dirty == []
    finally:
        tab.close()
        binder_lab.close_sessions()


def test_a_reopened_lesson_shows_no_model_not_found(browser, binder_lab):
    lesson = "lessons/02_two_save_points.ipynb"
    tab = _tab(browser)
    try:
        open_notebook(tab, binder_lab, lesson)
        run_all(tab)
        visible(tab, ".cl-timeline").first.wait_for()
        save(tab)
    finally:
        tab.close()
    binder_lab.close_sessions()
    again = _tab(browser)
    try:
        open_notebook(again, binder_lab, lesson)
        visible(again, ".jp-OutputArea-output").filter(
            has_text="Run this cell to see the crash timeline").first.wait_for()
        shot(again, "43-binder-lesson-2-reopened")
        outputs = visible(again, ".jp-OutputArea-output")
        assert outputs.filter(has_text="model not found").count() == 0
        assert outputs.filter(has_text="Error displaying widget").count() == 0
    finally:
        again.close()
        binder_lab.close_sessions()


def test_validate_on_a_starter_names_the_failing_check_with_0_points(browser, binder_lab):
    tab = _tab(browser)
    try:
        open_notebook(tab, binder_lab, STARTER)
        kind, text = validate(tab)
        shot(tab, "44-binder-validate-starter")
        close_dialog(tab)
    finally:
        tab.close()
        binder_lab.close_sessions()
    said = " ".join(text.split())
    assert "validation-failed" in kind, said
    assert NBGRADER_PARTIAL not in said, said
    assert re.search(r"\w: not passed \(0/3 points\)", said), said
    assert 'Your written answer to "Part 1: name the two failures"' in said, said
