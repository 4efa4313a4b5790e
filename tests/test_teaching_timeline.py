"""The crash timeline model, and every claim the lessons make about a crash, against the harness.

The expected states are worked out here from the lesson's rules (which save each loop makes,
what an in-place or atomic save leaves when cut), not copied from the model's output.
"""

from __future__ import annotations

import json

import pytest

from fake_llm import load_scenario
from graders.inprocess.harness import Harness, run_matrix
from graders.teaching.timeline import DISK_KINDS, build_timeline
from graders.teaching.variants import SAVE_POINTS, WRITE_MODES, no_checkpoint, variant

SCENARIO = "support-tickets"
CALLS = load_scenario(SCENARIO).tool_calls
COMBOS = [(sp, wm) for sp in SAVE_POINTS for wm in WRITE_MODES]


@pytest.fixture(scope="module")
def timeline():
    return build_timeline(SCENARIO)


def _saves_before(moment_id: str, save_points: str) -> list[tuple[str, int]]:
    """The complete saves (phase, turn) a loop has made when it dies at ``moment_id``."""
    order = []
    for k in range(1, len(CALLS) + 1):
        order += [("model_call", k), ("A", k), ("tool", k), ("B", k)]
    order += [("model_call", len(CALLS) + 1), ("end", None)]
    kind, _, k = moment_id.rpartition("_")
    if moment_id == "end":
        here = ("end", None)
    elif kind.startswith("save_"):
        here = (kind[-1], int(k))
    else:
        here = (kind, int(k))
    done = order[: order.index(here) + (1 if here[0] == "end" else 0)]
    saves = [m for m in done if m[0] in ("A", "B")]
    return [s for s in saves if s[0] in _PHASES[save_points]]


#: The save points each setting of the toggle saves at.
_PHASES = {"B only": {"B"}, "A only": {"A"}, "A and B": {"A", "B"}}


def _expected(moment_id: str, save_points: str, write_mode: str) -> dict:
    """What a crash at ``moment_id`` must leave, from the rules alone."""
    saves = _saves_before(moment_id, save_points)
    mid_save = moment_id.startswith("save_")
    phase = moment_id[5] if mid_save else None
    saves_here = not (mid_save and phase not in _PHASES[save_points])
    if mid_save and saves_here and write_mode == "in place":
        return {"kind": "torn JSON", "saves_here": True}
    if not saves:
        return {"kind": "no trace", "saves_here": saves_here, "file": False}
    last_phase, last_turn = saves[-1]
    running = int(moment_id.split("_")[1]) if moment_id.startswith("tool_") else None
    pending = CALLS[last_turn - 1]["id"] if last_phase == "A" else None
    turns = last_turn if last_phase == "B" else last_turn - 1
    if running is not None and pending != CALLS[running - 1]["id"]:
        kind = "no trace"
    else:
        kind = "checkpoint"
    return {"kind": kind, "saves_here": saves_here, "file": True, "turns": turns,
            "pending": pending}


def _moment_ids():
    ids = []
    for k in range(1, len(CALLS) + 1):
        ids += [f"model_call_{k}", f"save_A_{k}", f"tool_{k}", f"save_B_{k}"]
    return [*ids, f"model_call_{len(CALLS) + 1}", "end"]


def test_the_moments_are_every_model_call_save_and_tool_in_order(timeline):
    assert [m.id for m in timeline.moments] == _moment_ids()
    assert [m.index for m in timeline.moments] == list(range(len(timeline.moments)))
    assert len({m.label for m in timeline.moments}) == len(timeline.moments)


@pytest.mark.parametrize("save_points,write_mode", COMBOS)
@pytest.mark.parametrize("moment_id", _moment_ids())
def test_every_state_is_what_the_rules_say(timeline, moment_id, save_points, write_mode):
    state = timeline.state(moment_id, save_points, write_mode)
    want = _expected(moment_id, save_points, write_mode)
    assert state.disk.kind in DISK_KINDS
    assert state.disk.kind == want["kind"], state.to_text()
    assert state.saves_here == want["saves_here"]
    obs = state.observation
    if want["kind"] == "torn JSON":
        with pytest.raises(json.JSONDecodeError):
            json.loads(obs.checkpoint)
        assert 0 < state.disk.bytes_on_disk < state.disk.bytes_expected
        assert "torn JSON" in state.disk.headline
        assert state.resume.problem(None) is not None
        return
    if not want["file"]:
        assert obs.checkpoint is None
        assert state.disk.headline.startswith("no trace")
        return
    on_disk = json.loads(obs.checkpoint)
    assert on_disk["turns"] == want["turns"]
    pending = on_disk["pendingToolUse"]
    assert (pending or {}).get("id") == want["pending"]
    if moment_id.startswith("tool_"):
        call = CALLS[int(moment_id.split("_")[1]) - 1]
        if want["kind"] == "no trace":
            assert call["id"] not in obs.checkpoint, "the call in flight must leave no trace"
            assert "no trace of the call in flight" in state.disk.headline
        else:
            assert state.disk.records_in_flight
            assert pending == {"id": call["id"], "name": call["name"], "input": call["input"]}


@pytest.mark.parametrize("save_points", SAVE_POINTS)
def test_a_cut_atomic_save_leaves_the_previous_save_and_a_temp_file(timeline, save_points):
    for moment in timeline.moments:
        state = timeline.state(moment, save_points, "temp + rename")
        if moment.kind != "save" or not state.saves_here:
            continue
        assert state.disk.kind != "torn JSON"
        assert any(name.endswith(".tmp") for name in state.disk.other_files), state.to_text()


def test_the_readme_table_for_the_browser_tests_matches(timeline, repo_root):
    readme = (repo_root / "lessons" / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| ") and ". " in line[:6]]
    assert rows, "lessons/README.md lost its table of disk views"
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        index = int(cells[0].split(".")[0]) - 1
        for (sp, wm), cell in zip(COMBOS, cells[1:], strict=True):
            assert timeline.state(index, sp, wm).disk.kind == cell, (row, sp, wm)


def test_conclusions_say_what_resume_runs_into(timeline):
    b_only = timeline.state("tool_2", "B only", "in place")
    assert "does not know build_table was running" in b_only.conclusion
    assert "build_table runs a second time" in b_only.conclusion
    assert "build_table" in [name for name, _ in b_only.resume.ledger]
    a_and_b = timeline.state("tool_2", "A and B", "temp + rename")
    assert "pendingToolUse says build_table was in flight" in a_and_b.conclusion
    torn = timeline.state("save_B_2", "B only", "in place")
    assert "starts over from zero" in torn.conclusion
    assert "list_tickets and build_table, which already ran" in torn.conclusion
    assert "nothing to resume" in timeline.state("end", "B only", "in place").conclusion


def test_the_text_fallback_has_every_moment_and_loop(timeline):
    text = timeline.to_text()
    for moment in timeline.moments:
        assert moment.short in text
    for sp, wm in COMBOS:
        assert f"{sp}, {wm}" in text
    state_text = timeline.state("tool_2", "B only", "in place").to_text()
    assert "no trace of the call in flight" in state_text and "Resume:" in state_text


def test_unknown_moments_and_toggles_are_named(timeline):
    with pytest.raises(KeyError, match="the moments are"):
        timeline.state("tool_9")
    with pytest.raises(KeyError, match="save points are"):
        timeline.state("tool_1", "C only", "in place")


# -- the claims the lesson's text makes, each run once through the harness ------------------


def test_no_checkpoint_leaves_nothing_though_tools_ran():
    with Harness(no_checkpoint()) as harness:
        obs = harness.run_point(SCENARIO, "killed_during_tool_2")
    assert obs.ended == "killed" and obs.checkpoint is None and obs.files == {}
    assert [e["name"] for e in obs.ledger] == ["list_tickets", "build_table"]


def test_in_place_torn_write_really_leaves_invalid_json_and_no_older_copy():
    sub = variant("B only", "in place")
    with Harness(sub) as harness:
        point = harness.point(SCENARIO, "torn_write_save_2")
        obs = harness.run_point(SCENARIO, point)
    assert point.before is not None, "save 1 was a complete checkpoint before save 2 started"
    assert obs.parse_error is not None
    with pytest.raises(json.JSONDecodeError):
        json.loads(obs.checkpoint)
    assert obs.checkpoint != point.before and obs.files == {}


@pytest.mark.parametrize("point_id", ["torn_write_save_2", "killed_before_rename_save_2"])
def test_temp_and_rename_really_leaves_the_previous_save_intact(point_id):
    with Harness(variant("B only", "temp + rename")) as harness:
        point = harness.point(SCENARIO, point_id)
        obs = harness.run_point(SCENARIO, point)
    assert obs.ended == "killed"
    assert obs.checkpoint == point.before, "checkpoint.json must be save 1, byte for byte"
    assert json.loads(obs.checkpoint)["turns"] == 1
    assert any(name.endswith(".tmp") for name in obs.files)


@pytest.mark.parametrize("save_points,write_mode,problems", [
    ("B only", "in place", {"in_place_write", "no_save_point_a"}),
    ("B only", "temp + rename", {"no_save_point_a"}),
    ("A and B", "in place", {"in_place_write"}),
    ("A and B", "temp + rename", set()),
])
def test_each_loop_fails_the_checker_for_exactly_its_own_mistakes(save_points, write_mode,
                                                                  problems):
    verdicts = run_matrix(variant(save_points, write_mode), SCENARIO)
    found = {p for v in verdicts for p in v.evidence.get("problems", [])}
    assert found == problems, [str(v) for v in verdicts if not v.passed]
    assert all(v.passed for v in verdicts) == (not problems)


def test_the_a_only_loop_fails_for_its_missing_save_point_b_only():
    verdicts = run_matrix(variant("A only", "temp + rename"), SCENARIO)
    found = {p for v in verdicts for p in v.evidence.get("problems", [])}
    assert "no_save_point_b" in found
    assert not found & {"in_place_write", "no_save_point_a"}, found
    failed = {v.point for v in verdicts if not v.passed}
    assert "killed_during_model_call_2" in failed and "killed_during_tool_2" not in failed


@pytest.mark.parametrize("save_points,write_mode,fixture", [
    ("B only", "temp + rename", "no_save_point_a.py"),
    ("A and B", "in place", "in_place_write.py"),
])
def test_the_middle_loops_behave_like_the_harness_fixtures_of_the_same_mistake(
        repo_root, save_points, write_mode, fixture):
    from graders.submission import Submission

    ours = run_matrix(variant(save_points, write_mode), SCENARIO)
    theirs = run_matrix(
        Submission.from_file(repo_root / "tests" / "fixtures" / "02_two_latent_failures" / fixture),
        SCENARIO)
    assert [(v.point, v.passed) for v in ours] == [(v.point, v.passed) for v in theirs]


def test_a_platform_without_fork_gets_the_timeline_from_recorded_runs_and_is_told(
        monkeypatch, capsys):
    import graders.inprocess.harness as harness_module
    import graders.teaching.timeline as timeline_module

    monkeypatch.setattr(harness_module, "unsupported_reason",
                        lambda: "The crash harness needs Linux or macOS.")
    monkeypatch.setattr(harness_module, "_told", [])
    replayed = timeline_module.build_timeline(SCENARIO)
    assert "No fork here" in capsys.readouterr().out
    monkeypatch.undo()
    assert replayed.to_text() == timeline_module.build_timeline(SCENARIO).to_text()


def test_the_claims_of_part_1_on_real_checkpoints_from_the_harness():
    from graders.loop.resume import resume
    from graders.teaching.scene import ran_twice, without

    with Harness(variant("A and B", "temp + rename")) as harness:
        during_tool_2 = harness.run_point(SCENARIO, "killed_during_tool_2")
        before_call_2 = harness.run_point(SCENARIO, "killed_during_model_call_2")
        migration = harness.run_point("long-migration", "killed_during_tool_4")
    checkpoint = during_tool_2.state
    assert set(checkpoint) == {"version", "task", "turns", "tokensUsed", "messages",
                               "pendingToolUse"}
    assert checkpoint["pendingToolUse"]["name"] == "build_table"
    assert resume(checkpoint).ok and resume(checkpoint).finished
    assert resume(dict(checkpoint, version=2)).outcome.startswith("Refused")

    assert migration.state["turns"] == 3 and len(load_scenario("long-migration").tool_calls) == 8
    kept = resume(migration.state, scenario="long-migration", max_turns=5)
    lost = resume(without(migration.state, "turns"), scenario="long-migration", max_turns=5)
    assert (kept.turns_run, lost.turns_run) == (5, 8)

    threshold = migration.state["tokensUsed"] + 100
    kept = resume(migration.state, scenario="long-migration", compaction_threshold=threshold)
    lost = resume(without(migration.state, "tokensUsed"), scenario="long-migration",
                  compaction_threshold=threshold)
    assert kept.compaction_at_turn is not None and lost.compaction_at_turn is None

    lost = resume(without(before_call_2.state, "messages"))
    assert ran_twice(before_call_2.ledger, lost.ledger) == ["list_tickets"]

    dangling = resume(without(checkpoint, "pendingToolUse"))
    assert not dangling.finished and dangling.ledger == []
    assert "does not see it" in dangling.problem("pendingToolUse").message
