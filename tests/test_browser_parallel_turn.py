"""Lesson 05's view of one turn with several tool calls, in a real browser: the slider moves
with the keyboard, the pane says what is on disk and what resume does, axe-core finds nothing
serious. Screenshot: test-artifacts/browser/parallel-turn.png."""

from __future__ import annotations

import pytest

from tests.browser import open_notebook, run_all, shot, visible
from tests.conftest import ROOT

AXE = ROOT / "tests" / "browser_deps" / "node_modules" / "axe-core" / "axe.min.js"

pytestmark = pytest.mark.browser


def test_the_slider_walks_the_turn_and_the_pane_follows(page, lab):
    open_notebook(page, lab, "lessons/05_several_tool_calls_in_one_turn.ipynb")
    run_all(page)
    view = visible(page, ".cl-parallel-turn").first  # the lesson's "Now change it" shows another
    view.scroll_into_view_if_needed()
    pane = view.locator(".widget-html").last
    assert "model call 1 asks for 3 tools" in pane.inner_text()
    slider = view.locator(".widget-slider [role=slider], .widget-slider .noUi-handle").first
    slider.focus()
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "(el) => el.innerText.includes('tool 3 (list_deploys) runs')",
        arg=pane.element_handle())
    text = pane.inner_text()
    assert "reuses the result of tools 1 and 2" in text and "reconciles tool 3" in text
    assert '"result"' in text
    shot(page, "parallel-turn")
    box = view.bounding_box()
    assert box and box["width"] > 400, box
    if AXE.exists():
        if not page.evaluate("() => typeof window.axe !== 'undefined'"):
            page.add_script_tag(path=str(AXE))
        serious = page.evaluate(
            """async () => {
                const r = await axe.run(document.querySelector('.cl-parallel-turn'),
                                        {resultTypes: ['violations']});
                return r.violations.filter(v => ['serious', 'critical'].includes(v.impact))
                                   .map(v => v.id);
            }""")
        assert serious == []
