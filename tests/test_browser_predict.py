"""Predict, then observe, in a real browser: lock in a prediction, run the crash, compare.

JupyterLab runs as in ``tests/test_browser.py`` (fixtures in ``tests/conftest.py``), on
lesson part 3, whose first prediction is about the torn in-place save. Screenshots go to
``test-artifacts/browser/``.
"""

from __future__ import annotations

import pytest

from graders.teaching.predictions import PREDICTIONS
from tests.browser import (
    error_outputs,
    open_notebook,
    options_are_separate_boxes,
    run_all,
    run_cell,
    shot,
    visible,
)

pytestmark = pytest.mark.browser

LESSON = "lessons/03_atomic_save.ipynb"


def test_a_prediction_is_locked_in_by_clicks_and_compared_after_the_crash(page, lab):
    open_notebook(page, lab, LESSON)
    run_all(page)
    assert error_outputs(page) == []
    prediction = visible(page, ".cl-predict-torn-in-place")
    prediction.scroll_into_view_if_needed()
    # Run All ran the crash cell with nothing locked in: it says so, and gives the answer.
    cells = visible(page, ".jp-Notebook .jp-Cell")
    index = next(i for i in range(cells.count())
                 if cells.nth(i).locator(".cl-predict-torn-in-place").count())
    crash = cells.nth(index + 1)
    unlocked = crash.locator(".cl-predict-compare")
    page.wait_for_function("el => el.innerText.includes('You locked in no prediction')",
                           arg=unlocked.element_handle(), timeout=30_000)

    options = options_are_separate_boxes(prediction)
    lock = prediction.locator("button.cl-predict-lock")
    assert lock.is_disabled(), "nothing picked yet: nothing to lock in"
    assert lock.inner_text().strip() == "Lock in my prediction"
    assert lock.evaluate("b => b.scrollWidth <= b.clientWidth"), "the button's label is cut off"
    right = PREDICTIONS["torn_in_place"].right_letter
    options[PREDICTIONS["torn_in_place"].letters.index(right)].click()
    assert lock.is_enabled()
    lock.click()
    status = prediction.locator(".cl-predict-status")
    page.wait_for_function("el => el.innerText.includes('Locked in')",
                           arg=status.element_handle())
    assert f"Locked in: ({right})" in status.inner_text()
    assert all(o.locator("input").is_disabled() for o in options), "a locked prediction stays"
    shot(page, "predict-locked-in")

    run_cell(page, index + 1)
    compare = crash.locator('.cl-predict-compare[data-right="true"]')
    compare.wait_for()
    assert f"You predicted ({right})" in compare.inner_text()
    assert "That is what happened" in compare.inner_text()
    compare.scroll_into_view_if_needed()
    shot(page, "predict-compared")
    assert error_outputs(page) == []
