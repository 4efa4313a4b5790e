"""``hint()`` left in a cell and run again (Run All, a new kernel) shows the same hint and opens
nothing more; only ``hint(next=True)`` opens the next one, and the count the instructor sees
never goes up on a rerun nor down after a restart (``graders.checks.hints``)."""

from __future__ import annotations

import json

import pytest

from graders.checks.hints import Hints
from graders.hint_counts import hints_opened, record_hints
from graders.teaching.variants import load_function


def _starter() -> dict:
    return {"run_agent": load_function("starter", "run_agent"),
            "save_checkpoint": load_function("starter", "save_checkpoint")}


def _output(hint) -> dict:
    data, metadata = hint._repr_mimebundle_()
    return {"output_type": "display_data", "data": data, "metadata": metadata}


@pytest.mark.sandbox
def test_running_hint_again_shows_the_same_hint_and_opens_nothing():
    hint = Hints("02_two_latent_failures", _starter())
    first = hint()
    again = hint()  # the same cell, run again by Run All
    assert (again.check_id, again.number, again.text) == (first.check_id, 1, first.text)
    assert again.metadata["checkpoint_lab"]["hints"]["total"] == 1
    assert "`hint(next=True)`" in first.text and "hint 2 of 3, the idea" in first.text
    second = hint(next=True)
    assert second.number == 2 and second.level == "Idea"
    assert hint().number == 2, "after next=True, hint() stays at the hint opened"
    assert hint().metadata["checkpoint_lab"]["hints"]["opened"] == {"l2_atomic_save": 2}


@pytest.mark.sandbox
def test_a_new_kernel_starts_at_the_hint_saved_in_its_notebook(tmp_path):
    hint = Hints("02_two_latent_failures", _starter())
    hint()
    shown = hint(next=True)
    nb = {"metadata": {}, "cells": [{"cell_type": "code", "outputs": [_output(shown)]}]}
    record_hints(nb)
    path = tmp_path / "02_two_latent_failures.ipynb"
    path.write_text(json.dumps(nb))

    # Kernel ▸ Restart and Run All: a fresh Hints, in a kernel that Jupyter told its notebook
    restarted = Hints("02_two_latent_failures", {**_starter(), "__session__": str(path)})
    rerun = restarted()
    assert (rerun.number, rerun.level) == (2, "Idea")
    nb["cells"][0]["outputs"] = [_output(rerun)]
    record_hints(nb)
    assert hints_opened(nb) == {"l2_atomic_save": 2}


@pytest.mark.sandbox
def test_the_saved_count_never_goes_down():
    low = Hints("02_two_latent_failures", _starter())()  # a kernel that knew nothing
    nb = {"metadata": {"checkpoint_lab": {"hints": {
        "notebook": "02_two_latent_failures", "opened": {"l2_atomic_save": 3,
                                                         "l2_save_point_a": 1}, "total": 4}}},
          "cells": [{"cell_type": "code", "outputs": [_output(low)]}]}
    record_hints(nb)
    assert hints_opened(nb) == {"l2_atomic_save": 3, "l2_save_point_a": 1}
    assert nb["metadata"]["checkpoint_lab"]["hints"]["total"] == 4
