"""Lesson 04's stepper: one save cut into its steps, each with what a power cut there could leave
(issue 30: a power-cut moment to step through, like the other parts)."""

from __future__ import annotations

import pytest

from graders.teaching.power_steps import power_steps, show_power_steps


@pytest.mark.sandbox
def test_the_durable_save_walks_from_the_previous_save_to_the_new_one():
    steps = power_steps("both")
    assert [s.label.split(":")[0] for s in steps] == [
        "before the write", "before the fsync of the temp file", "before the rename",
        "before the fsync of the folder", "tool 2 runs"]
    assert steps[0].states == ["the previous save, complete"]
    assert steps[2].states == ["the previous save, complete"], "the synced file is not named yet"
    assert "an older save: the rename was undone" in steps[3].states, "the rename is not synced"
    assert steps[-1].states == ["the new save, complete"] and all(s.ok for s in steps)


@pytest.mark.sandbox
def test_a_save_without_the_folder_sync_loses_once_the_loop_goes_on():
    steps = power_steps("the file only")
    assert "before the fsync of the folder" not in [s.label for s in steps]
    assert not steps[-1].ok
    assert "an older save: the rename was undone" in steps[-1].states


@pytest.mark.sandbox
def test_the_stepper_has_a_text_form_and_follows_the_chosen_save():
    view = show_power_steps("both")
    text = view._repr_mimebundle_()[0]["text/plain"]
    assert text.splitlines()[0] == "The save before tool 2, fsync of both: a power cut at each step"
    assert len(text.splitlines()) == 6, "Run All prints one line per step"
    view.choice.value = "no fsync"
    assert view.slider.max == len(power_steps("no fsync"))
    view.slider.value = view.slider.max
    assert "resume cannot rely on it" in view.pane.value
