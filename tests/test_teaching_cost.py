"""What two saves per turn cost: the measurement, the plot (Agg), and its reading."""

from __future__ import annotations

import os

import matplotlib
import pytest

from graders.teaching.cost import (
    CostMeasurement,
    SaveCost,
    figure_png,
    measure_save_cost,
    plot_save_cost,
    read_cost,
)


@pytest.fixture(scope="module")
def measured() -> CostMeasurement:
    return measure_save_cost(turns=10)


def test_two_saves_per_turn_each_rewriting_the_whole_state(measured):
    assert [(s.turn, s.point) for s in measured.saves] == [
        (t, p) for t in range(1, 11) for p in ("A", "B")]
    assert [s.n for s in measured.saves] == list(range(1, 21))
    sizes = [s.bytes for s in measured.saves]
    assert sizes == sorted(sizes), "the state only grows, so every save is at least as big"
    for turn in range(1, 11):
        a, b = (s for s in measured.saves if s.turn == turn)
        assert b.bytes - a.bytes > 20_000, "save B adds the day's log, tens of kB"
    assert all(s.seconds > 0 for s in measured.saves)


def test_total_bytes_grow_with_the_square_of_the_turns(measured):
    assert measured.total_bytes == sum(s.bytes for s in measured.saves)
    assert measured.cumulative_bytes()[-1] == measured.total_bytes
    assert 3.2 < measured.growth_when_doubling() < 4.8
    assert len(measured.seconds_per_turn()) == measured.turns == 10


def test_the_measurement_goes_past_the_scenario_with_fresh_ids(tmp_path):
    m = measure_save_cost(turns=9, directory=tmp_path)
    assert m.scenario_turns == 7 and m.turns == 9
    import json

    state = json.loads((tmp_path / "checkpoint.json").read_text())
    ids = [b["id"] for msg in state["messages"] if msg["role"] == "assistant"
           for b in msg["content"] if b["type"] == "tool_use"]
    assert len(ids) == len(set(ids)) == 9
    assert state["turns"] == 9 and state["pendingToolUse"] is None


def test_the_working_directory_is_restored(tmp_path):
    before = os.getcwd()
    measure_save_cost(turns=1)
    assert os.getcwd() == before


@pytest.mark.parametrize("bad", [0, -3, 2.5, "10"])
def test_bad_turns_are_refused(bad):
    with pytest.raises(ValueError, match="turns must be a whole number"):
        measure_save_cost(turns=bad)


def test_a_custom_save_is_measured(tmp_path):
    calls = []
    m = measure_save_cost(turns=2, save_checkpoint=lambda state: (
        calls.append(state["turns"]), open("checkpoint.json", "w").write("{}")),
        directory=tmp_path)
    assert calls == [0, 1, 1, 2] and {s.bytes for s in m.saves} == {2}


def test_the_plot_draws_with_agg_and_names_the_tool_latency(measured):
    assert matplotlib.get_backend().lower() in {"agg", "module://matplotlib_inline.backend_inline"}
    fig = plot_save_cost(measured, tool_latency=0.25)
    left, right, total = fig.axes
    assert left.get_yscale() == "log"
    assert any("250 ms" in t.get_text() for t in left.get_legend().get_texts())
    assert total.get_ylabel() == "MB written in total"
    png = figure_png(fig)
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_read_cost_uses_the_numbers(measured):
    text = read_cost(measured, tool_latency=0.3)
    assert "Turn 10: the two saves wrote" in text
    assert f"All 20 saves wrote {measured.total_bytes / 1e6:,.1f} MB" in text
    assert "x4 is the square" in text
    slow = CostMeasurement("x", [SaveCost(1, 1, "A", 10, 0.2), SaveCost(2, 1, "B", 10, 0.2)])
    assert "no longer small" in read_cost(slow, tool_latency=0.3)
    assert read_cost(CostMeasurement("x")) == "Nothing was measured."
