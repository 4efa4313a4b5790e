"""Opt-in hints: the next hint for the first failing check, nudge to idea to code, counted."""

from __future__ import annotations

import pytest

from graders.checks import CHECKS, NOTEBOOKS
from graders.checks.hints import LEVELS, HintError, Hints, hint_texts
from graders.hint_counts import hints_opened, record_hints
from graders.teaching.variants import load_function


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_every_visible_check_has_a_nudge_an_idea_and_code(notebook):
    texts = hint_texts(notebook)
    visible = {c.id for c in CHECKS.values() if c.notebook == notebook and not c.hidden}
    assert set(texts) == visible
    for check_id, pairs in texts.items():
        assert [level for level, _ in pairs] == list(LEVELS)
        nudge, idea, code = (text for _, text in pairs)
        assert "```" not in nudge and "```" not in idea, f"{check_id}: code only in the last hint"
        assert "```python" in code, check_id


@pytest.mark.sandbox
def test_hints_go_from_nudge_to_code_for_the_first_failing_check_and_are_counted():
    starter = {"run_agent": load_function("starter", "run_agent"),
               "save_checkpoint": load_function("starter", "save_checkpoint")}
    hint = Hints("02_two_latent_failures", starter)
    first = hint()
    assert first.check_id == "l2_atomic_save" and first.level == "Nudge"
    assert first.heading() == "Hint 1 of 3 for l2_kill_during_save (nudge)"  # its label
    assert hint(next=True).level == "Idea"
    third = hint(next=True)
    assert third.level == "Code" and "os.replace" in third.text
    assert "last hint" in hint(next=True).text, "a fourth asks repeats the code, says it is last"
    other = hint("l2_kill_during_tool")  # by the label a student reads; counted by its id
    assert other.level == "Nudge" and hint("l2_save_point_a").level == "Nudge"
    assert other.metadata == {"checkpoint_lab": {"hints": {
        "notebook": "02_two_latent_failures",
        "opened": {"l2_atomic_save": 3, "l2_save_point_a": 1}, "total": 4}}}
    data, metadata = other._repr_mimebundle_()
    assert metadata == other.metadata and "l2_kill_during_tool" in data["text/markdown"]
    with pytest.raises(HintError, match="checks with hints are l2_kill_during_save, "):
        hint("l2_atomic_save_hidden")


@pytest.mark.sandbox
def test_no_hint_is_needed_once_every_visible_check_passes():
    reference = {"run_agent": load_function("reference", "run_agent"),
                 "save_checkpoint": load_function("reference", "save_checkpoint")}
    shown = Hints("02_two_latent_failures", reference)()
    assert shown.check_id is None and "Every visible check passes" in shown.text
    assert shown.metadata["checkpoint_lab"]["hints"]["total"] == 0


def test_no_hints_while_grading(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert "not shown while your work is graded" in Hints("01_incomplete_checkpoint", {})().text


def test_the_counts_reach_the_notebooks_metadata():
    def output(opened):
        return {"output_type": "display_data", "data": {"text/plain": "hint"}, "metadata": {
            "checkpoint_lab": {"hints": {"notebook": "n", "opened": opened,
                                         "total": sum(opened.values())}}}}

    nb = {"metadata": {}, "cells": [
        {"cell_type": "code", "outputs": [output({"a": 2, "b": 1})]},
        {"cell_type": "code", "outputs": [output({"a": 1})]},  # an earlier call, lower down
        {"cell_type": "markdown"},
    ]}
    assert hints_opened(nb) == {"a": 2, "b": 1}
    record_hints(nb)
    assert nb["metadata"]["checkpoint_lab"]["hints"]["opened"] == {"a": 2, "b": 1}
    nb["cells"] = []
    assert hints_opened(nb) == {"a": 2, "b": 1}, "kept after the outputs are cleared"
    assert record_hints({"cells": []}) == {"cells": []}


def test_an_exercise_without_hints_is_named():
    with pytest.raises(HintError, match="exercises with hints are"):
        hint_texts("03_nothing")


def test_saving_a_notebook_in_the_workspace_records_the_counts_in_its_metadata():
    from graders.workspace.notebooks import before_save

    hint = Hints("02_two_latent_failures", {
        "run_agent": load_function("starter", "run_agent"),
        "save_checkpoint": load_function("starter", "save_checkpoint")})
    shown = hint("l2_atomic_save")
    data, metadata = shown._repr_mimebundle_()
    output = {"output_type": "execute_result", "data": data, "metadata": metadata,
              "execution_count": 1}
    model = {"type": "notebook", "content": {"metadata": {}, "cells": [
        {"cell_type": "code", "source": "hint()", "outputs": [output]}]}}
    before_save(model)
    assert hints_opened(model["content"]) == {"l2_atomic_save": 1}
    assert model["content"]["metadata"]["checkpoint_lab"]["hints"]["total"] == 1
