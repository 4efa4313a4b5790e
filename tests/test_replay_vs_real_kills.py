"""The replayed crash states against real kills, and the self-check against grading.

Grading builds each crash state by replaying what strace recorded of ONE run; the self-check
(and the lessons) really kill the code at each crash point. On honest submissions both must
find the same file on disk at every point they share, and give the same verdict per check.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graders.checks import grade_submission
from graders.inprocess.harness import Harness
from graders.sandbox import sandbox_problem
from graders.sandbox.harness import TracedHarness
from graders.submission import Submission

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "tests" / "fixtures" / "02_two_latent_failures"
HONEST = sorted([ROOT / "solutions" / "02_two_latent_failures.py",
                 *(p for p in SUBMISSIONS.glob("*.py") if not p.name.startswith("level1_"))])

pytestmark = pytest.mark.sandbox

if sandbox_problem():
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI needs the sandbox: {sandbox_problem()}")
    pytest.skip(sandbox_problem(), allow_module_level=True)


@pytest.mark.parametrize("path", HONEST, ids=[p.stem for p in HONEST])
def test_the_replayed_disk_is_the_disk_a_real_kill_leaves(path):
    submission = Submission.from_file(path)
    with TracedHarness(submission) as traced, Harness(submission) as real:
        points = traced.crash_points("support-tickets")
        assert points
        real_ids = {p.id for p in real.crash_points("support-tickets")}
        compared = 0
        for point in points:
            if point.id not in real_ids:
                continue
            killed = real.run_point("support-tickets", point.id)
            if point.kind in ("torn_write", "killed_before_rename"):
                # a real kill inside a save leaves one of the states the replay checked
                replayed = traced.observations("support-tickets", point.id)
                assert killed.checkpoint in [o.checkpoint for o in replayed], point.id
            else:
                replayed = traced.run_point("support-tickets", point.id)
                assert replayed.checkpoint == killed.checkpoint, point.id
                assert [e.get("name") for e in replayed.ledger] == [
                    e.get("name") for e in killed.ledger], point.id
            compared += 1
        calls = [p for p in points if p.kind not in ("torn_write", "killed_before_rename")]
        assert compared >= len(calls), "the two harnesses found different calls"


@pytest.mark.parametrize("path", HONEST, ids=[p.stem for p in HONEST])
def test_the_self_check_and_grading_agree(path, monkeypatch):
    source = path.read_text()
    graded = grade_submission(source, "02_two_latent_failures", include_hidden=False)
    monkeypatch.setenv("CHECKPOINT_LAB_SANDBOX", "selfcheck")
    checked = grade_submission(source, "02_two_latent_failures", include_hidden=False,
                               allow_fallback=True)
    assert {k: r.passed for k, r in graded.items()} == {k: r.passed for k, r in checked.items()}, \
        {k: (graded[k].message, checked[k].message) for k in graded
         if graded[k].passed != checked[k].passed}
