"""The timeline widget, the checkpoint view, the scene helpers and the loop variants."""

from __future__ import annotations

import ast
import html
import json

import pytest

from graders.loop.resume import SIX_FIELDS
from graders.teaching.checkpoint_view import FIELD_PURPOSES, CheckpointView, summarize_message
from graders.teaching.scene import describe_run, ledger_lines, ran_twice, without
from graders.teaching.timeline import build_timeline
from graders.teaching.variants import (
    SAVE_POINTS,
    WRITE_MODES,
    VariantError,
    function_source,
    lesson_function,
    load_function,
    source_path,
    starter_reference_diff,
    variant,
    variant_source,
)
from graders.teaching.widgets import TimelineView, disk_html, no_save_note, strip_cells


@pytest.fixture(scope="module")
def timeline():
    return build_timeline("support-tickets")


@pytest.fixture()
def view(timeline):
    return TimelineView(timeline)


def test_the_timeline_widget_has_the_classes_the_browser_test_uses(view):
    assert "cl-timeline" in view._dom_classes
    for widget, cls in [(view.crash_point, "cl-crash-point"), (view.save_points, "cl-save-points"),
                        (view.write_mode, "cl-write-mode"), (view.state_view, "cl-state-view"),
                        (view.strip, "cl-timeline-strip")]:
        assert cls in widget._dom_classes
    # one widget draws the moment, the loop, the disk and resume's conclusion together
    for inner in ("cl-moment", "cl-loop", "cl-disk-view", "cl-resume-view"):
        assert f'class="{inner}"' in view.state_view.value
    assert list(view.save_points.options) == list(SAVE_POINTS)
    assert list(view.write_mode.options) == list(WRITE_MODES)
    assert len(view.crash_point.options) == len(view.timeline.moments) == 10


def test_it_opens_on_the_starter_killed_while_tool_2_runs(view):
    assert view.current.moment.id == "tool_2"
    assert (view.save_points.value, view.write_mode.value) == ("B only", "in place")
    assert "On disk:</b> <span class=\"cl-disk-headline\">no trace" in view.state_view.value
    assert 'data-disk="no-trace"' in view.state_view.value


def test_every_toggle_redraws_the_disk_view(view, timeline):
    view.save_points.value = "A and B"
    assert 'data-disk="checkpoint"' in view.state_view.value
    assert "checkpoint.json, readable" in view.state_view.value
    assert 'cl-field cl-field-highlight" data-field="pendingToolUse"' in view.state_view.value
    view.crash_point.value = timeline.moment("save_B_1").index
    view.write_mode.value = "in place"
    assert 'data-disk="torn-json"' in view.state_view.value and "torn JSON" in view.state_view.value
    assert "cut here" in view.state_view.value
    view.write_mode.value = "temp + rename"
    assert 'data-disk="checkpoint"' in view.state_view.value and ".tmp" in view.state_view.value
    assert "What resume concludes:" in view.state_view.value
    assert "Moment 4 of 10" in view.state_view.value


def test_a_b_only_loop_says_it_does_not_save_at_point_a(view, timeline):
    view.crash_point.value = timeline.moment("save_A_2").index
    assert ("does not save at this moment: it goes straight on to run the tool"
            in view.state_view.value)
    b_only = {c.index: c for c in strip_cells(timeline, 0, "B only", "in place")}
    a_save = timeline.moment("save_A_2").index
    assert not b_only[a_save].saves_here and "does not save here" in b_only[a_save].title
    assert all(c.saves_here for c in strip_cells(timeline, 0, "A and B", "in place"))
    button = view.moment_buttons[a_save]
    assert "cl-moment-nosave" in button._dom_classes
    view.save_points.value = "A and B"
    assert "cl-moment-nosave" not in button._dom_classes


@pytest.mark.skipif("A only" not in SAVE_POINTS, reason="no 'A only' loop in variants.py")
def test_an_a_only_loop_goes_straight_on_to_the_model_at_point_b(timeline):
    state = timeline.state("save_B_1", "A only", "temp + rename")
    assert not state.saves_here
    assert no_save_note(state).endswith("goes straight on to call the model.")
    assert "call the model" in state.to_text()


def test_a_click_on_a_moment_of_the_strip_moves_the_crash_there(view, timeline):
    assert len(view.moment_buttons) == len(timeline.moments)
    target = timeline.moment("save_B_1")
    view.moment_buttons[target.index].click()  # what a click in the browser sends
    assert view.crash_point.value == target.index
    assert "Moment 4 of 10" in view.state_view.value
    current = [b for b in view.moment_buttons if "cl-moment-current" in b._dom_classes]
    assert current == [view.moment_buttons[target.index]]
    assert current[0].description == "4. save B1"
    assert "while save point B of turn 1 was being written" in current[0].tooltip
    view.select("end")
    assert view.current.moment.id == "end"
    with pytest.raises(KeyError, match="no moment"):
        view.select("nowhere")


def test_the_strip_colours_each_moment_by_what_a_crash_there_leaves(timeline):
    from graders.teaching.style import KIND_COLOURS

    for sp in SAVE_POINTS:
        for wm in WRITE_MODES:
            cells = strip_cells(timeline, 3, sp, wm)
            assert [c.current for c in cells].count(True) == 1 and cells[3].current
            for cell in cells:
                kind = timeline.state(cell.index, sp, wm).outcome
                assert (cell.kind, cell.colour) == (kind, KIND_COLOURS[kind])


def test_the_saved_point_a_is_not_called_no_call_in_flight(timeline):
    # Moment 4, "A and B", "temp + rename": the cut save B leaves save point A on disk, whose
    # pendingToolUse names list_tickets; the note beside it must say so, not contradict it.
    state = timeline.state("save_B_1", "A and B", "temp + rename")
    pending = state.disk.checkpoint["pendingToolUse"]
    assert pending["name"] == "list_tickets"
    note = state.disk.notes["pendingToolUse"]
    assert "no tool call in flight" not in note and "list_tickets" in note
    assert "save point A of turn 1" in state.disk.headline
    for sp in SAVE_POINTS:
        for wm in WRITE_MODES:
            for moment in timeline.moments:
                disk = timeline.state(moment, sp, wm).disk
                if disk.checkpoint and disk.checkpoint.get("pendingToolUse"):
                    name = disk.checkpoint["pendingToolUse"]["name"]
                    assert name in disk.notes["pendingToolUse"], (moment.id, sp, wm)
                elif disk.checkpoint:
                    assert "names" not in disk.notes["pendingToolUse"], (moment.id, sp, wm)


def test_the_timeline_text_fallback(view):
    data, metadata = view._repr_mimebundle_()
    assert metadata["checkpoint_lab_rerun"].startswith("Run this cell to see the crash timeline")
    text = data["text/plain"]
    assert text.startswith("Crash timeline of support-tickets")
    assert "Killed at: tool 2 running: build_table" in text
    assert "no trace of the call in flight" in text


def test_disk_html_escapes_what_it_shows(timeline):
    state = timeline.state("save_B_2", "B only", "in place")
    page = disk_html(state)
    assert state.disk.kind == "torn JSON" and '"' in state.disk.text[-160:]
    assert html.escape(state.disk.text[-160:]) in page


def test_checkpoint_view_highlights_and_marks_missing_fields():
    checkpoint = {"version": 1, "task": "a <task>", "turns": 2, "messages": [
        {"role": "user", "content": "a <task>"},
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}, {
            "type": "tool_use", "id": "toolu_1", "name": "list_tickets", "input": {"p": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": "x" * 1234}]},
    ], "pendingToolUse": None, "extra": True}
    view = CheckpointView(checkpoint, highlight=["turns"], notes={"turns": "two done"})
    text = view.to_text()
    assert ">> turns: 2   <- two done" in text
    assert "   tokensUsed: (missing)" in text
    assert "[2] user: tool_result for toolu_1 (1,234 chars)" in text
    assert "extra: true" in text
    page = view._repr_html_()
    assert 'class="cl-field cl-field-highlight" data-field="turns"' in page
    assert "(missing)" in page and "a &lt;task&gt;" in page and "<task>" not in page


def test_messages_summaries():
    assert summarize_message({"role": "user", "content": "hello"}) == "user: 'hello'"
    line = summarize_message({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "build_table", "input": {"a": [1, 2]}}]})
    assert line == 'assistant: tool_use build_table({"a":[1,2]}) id t1'
    assert summarize_message(42) == "42"


def test_field_purposes_cover_the_six_fields():
    assert tuple(FIELD_PURPOSES) == SIX_FIELDS


def test_without_copies_and_names_unknown_fields():
    checkpoint = {"version": 1, "messages": [1]}
    assert without(checkpoint, "version") == {"messages": [1]}
    assert checkpoint == {"version": 1, "messages": [1]}
    with pytest.raises(KeyError, match="no field 'task'"):
        without(checkpoint, "task")


def test_ledger_helpers(timeline):
    obs = timeline.state("tool_2", "B only", "in place").observation
    assert ledger_lines(obs.ledger)[0] == "1. list_tickets"
    assert ledger_lines([{"name": "x"}]) == ["1. x (killed before it returned)"]
    assert ran_twice(obs.ledger, [("build_table", obs.ledger[1]["input"])]) == ["build_table"]
    assert ran_twice(obs.ledger, [("build_table", {"other": 1})]) == []
    text = describe_run(obs)
    assert "killed_during_tool_2" in text and "Ledger (tools that really ran)" in text


@pytest.mark.parametrize("save_points", SAVE_POINTS)
@pytest.mark.parametrize("write_mode", WRITE_MODES)
def test_each_toggle_changes_only_what_it_names(save_points, write_mode):
    source = variant_source(save_points, write_mode)
    tree = ast.parse(source)
    functions = {n.name: ast.get_source_segment(source, n) for n in tree.body
                 if isinstance(n, ast.FunctionDef)}
    assert functions["save_checkpoint"] == lesson_function("save_checkpoint",
                                                           write_mode=write_mode).strip()
    loop = functions["run_agent"].splitlines()
    full = lesson_function("run_agent", save_points="A and B").strip().splitlines()
    dropped = [line for line in full if line not in loop]
    assert all("save_checkpoint(state)" in line or "# Save point" in line
               for line in dropped), dropped
    saves = sum("save_checkpoint(state)" in line for line in loop)
    assert saves == (2 if save_points == "A and B" else 1)
    for point in ("A", "B"):
        kept = any(f"# Save point {point}" in line for line in loop)
        assert kept == (point in save_points.replace("only", "").split()), (point, save_points)
    assert sum('state["tokensUsed"] +=' in line for line in loop) == 1, "tokens: same in all"
    assert variant(save_points, write_mode).problem() is None


def test_the_lessons_loops_are_not_the_exercise_starter_or_reference():
    for name in ("starter", "reference"):
        for function in ("run_agent", "save_checkpoint"):
            theirs = function_source(name, function)
            for sp in SAVE_POINTS:
                for wm in WRITE_MODES:
                    assert theirs not in variant_source(sp, wm), (name, function, sp, wm)


def test_bad_toggles_and_sources_are_named():
    with pytest.raises(VariantError, match="save points must be one of"):
        variant("C only", "in place")
    with pytest.raises(VariantError, match="write mode must be one of"):
        variant("B only", "copy")
    with pytest.raises(VariantError, match="unknown source"):
        source_path("mine")
    with pytest.raises(VariantError, match="defines no function"):
        function_source("starter", "resume")


def test_load_function_gives_the_reference_save(tmp_path, monkeypatch):
    save = load_function("reference", "save_checkpoint")
    monkeypatch.chdir(tmp_path)
    save({"version": 1})
    assert json.loads((tmp_path / "checkpoint.json").read_text()) == {"version": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.json"]


def test_the_walkthrough_diff_shows_what_the_reference_changes_in_the_starter():
    loop = starter_reference_diff("run_agent")
    assert loop.startswith("--- run_agent (the starter)")
    assert any(line.startswith("+") and 'state["pendingToolUse"] = None' in line
               for line in loop.splitlines())
    assert '"""' not in loop, "docstrings are left out of the diff"
    save = starter_reference_diff("save_checkpoint")
    assert any(line.startswith("+") and "os.replace(" in line for line in save.splitlines())
    assert any(line.startswith("-") and 'open("checkpoint.json", "w")' in line
               for line in save.splitlines())
    with pytest.raises(VariantError, match="the exercise's functions are"):
        starter_reference_diff("colour")


def test_the_lesson_diff_never_shows_one_line_as_both_removed_and_added():
    from graders.teaching.code_view import unified_diff
    from graders.teaching.variants import _without_docstring

    for function in ("run_agent", "save_checkpoint"):
        before = "".join(_without_docstring(function_source("starter", function)))
        after = "".join(_without_docstring(function_source("reference", function)))
        diff = unified_diff(before.splitlines(), after.splitlines(), "starter", "reference")
        lines = diff.splitlines()
        removed = {line[1:].strip() for line in lines if line.startswith("-")
                   and not line.startswith("---")}
        added = {line[1:].strip() for line in lines if line.startswith("+")
                 and not line.startswith("+++")}
        assert not (removed & added) - {""}, (function, removed & added)
        assert lines[:2] == ["--- starter", "+++ reference"]
        assert diff.count("\n@@ ") >= 1
    moved = unified_diff(["a", "", "b = 1", "c"], ["a", "b = 1", "", "x", "c"])
    assert " b = 1" in moved.splitlines() and "-b = 1" not in moved and "+b = 1" not in moved


def test_code_is_shown_whole_line_on_its_own_light_panel():
    from graders.teaching.code_view import show_code, show_diff

    page = show_code('def f():\n    return "<x>"  # ' + "long_name_" * 12 + "\n")._repr_html_()
    assert page.startswith('<pre class="cl-code" data-language="python"')
    style = page.split('style="', 1)[1].split('"', 1)[0]
    for rule in ("white-space:pre", "word-break:normal", "overflow-x:auto",
                 "background:#f6f8fa", "color:#101828"):
        assert rule in style
    assert "&lt;x&gt;" in page and "<x>" not in page
    diff = show_diff("a\nb\n", "a\nc\n", "old", "new")
    assert str(diff).startswith("--- old\n+++ new\n")
    assert diff._repr_html_().count('class="cl-diff-line"') == len(str(diff).splitlines())
    assert "background:#dafbe1" in diff._repr_html_() and "background:#ffebe9" in diff._repr_html_()


@pytest.mark.parametrize("checkpoint", ["", "{", None])
def test_a_resume_that_took_no_step_prints_no_empty_heading(checkpoint):
    from graders.loop.resume import resume

    report = resume(checkpoint)
    assert report.steps == []
    assert "What resume did" not in report.to_text()
    assert "What resume did" not in report._repr_html_()
    assert "Where it falls over:" in report.to_text()
    done = resume(json.dumps({"version": 2}))
    assert done.steps and "What resume did:\n  1. " in done.to_text()


def test_the_turn_view_names_its_moment_in_full_and_shows_each_calls_input():
    """Issue 19.10: the slider's label was cut off ("...(after th") and the JSON left out
    "input", which the prose and Level 4 require."""
    from graders.teaching.parallel_turn import show_turn

    view = show_turn("incident-triage", turn=1)
    assert view.slider.readout is False, "no readout beside the slider to be cut off"
    view.slider.value = len(view.moments) - 1
    assert "model call 2 (after the turn)</b>" in view.pane.value
    assert f"Moment {len(view.moments)} of {len(view.moments)}" in view.pane.value
    view.slider.value = 6
    assert "&quot;input&quot;: {" in view.pane.value and "&quot;result&quot;" in view.pane.value
