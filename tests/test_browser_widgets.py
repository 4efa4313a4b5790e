"""The course's own widgets in a real browser: what a student sees, clicks and hears.

JupyterLab runs as in ``tests/test_browser.py`` (``checkpoint-lab lab`` in a temporary workspace,
Debian's Chromium; fixtures in ``tests/conftest.py``, helpers in ``tests/browser.py``). Each test
measures the page itself: the boxes of the quiz options, what a click or a key selects, the
accessibility tree as axe-core judges it (scoped to our widgets: JupyterLab's own chrome is not
ours), the dark theme, and a notebook reopened after it was saved. Screenshots go to
``test-artifacts/browser/``.

axe-core is the npm package pinned in ``tests/browser_deps/package.json``; install it with
``npm ci --prefix tests/browser_deps``. Without it the axe tests are skipped with that command
(a failure in CI).
"""

from __future__ import annotations

import re

import pytest

from tests.browser import (
    error_outputs,
    in_timeline,
    intersect,
    open_notebook,
    options_are_separate_boxes,
    run_all,
    save,
    shot,
    visible,
    wait_idle,
)
from tests.conftest import IN_CI, ROOT

pytestmark = pytest.mark.browser

AXE = ROOT / "tests" / "browser_deps" / "node_modules" / "axe-core" / "axe.min.js"
TIMELINE_LESSON = "lessons/02_two_save_points.ipynb"
QUIZ_LESSONS = ["lessons/04_power_cuts.ipynb",
                "lessons/06_claude_code_and_what_checkpoints_cost.ipynb",
                "lessons/07_knowledge_check_and_recap.ipynb"]
WIDGETS = ".cl-timeline, .cl-quiz, .cl-code"


# -- measuring the page ---------------------------------------------------------------------------


def _box(locator) -> dict:
    locator.scroll_into_view_if_needed()
    return locator.bounding_box()


def _checked(quiz) -> list[bool]:
    return [o.is_checked() for o in quiz.locator(".cl-quiz-choices input[type=radio]").all()]


def _letter(option_text: str) -> str:
    found = re.match(r"\s*\((\w)\)", option_text)
    assert found, f"an option should start with its letter: {option_text!r}"
    return found.group(1)


def _quizzes(page):
    quizzes = visible(page, ".cl-quiz")
    assert quizzes.count() >= 1
    return quizzes.all()


def _chosen_marked(quiz, index: int) -> None:
    """The chosen option looks different from every other one (border and weight)."""
    looks = quiz.locator(".cl-quiz-choices .widget-radio-box label").evaluate_all(
        "ls => ls.map(l => { const s = getComputedStyle(l);"
        " return [s.borderTopWidth, s.fontWeight, s.backgroundColor].join(' '); })")
    others = {look for i, look in enumerate(looks) if i != index}
    assert looks[index] not in others, looks


def _feedback_for(quiz, letter: str) -> str:
    feedback = quiz.locator(".cl-quiz-feedback")
    quiz.page.wait_for_function(
        "([el, want]) => el.innerText.trim().startsWith(want)",
        arg=[feedback.element_handle(), f"({letter})"])
    return feedback.inner_text()


# -- the quizzes -------------------------------------------------------------------------------


@pytest.mark.parametrize("lesson", QUIZ_LESSONS)
def test_quiz_options_are_separate_boxes_and_a_click_selects_the_one_clicked(page, lab, lesson):
    open_notebook(page, lab, lesson)
    run_all(page)
    assert error_outputs(page) == []
    # A narrow window (a laptop with the file browser open), so long options wrap.
    page.set_viewport_size({"width": 860, "height": 900})
    wrapped = 0
    for number, quiz in enumerate(_quizzes(page)):
        options = options_are_separate_boxes(quiz)
        wrapped += sum(o.evaluate("l => l.getClientRects()[0].height > 2.2 * "
                                  "parseFloat(getComputedStyle(l).lineHeight)") for o in options)
        if number == 0:
            quiz.scroll_into_view_if_needed()
            shot(page, f"10-quiz-{lesson.split('/')[1][:2]}-options")
        # Click each option, last line of its text first (where a long option used to spill
        # onto the next row), then its radio button: that option, and only it, is selected.
        for index in reversed(range(len(options))):
            option = options[index]
            letter = _letter(option.inner_text())
            box = _box(option)
            option.click(position={"x": box["width"] / 2, "y": box["height"] - 4})
            assert _checked(quiz) == [i == index for i in range(len(options))], letter
            _feedback_for(quiz, letter)
            _chosen_marked(quiz, index)
        first = options[0]
        first.locator("input[type=radio]").click()
        assert _checked(quiz)[0] and sum(_checked(quiz)) == 1
        _feedback_for(quiz, _letter(first.inner_text()))
    assert wrapped, "no option wrapped onto a second line: the test would prove nothing"
    shot(page, f"11-quiz-{lesson.split('/')[1][:2]}-answered")


def test_a_quiz_is_answered_with_the_keyboard_alone(page, lab):
    open_notebook(page, lab, QUIZ_LESSONS[1])
    run_all(page)
    quiz = _quizzes(page)[0]
    radios = quiz.locator(".cl-quiz-choices input[type=radio]")
    quiz.locator(".cl-quiz-choices").scroll_into_view_if_needed()
    radios.first.focus()  # where Tab lands in the group
    page.keyboard.press("Space")
    assert _checked(quiz)[0]
    first = quiz.locator(".cl-quiz-choices .widget-radio-box label").first
    _feedback_for(quiz, _letter(first.inner_text()))
    page.keyboard.press("ArrowDown")
    assert _checked(quiz)[1] and sum(_checked(quiz)) == 1
    second = quiz.locator(".cl-quiz-choices .widget-radio-box label").nth(1)
    _feedback_for(quiz, _letter(second.inner_text()))
    # The focused option shows a focus ring.
    ring = second.evaluate("l => getComputedStyle(l).outlineStyle")
    assert ring != "none", ring
    shot(page, "12-quiz-keyboard")


# -- the crash timeline -------------------------------------------------------------------------


def _readout(page) -> int:
    text = in_timeline(page, ".cl-crash-point .widget-readout").inner_text()
    return int(text.split(".")[0])


def _wait_moment(page, moment: int) -> None:
    page.wait_for_function(
        "([sel, n]) => document.querySelector(sel).textContent.trim().startsWith(n + '.')",
        arg=[".jp-NotebookPanel:not(.lm-mod-hidden) .cl-crash-point .widget-readout", moment])
    in_timeline(page, ".cl-moment").filter(has_text=f"Moment {moment} of").wait_for()


def _toggle(page, widget: str, label: str) -> None:
    button = in_timeline(page, f".{widget} button").filter(
        has_text=re.compile(f"^{label}$"))
    button.click()
    page.wait_for_function("(b) => b.classList.contains('mod-active')",
                           arg=button.element_handle())


@pytest.fixture
def timeline_page(page, lab):
    open_notebook(page, lab, TIMELINE_LESSON)
    run_all(page)
    assert error_outputs(page) == []
    timeline = visible(page, ".cl-timeline").first
    timeline.scroll_into_view_if_needed()
    return page


def test_a_click_on_the_strip_selects_that_moment_and_the_keyboard_still_works(timeline_page):
    page = timeline_page
    buttons = in_timeline(page, ".cl-timeline-strip .cl-moment-button")
    assert buttons.count() == 10
    boxes = [_box(b) for b in buttons.all()]
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert not intersect(a, b) and a["x"] < b["x"]  # one row of separate buttons
    assert _readout(page) == 7  # the lesson opens on tool 2

    buttons.nth(3).click()  # moment 4: while save point B of turn 1 was being written
    _wait_moment(page, 4)
    assert "cl-moment-current" in buttons.nth(3).get_attribute("class")
    assert "cl-moment-current" not in buttons.nth(6).get_attribute("class")
    assert "save point B of turn 1" in in_timeline(page, ".cl-moment").inner_text()
    shot(page, "13-timeline-clicked-moment-4")

    # Keyboard alone: Tab reaches a moment, Enter selects it; the slider's arrows still move.
    buttons.nth(0).focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    _wait_moment(page, 2)
    handle = in_timeline(page, ".cl-crash-point .noUi-handle")
    handle.focus()
    page.keyboard.press("ArrowRight")
    _wait_moment(page, 3)
    assert "cl-moment-current" in buttons.nth(2).get_attribute("class")
    assert handle.get_attribute("aria-label") == "Dies at"
    page.wait_for_function("(h) => (h.getAttribute('aria-valuetext') || '').startsWith('3.')",
                           arg=handle.element_handle())


def test_the_disk_view_at_moment_4_does_not_contradict_itself(timeline_page):
    page = timeline_page
    first = visible(page, ".cl-timeline").first
    first.locator(".cl-timeline-strip .cl-moment-button").nth(3).click()
    _wait_moment(page, 4)
    _toggle(page, "cl-save-points", "A and B")
    _toggle(page, "cl-write-mode", "temp \\+ rename")
    page.wait_for_function(
        "(sel) => document.querySelector(sel)?.textContent.includes('save point A of turn 1')",
        arg=".jp-NotebookPanel:not(.lm-mod-hidden) .cl-disk-view .cl-disk-headline")
    row = in_timeline(page, '.cl-disk-view tr[data-field="pendingToolUse"]')
    value = row.locator(".cl-field-value").inner_text()
    note = row.locator(".cl-note").inner_text()
    assert "list_tickets" in value and "list_tickets" in note, (value, note)
    assert "no tool call in flight" not in note
    # The field's name does not run into its value: a visible gap between the two.
    name_box = _box(row.locator(".cl-field-name code"))
    value_box = _box(row.locator(".cl-field-value"))
    assert value_box["x"] - (name_box["x"] + name_box["width"]) >= 8, (name_box, value_box)
    # A short note stays on one line.
    turns_note = in_timeline(page, '.cl-disk-view tr[data-field="turns"] .cl-note em')
    assert turns_note.inner_text() == "0 turns finished"
    assert turns_note.evaluate("e => e.getClientRects().length") == 1
    in_timeline(page, ".cl-disk-view").scroll_into_view_if_needed()
    shot(page, "14-timeline-moment-4-A-and-B-temp-rename")


def test_code_in_the_lesson_is_never_broken_mid_word(timeline_page):
    page = timeline_page
    page.set_viewport_size({"width": 900, "height": 900})  # narrower than its longest line
    code = visible(page, ".cl-code").first
    code.scroll_into_view_if_needed()
    shot(page, "15-lesson-2-reference-code")
    lines = code.evaluate("""pre => {
        const range = document.createRange(); range.selectNodeContents(pre);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        return [tops.size, pre.innerText.split('\\n').filter(l => l.length).length,
                getComputedStyle(pre).whiteSpace];
    }""")
    rendered_lines, source_lines, white_space = lines
    assert white_space == "pre"
    assert rendered_lines <= source_lines + 1, lines  # no line wrapped onto a second row


# -- accessibility and the dark theme -----------------------------------------------------------


def _axe(page) -> list[str]:
    """Serious or critical axe-core violations inside our widgets, one line each."""
    if not AXE.exists():
        reason = (f"axe-core is not installed ({AXE} is missing): run "
                  "`npm ci --prefix tests/browser_deps`")
        if IN_CI:
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async (selector) => {
            const out = [];
            let checked = 0;
            for (const el of document.querySelectorAll(selector)) {
                if (el.closest('.lm-mod-hidden')) continue;
                checked += 1;
                const result = await axe.run(el, {resultTypes: ['violations']});
                for (const v of result.violations) {
                    if (v.impact !== 'serious' && v.impact !== 'critical') continue;
                    out.push(`${v.id} (${v.impact}): ${v.nodes.map(n => n.html.slice(0, 90))
                              .join(' | ')}`);
                }
            }
            if (!checked) out.push('none of our widgets is on the page: nothing was checked');
            return out;
        }""", WIDGETS)
    return found


def _scroll_through(page, selector: str) -> None:
    """JupyterLab virtualises long notebooks: bring every widget into the DOM once."""
    for element in visible(page, selector).all():
        element.scroll_into_view_if_needed()


def _dark_theme(page, dark: bool) -> None:
    page.get_by_role("menuitem", name="Settings", exact=True).click()
    items = ".lm-Menu:not(.lm-mod-hidden) .lm-Menu-item"
    page.locator(items).filter(has_text=re.compile(r"^Theme\s*$")).click()
    name = "JupyterLab Dark" if dark else "JupyterLab Light"
    page.locator(items).filter(has_text=re.compile(f"^{name}\\s*$")).click()
    page.wait_for_function(
        "(want) => document.body.dataset.jpThemeLight === want", arg=str(not dark).lower())


@pytest.mark.parametrize("lesson", [TIMELINE_LESSON, QUIZ_LESSONS[2]])
def test_our_widgets_pass_axe_in_the_light_and_the_dark_theme(page, lab, lesson):
    open_notebook(page, lab, lesson)
    run_all(page)
    _scroll_through(page, WIDGETS)
    for element in visible(page, ".cl-quiz").all()[:1]:  # a verdict on screen is checked too
        element.locator(".cl-quiz-choices input[type=radio]").first.click()
        element.locator(".cl-quiz-verdict").wait_for()
    assert _axe(page) == []
    if lesson == TIMELINE_LESSON:  # a control: the known finding comes back without our fix
        handle = in_timeline(page, ".cl-crash-point .noUi-handle")
        handle.evaluate("h => h.removeAttribute('aria-label')")
        assert any(v.startswith("aria-input-field-name") for v in _axe(page))
        handle.evaluate("h => h.setAttribute('aria-label', 'Dies at')")
    _dark_theme(page, True)
    try:
        visible(page, ".cl-quiz, .cl-timeline").first.scroll_into_view_if_needed()
        shot(page, f"16-dark-{lesson.split('/')[1][:2]}")
        assert _axe(page) == []  # includes color-contrast: readable on the dark background
        text = visible(page, ".cl-quiz-choices label, .cl-moment").first.evaluate(
            "e => getComputedStyle(e).color")
        assert text != "rgb(16, 24, 40)", "dark text on JupyterLab's dark background"
    finally:
        _dark_theme(page, False)


# -- a saved notebook, reopened; a workspace that stays clean -------------------------------------


def _kill_kernels(lab) -> None:
    for kernel in lab.api("GET", "/api/kernels"):
        lab.api("DELETE", f"/api/kernels/{kernel['id']}")


def test_a_reopened_notebook_says_run_this_cell_instead_of_model_not_found(page, lab):
    lesson = QUIZ_LESSONS[1]
    open_notebook(page, lab, lesson)
    run_all(page)
    visible(page, ".cl-quiz").first.wait_for()
    save(page)
    # Saving a lesson in the workspace writes no jupytext pair beside it.
    name = lesson.split("/")[1]
    assert sorted(p.name for p in (lab.workspace / "lessons").glob(f"{name[:3]}*")) == [name]
    page.close()
    _kill_kernels(lab)  # the student closes JupyterLab and comes back another day

    again = page.context.new_page()
    try:
        open_notebook(again, lab, lesson)
        hint = visible(again, ".jp-OutputArea-output").filter(
            has_text="Run this cell to see the quiz")
        hint.first.wait_for()
        hint.first.scroll_into_view_if_needed()
        shot(again, "17-reopened-notebook")
        assert visible(again, ".jp-OutputArea-output").filter(
            has_text="Error displaying widget").count() == 0
        assert visible(again, ".cl-quiz").count() == 0
        run_all(again)  # and running it brings the quiz back
        visible(again, ".cl-quiz").first.wait_for()
        assert visible(again, ".jp-OutputArea-output").filter(
            has_text="Run this cell to see").count() == 0
    finally:
        again.close()


def test_opening_a_lesson_does_not_mark_it_modified(page, lab):
    # A control: the release as shipped (no kernel language_info) is marked modified as soon as
    # its kernel answers; the workspace's own copy of the same lesson is not.
    lesson = "lessons/03_atomic_save.ipynb"
    control = "lessons/03_as_shipped.ipynb"
    (lab.workspace / control).write_bytes((ROOT / lesson).read_bytes())
    try:
        open_notebook(page, lab, control)
        page.locator(".jp-mod-current.jp-mod-dirty").wait_for()
        page.close()
        tab = page.context.new_page()
        try:
            open_notebook(tab, lab, lesson)
            wait_idle(tab)
            tab.locator(".jp-mod-current .jp-KernelStatus, .jp-Notebook-ExecutionIndicator"
                        ).first.wait_for()
            assert tab.locator(".jp-mod-current.jp-mod-dirty").count() == 0
            assert tab.locator(".jp-mod-dirty").count() == 0
        finally:
            tab.close()
    finally:
        (lab.workspace / control).unlink()
