"""``python -m benchmarks``'s summary: each line that states a figure and its goal is judged."""

from __future__ import annotations

import pytest

from benchmarks.__main__ import BENCHMARKS, HERE, verdict


@pytest.mark.parametrize("line, expected", [
    ("  every crash state (record + judge):   412.0 ms  ratio 1.25x (goal <= 1.3x); the run in "
     "the sandbox alone 317.0 ms", "meets"),
    ("  every crash state (record + judge):   412.0 ms  ratio 5.40x (goal <= 1.3x)", "MISSES"),
    ("40 submissions, checkpoint-lab grade (no feedback):   30.1 s  2.10x faster (goal >= 3x on "
     "2 cores; 2 cores here)", "MISSES"),
    ("worst ratio 1.92x (goal: at most 2x)", "meets"),
    ("grading one whole submission: 3.10 s; its 8 sandbox starts are 12.5 % of it (goal <= 10 %)",
     "MISSES"),
    ("uid tier / bubblewrap tier: 1.05x  (goal: at most 1.2x)", "meets"),
    ("one plain run of the loop:           64.0 ms", None),
])
def test_a_figure_is_judged_against_the_goal_beside_it(line, expected):
    assert verdict(line) == expected


def test_every_benchmark_named_has_its_script():
    assert sorted(p.stem for p in HERE.glob("bench_*.py")) == sorted(
        f"bench_{name}" for name in BENCHMARKS)
