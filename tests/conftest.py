"""Shared pytest setup: where the project is, whether we run in CI, and the browser fixtures.

The browser tests (``tests/test_browser*.py``) share one Chromium and one JupyterLab (started as
a student starts it, ``checkpoint-lab lab``) for the whole test session; each test gets a new tab
and a fresh copy of the released notebooks (``page``). A plain ``jupyter lab``, as Binder and
JupyterHub start it, is started once too, for the tests that ask for it (``plain_lab``). The
helpers they use are in ``tests/browser.py``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The project's top folder."""
    return ROOT


# -- the browser ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's chromium (a skip that says how to install it, or a failure in CI)."""
    from tests.browser import require_browser

    return require_browser()


@pytest.fixture(scope="session")
def browser(chromium, tmp_path_factory):
    """One headless Chromium context for the session (a fresh profile)."""
    from tests.browser import chromium_context

    with chromium_context(chromium, tmp_path_factory.mktemp("chromium-profile")) as context:
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
