"""The notebooks a hub's students get open unmodified (issue 28 item 2), driven in Chromium.

On a hub, a student's exercises are nbgrader's release (``generate_assignment``, then
``release_assignment`` and ``fetch_assignment``, which copy the files unchanged) and the
lessons are copies of the course directory's ``lessons/`` (docs/jupyterhub.md). Opening one and
letting its kernel start must not mark it modified: JupyterLab would then offer to save a file
the student never touched. Both had only the language's name in their ``language_info`` (or
none), and JupyterLab wrote the kernel's whole record in: all twelve were marked modified.
tests/test_browser_environments.py checks a workspace's copies the same way.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.browser import (
    BIN,
    TIMEOUT_MS,
    modified_on_open,
    start_plain_lab,
    stop_lab,
)

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.browser, pytest.mark.nbgrader, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def hub_home(chromium, tmp_path_factory):
    """A student's home as the hub guide leaves it: ``lesson2/`` fetched from nbgrader's release
    of a course built by ``checkpoint-lab course``'s code, ``lessons/`` copied from its
    ``lessons/``."""
    from graders.nbgrader_plumbing.course import build_course
    from graders.nbgrader_plumbing.source_notebook import SOURCES_DIR, authored_sources

    scratch = tmp_path_factory.mktemp("hub-home")
    course = build_course(scratch / "course", sources=authored_sources(SOURCES_DIR), repo=ROOT)
    home = scratch / "student"
    shutil.copytree(course.release_dir, home / "lesson2")
    shutil.copytree(course.lessons_dir, home / "lessons")
    running = start_plain_lab(home, scratch, BIN)
    try:
        yield running
    finally:
        stop_lab(running)


def test_no_released_notebook_is_marked_modified_on_open(browser, hub_home):
    notebooks = sorted(p.relative_to(hub_home.workspace).as_posix()
                       for p in hub_home.workspace.glob("*/*.ipynb"))
    assert len(notebooks) == 12, notebooks
    tab = browser.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    dirty = []
    try:
        for relpath in notebooks:
            if modified_on_open(tab, hub_home, relpath,
                                f"44-hub-modified-on-open-{Path(relpath).stem}"):
                dirty.append(relpath)
            hub_home.close_sessions()
    finally:
        tab.close()
    assert dirty == []
