"""An exercise's ``rules`` reach every path that judges a crash state: the crash matrix of live
functions (forked), of a source (recorded), and the power cuts. A path that fell back to the
default rules would judge an exercise with rules of its own by the wrong ones, silently."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graders.checks import CHECKS
from graders.checks.traced import run_crash_matrix
from graders.grading.recorded import RecordedHarness
from graders.judge.checkpoint_rules import check
from graders.submission import Submission

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "solutions" / "02_two_latent_failures.py").read_text()

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the crash harness needs fork")


class Spy:
    """The default rules, counting the crash states they are asked about."""

    def __init__(self):
        self.states = 0

    def __call__(self, *args, **kwargs):
        self.states += 1
        return check(*args, **kwargs)


def _live_reference():
    namespace: dict = {"__name__": "reference"}
    exec(compile(REFERENCE, "reference.py", "exec"), namespace)
    return Submission.from_functions(namespace["run_agent"], namespace["save_checkpoint"])


def test_the_crash_matrix_of_live_functions_is_held_to_the_exercises_rules():
    spy = Spy()
    [result] = run_crash_matrix(_live_reference(), [CHECKS["l2_atomic_save"]], None, True,
                                rules=spy).values()
    assert result.passed and spy.states > 1


def test_the_power_cuts_of_a_recorded_run_are_held_to_the_exercises_rules():
    spy = Spy()
    with RecordedHarness(Submission.from_source(REFERENCE), rules=spy) as harness:
        harness.run_matrix("support-tickets")  # the run itself, recorded and judged once
        spy.states = 0
        verdicts = harness.power_verdicts("support-tickets")
    assert verdicts and spy.states >= len(verdicts) - 1
