"""The replayed crash states against real kills, and the self-check against grading.

Grading builds each crash state by replaying what strace recorded of ONE run in the sandbox; the
in-process recorder (a self-check where there is no strace) records one run inside the student's
process for the same judge; the forking harness (the lessons) really kills the code at each crash
point. On honest submissions all three must agree: the replayed disk is the disk a real kill
leaves, and over the whole catalog (every level's reference, starter and each ``passes_*`` /
``fails_*`` fixture; never a ``cheat_*``) the recorder and the sandbox give the same verdict on
every check, every crash point and every crash state (every moment of every point, and every
power-cut state of Level 3).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graders.checks import CHECKS, NOTEBOOKS, grade_submission
from graders.grading.forked import Harness
from graders.grading.recorded import TracedHarness
from graders.submission import Submission

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "tests" / "fixtures" / "02_two_latent_failures"
HONEST = sorted([ROOT / "solutions" / "02_two_latent_failures.py",
                 *(p for p in SUBMISSIONS.glob("*.py") if not p.name.startswith("level1_"))])

pytestmark = [pytest.mark.sandbox, pytest.mark.usefixtures("sandbox_here")]



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


# -- the in-process recorder against the sandbox, over the whole catalog ---------------------

CATALOG = [(name, path) for name in NOTEBOOKS
           for path in [ROOT / "solutions" / f"{name}.py",
                        *sorted((ROOT / "tests" / "fixtures" / name).glob("*.py"))]
           if not path.name.startswith("cheat_")]


def graded_source(name: str, path: Path):
    """The fixture as grading takes it from a notebook: the answer cells it stands for."""
    from graders.checks.answer_cells import fixture_cells

    return fixture_cells(path.read_text(), name)


def run_source(name: str, path: Path) -> str:
    """What runs for the fixture: its cells with the code the grader adds (the exercise's
    program)."""
    from graders.checks import exercise

    submission, problem = exercise(name).program(graded_source(name, path))
    assert problem is None, problem
    return submission.source


def every_state(rec, scenario, name: str) -> list:
    """Every crash point's every moment (and every power-cut point, where the exercise judges
    power cuts), with its verdict."""
    from graders.checks import checks_for, exercise
    from graders.judge import checkpoint_rules
    from graders.judge.matrix import build_matrix
    from graders.judge.power import judge_power

    if rec.ended == "not_loaded":
        return [("not_loaded", rec.load)]
    checker = exercise(name).rules or checkpoint_rules.check
    matrix = build_matrix(rec, scenario)
    states = [(pm.point.id, [(m.how, checker(matrix.observation(pm, m), scenario,
                                               pm.point).passed) for m in pm.moments])
              for pm in matrix.points]
    if any("power_cut" in c.kinds for c in checks_for(name)):
        states += [(v.point, v.passed) for v in judge_power(matrix, scenario, checker)]
    return states + [("discrepancies", matrix.discrepancies), ("ended", rec.ended)]


@pytest.mark.timeout(1500)  # the first to ask for `graded` waits for the session's dev check
@pytest.mark.parametrize("name, path", CATALOG, ids=[f"{n[:2]}-{p.stem}" for n, p in CATALOG])
def test_the_in_process_recorder_and_the_sandbox_agree_on_every_verdict(name, path, monkeypatch,
                                                                        graded):
    from fake_llm import load_scenario
    from graders.checks import checks_for
    from graders.grading.recorded import unwatchable
    from graders.inprocess.record import record_in_process
    from graders.sandbox import record

    monkeypatch.delenv("CHECKPOINT_LAB_OBSERVER", raising=False)
    if path.parent.name == "solutions":  # dev check grades the reference as released
        sandboxed = grade_submission(graded_source(name, path), name)
    else:  # the sandbox's grading of this very fixture, once per run (tests/graded.py)
        sandboxed = graded(name, path)
    monkeypatch.setenv("CHECKPOINT_LAB_OBSERVER", "inprocess")
    checked = grade_submission(graded_source(name, path), name, allow_fallback=True)
    if unwatchable(path.read_text()):  # C calls through ctypes: not checked, never a verdict
        assert {r.status for k, r in checked.items() if CHECKS[k].scenario} == {"not_checked"}
        return
    assert {k: (r.status, [(v.point, v.passed) for v in r.verdicts])
            for k, r in checked.items()} == {
        k: (r.status, [(v.point, v.passed) for v in r.verdicts]) for k, r in sandboxed.items()}, \
        {k: (sandboxed[k].message, checked[k].message) for k in sandboxed
         if sandboxed[k].status != checked[k].status}
    source = run_source(name, path)
    for scenario in {c.scenario for c in checks_for(name) if c.scenario}:
        sc = load_scenario(scenario)
        in_process = every_state(record_in_process(source, sc), sc, name)
        assert in_process == every_state(record(source, sc), sc, name), scenario
