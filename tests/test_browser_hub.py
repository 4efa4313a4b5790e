"""The course in a plain ``jupyter lab``, as Binder and JupyterHub start it (issue 19 item 1).

No ``checkpoint-lab lab``: the environment is made the way ``environment.yml`` makes it (the course
installed with pip, not editable), JupyterLab is its own ``jupyter lab`` with nothing of the
course on its command line, and the user has no Jupyter settings of their own. What the course
needs reaches that JupyterLab through the files the package installs into the environment
(``graders/data/jupyter/env/``): no news question, a reopened lesson says "run this cell" instead
of "model not found", and Validate says what a check said, not "Partial credit". Screenshots in
``test-artifacts/browser/``.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.browser import (
    NBGRADER_PARTIAL,
    TIMEOUT_MS,
    close_dialog,
    open_notebook,
    run_all,
    save,
    shot,
    validate,
    visible,
)

# building the environment takes a minute or more on a loaded machine (pytest-timeout counts it)
pytestmark = [pytest.mark.browser, pytest.mark.install, pytest.mark.timeout(900)]

LESSON = "lessons/02_two_save_points.ipynb"
EXERCISE = "exercises/02_two_latent_failures.ipynb"


def _tab(browser):
    tab = browser.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    return tab


#: JupyterLab's announcements plugin decides whether to ask its news question once the app is
#: restored, its settings are loaded and this config section has answered (announcements.ts).
NEWS_CONFIG = "/api/config/jupyterlabapputilsextensionannouncements"


def _news_question_decided(tab, answered: list[str]) -> None:
    """Wait until JupyterLab has had its chance to ask the news question, and has drawn it."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not any(NEWS_CONFIG in url for url in answered):
        assert time.monotonic() < deadline, f"JupyterLab never read {NEWS_CONFIG}: {answered}"
        tab.wait_for_timeout(100)  # lets Playwright deliver the tab's events
    tab.evaluate("() => new Promise(done => requestAnimationFrame(() => "
                 "requestAnimationFrame(done)))")


def test_a_plain_jupyter_lab_asks_no_news_question_and_a_reopened_lesson_says_run_this_cell(
        browser, plain_lab):
    settings = plain_lab.api("GET",
                             "/lab/api/settings/@jupyterlab/apputils-extension:notification")
    # the environment's overrides.d changed the defaults; the new user changed nothing
    assert settings["schema"]["properties"]["fetchNews"]["default"] == "false", settings
    assert settings["schema"]["properties"]["checkForUpdates"]["default"] is False
    assert "fetchNews" not in settings["settings"]
    tab = _tab(browser)
    answered = []
    tab.on("response", lambda response: answered.append(response.url))
    try:
        open_notebook(tab, plain_lab, LESSON)
        run_all(tab)
        visible(tab, ".cl-timeline").first.wait_for()
        _news_question_decided(tab, answered)
        shot(tab, "30-plain-lab-lesson-2")
        assert tab.get_by_text("Jupyter news").count() == 0
        assert tab.locator(".Toastify__toast").count() == 0
        assert tab.locator(".jp-Dialog").count() == 0
        save(tab)
    finally:
        tab.close()
    plain_lab.close_sessions()  # the student closes JupyterLab and comes back another day

    again = _tab(browser)
    try:
        open_notebook(again, plain_lab, LESSON)
        hint = visible(again, ".jp-OutputArea-output").filter(
            has_text="Run this cell to see the crash timeline")
        hint.first.wait_for()
        hint.first.scroll_into_view_if_needed()
        shot(again, "31-plain-lab-lesson-2-reopened")
        assert visible(again, ".jp-OutputArea-output").filter(
            has_text="Error displaying widget").count() == 0
        assert visible(again, ".jp-OutputArea-output").filter(
            has_text="model not found").count() == 0
    finally:
        again.close()


def test_validate_in_a_plain_jupyter_lab_says_what_each_check_says(browser, plain_lab):
    tab = _tab(browser)
    try:
        open_notebook(tab, plain_lab, EXERCISE)
        save(tab)
        kind, text = validate(tab)
        shot(tab, "32-plain-lab-validate-level-2-starter")
        close_dialog(tab)
    finally:
        tab.close()
        plain_lab.close_sessions()
    said = " ".join(text.split())
    assert "validation-failed" in kind, said
    assert NBGRADER_PARTIAL not in said, said
    assert len(re.findall(r"\w: not passed \(0/3 points\)", said)) == 2, said
    assert "YOUR ANSWER HERE" not in said, said
    assert 'Your written answer to "Part 1: name the two failures"' in said, said
