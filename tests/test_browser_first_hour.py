"""A new student's first hour with an exercise, in a real browser (issue 19 items 5 and 7, issue
18 item 7): ``try_it()`` leaves the kernel in the notebook's folder, so the links
``solutions(2)`` shows open the files (after it asks first, since the starter's checks fail);
``hint()`` run again shows the same hint, and only ``hint(next=True)`` opens the next one.
JupyterLab as in ``tests/test_browser.py``; screenshots in ``test-artifacts/browser/``.
"""

from __future__ import annotations

import json
import re

import pytest

from graders.hint_counts import hints_opened
from tests.browser import (
    append_code_cell,
    cells,
    open_notebook,
    run_all,
    run_cell,
    save,
    set_cell_source,
    shot,
)

pytestmark = pytest.mark.browser

EXERCISE = "exercises/lesson2/02_two_latent_failures.ipynb"
SOLUTIONS_CELL = """import os
print("working in", os.getcwd())
from graders.workspace.solutions import solutions
solutions(2)"""


def test_after_try_it_the_solutions_links_open_the_files(page, lab):
    open_notebook(page, lab, EXERCISE)
    run_all(page)  # try_it() and try_it(stop_while_tool_runs=2) ran
    index = append_code_cell(page, SOLUTIONS_CELL)
    cell = cells(page).nth(index)
    said = cell.locator(".jp-OutputArea").inner_text()
    assert f"working in {lab.workspace / 'exercises' / 'lesson2'}\n" in said, said
    # The starter fails its checks: the notebook asks first, and copies nothing yet.
    ask = cell.locator(".cl-solutions-ask")
    ask.wait_for()
    assert "once your checks pass" in ask.inner_text()
    assert "l2_kill_during_save" in ask.inner_text()
    assert not (lab.workspace / "solutions").exists()
    ask.scroll_into_view_if_needed()
    shot(page, "33-solutions-asks-first")
    ask.locator("button.cl-solutions-anyway").click()
    link = cell.locator("a").filter(has_text="solutions/02_two_latent_failures.py")
    link.wait_for()
    link.scroll_into_view_if_needed()
    shot(page, "34-solutions-links")
    link.click()
    tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab").filter(
        has_text=re.compile(r"02_two_latent_failures\.py"))
    tab.wait_for()
    editor = page.locator(".jp-FileEditor:not(.lm-mod-hidden), "
                          ".lm-Widget.jp-MainAreaWidget:not(.lm-mod-hidden) .jp-FileEditor")
    editor.filter(has_text="def run_agent").first.wait_for()
    assert page.locator(".jp-Dialog").count() == 0, "JupyterLab could not open the file"
    shot(page, "35-solutions-link-opened")


def _output(page, index: int) -> str:
    return cells(page).nth(index).locator(".jp-OutputArea").inner_text()


def test_hint_run_again_shows_the_same_hint_and_the_next_one_only_when_asked(page, lab):
    open_notebook(page, lab, EXERCISE)
    run_all(page)
    index = append_code_cell(page, "hint()")
    first = _output(page, index)
    assert "Hint 1 of 3 for l2_kill_during_save (nudge)" in first, first
    assert "hint(next=True)" in first
    run_cell(page, index)  # the same cell again
    assert "Hint 1 of 3 for l2_kill_during_save (nudge)" in _output(page, index)
    run_all(page)  # and Run All, which runs it once more
    assert "Hint 1 of 3 for l2_kill_during_save (nudge)" in _output(page, index)
    cells(page).nth(index).locator(".jp-OutputArea").scroll_into_view_if_needed()
    shot(page, "36-hint-run-again")

    set_cell_source(page, index, "hint(next=True)")
    run_cell(page, index)
    assert "Hint 2 of 3 for l2_kill_during_save (idea)" in _output(page, index)
    set_cell_source(page, index, "hint()")
    run_cell(page, index)
    assert "Hint 2 of 3 for l2_kill_during_save (idea)" in _output(page, index)
    cells(page).nth(index).locator(".jp-OutputArea").scroll_into_view_if_needed()
    shot(page, "37-hint-next")
    save(page)
    saved = json.loads((lab.workspace / EXERCISE).read_text())
    assert hints_opened(saved) == {"l2_atomic_save": 2}  # what the instructor sees: two
