"""Level 3's puzzle: four saves, a table to fill before anything is shown, and outcomes that are
what Level 3's own checks find."""

from __future__ import annotations

import pytest

from graders.sandbox import sandbox_problem
from graders.teaching.power_cut import (
    COLUMNS,
    KNOWN_OUTCOMES,
    LEVEL3_SAVES,
    compare_saves,
    save_outcomes,
    show_saves,
)

FILLED = {name: {"empty": True, "older": True} for name in LEVEL3_SAVES}


@pytest.mark.parametrize("table", [
    None, {}, {name: {"empty": None, "older": None} for name in LEVEL3_SAVES},
    {**FILLED, "save 3": {"empty": True}}, {**FILLED, "save 4": {"empty": "yes", "older": 1}},
])
def test_nothing_is_shown_until_every_cell_holds_true_or_false(table):
    shown = compare_saves(table)
    text = repr(shown)
    assert text.startswith("Fill in every cell first") and shown._repr_html_() is None
    for outcome in KNOWN_OUTCOMES.values():
        assert outcome.empty_at not in text or not outcome.empty_at
        assert "really" not in text


@pytest.mark.sandbox
def test_a_filled_table_is_shown_beside_what_power_cuts_leave():
    shown = compare_saves(FILLED)
    text = repr(shown)
    right = sum(getattr(o, c) for o in KNOWN_OUTCOMES.values() for c in COLUMNS)
    assert text.startswith(f"You predicted {right} of 8 cells right.")
    assert text.count("<- not what you predicted") == 8 - right
    assert "<table class='cl-level3-saves'>" in shown._repr_html_()


def test_no_save_of_the_four_survives_every_power_cut_and_none_is_the_fix():
    assert set(LEVEL3_SAVES) == {"save 1", "save 2", "save 3", "save 4"}
    assert all(o.empty or o.older for o in KNOWN_OUTCOMES.values())
    assert {(o.empty, o.older) for o in KNOWN_OUTCOMES.values()} == {
        (True, True), (False, True)}, "the answers differ from save to save"
    text = show_saves()._repr_html_()
    assert all(f"# ---- {name}: then ----" in text for name in LEVEL3_SAVES)
    assert repr(show_saves()).count("def save_checkpoint") == 1, "the lines all four share, once"


@pytest.mark.skipif(bool(sandbox_problem()), reason=str(sandbox_problem()))
@pytest.mark.sandbox
def test_the_known_outcomes_are_what_level_3s_checks_find():
    assert save_outcomes() == KNOWN_OUTCOMES


def test_no_two_saves_shown_together_are_the_answer():
    """Issue 30, G4: a save that keeps every save and another that is never empty would, put
    together, be Level 3's answer; the table holds no save that keeps every save."""
    assert not any(o.older is False for o in KNOWN_OUTCOMES.values())
    for name, code in LEVEL3_SAVES.items():
        lines = [line.strip() for line in code.splitlines()]
        rename = lines.index("os.replace(tmp_path, CHECKPOINT)")
        assert "os.fsync(folder)" not in lines[rename:], f"{name} syncs the folder after its rename"
