"""graders.loop.resume: the reference resume routine, on real checkpoints the reference loop
wrote."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
from pathlib import Path

import pytest

from fake_llm import load_scenario
from graders.loop.resume import SIX_FIELDS, Problem, ResumeReport, resume
from tests.conftest import ROOT


def _reference_module():
    spec = importlib.util.spec_from_file_location(
        "level2_reference_for_resume_tests", ROOT / "solutions" / "02_two_latent_failures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _saves(scenario: str, workdir: Path) -> list[dict]:
    """Every checkpoint the reference loop writes on ``scenario``, read back from disk."""
    module = _reference_module()
    written = []
    save = module.save_checkpoint

    def recording_save(state):
        save(state)
        written.append(json.loads(Path("checkpoint.json").read_text()))

    module.save_checkpoint = recording_save
    sc = load_scenario(scenario)
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        module.run_agent(sc.task, sc.tools, sc.model(), sc.executor())
    finally:
        os.chdir(cwd)
    return written


@pytest.fixture(scope="module")
def tickets(tmp_path_factory) -> list[dict]:
    return _saves("support-tickets", tmp_path_factory.mktemp("tickets"))


@pytest.fixture(scope="module")
def migration(tmp_path_factory) -> list[dict]:
    return _saves("long-migration", tmp_path_factory.mktemp("migration"))


def _without(checkpoint: dict, name: str) -> dict:
    copied = copy.deepcopy(checkpoint)
    del copied[name]
    return copied


def _calls(scenario: str) -> list[tuple[str, dict]]:
    return [(c["name"], c["input"]) for c in load_scenario(scenario).tool_calls]


def test_the_reference_writes_two_saves_per_tool_call(tickets):
    assert len(tickets) == 2 * len(_calls("support-tickets")) == 4
    assert [bool(s["pendingToolUse"]) for s in tickets] == [True, False, True, False]


@pytest.mark.parametrize("save", [1, 2, 3, 4])
def test_a_complete_checkpoint_resumes_and_runs_only_what_is_left(tickets, save):
    report = resume(tickets[save - 1])
    assert report.ok, report.to_text()
    assert report.finished
    calls = _calls("support-tickets")
    # Save A (odd) still has its call pending: resume runs it again; save B recorded it.
    done = save // 2
    assert report.ledger == calls[done:]
    assert report.turns_run == report.turns_counted == len(calls)


def test_resume_reads_a_path_and_json_text(tickets, tmp_path):
    path = tmp_path / "checkpoint.json"
    path.write_text(json.dumps(tickets[1]))
    for given in (path, str(path), path.read_text(), path.read_bytes()):
        report = resume(given)
        assert report.ok and report.finished, report.to_text()


def test_missing_version_is_refused_before_anything_else(tickets):
    report = resume(_without(tickets[1], "version"))
    assert not report.ok and not report.finished
    assert [p.field for p in report.problems] == ["version"]
    assert "refuses" in report.problems[0].message
    assert report.ledger == [] and report.state is None
    assert report.outcome.startswith("Refused")


@pytest.mark.parametrize("version", [2, "1", None, 0])
def test_an_unknown_version_is_refused_loudly(tickets, version):
    checkpoint = copy.deepcopy(tickets[1])
    checkpoint["version"] = version
    report = resume(checkpoint)
    assert report.problem("version") is not None
    assert repr(version) in report.problem("version").message
    assert report.ledger == []


def test_missing_task_resumes_but_nobody_can_say_what(tickets):
    report = resume(_without(tickets[1], "task"))
    assert [p.field for p in report.problems] == ["task"]
    assert "which task" in report.problem("task").message
    assert report.finished


def test_a_checkpoint_of_another_task_stops(tickets):
    report = resume(tickets[1], scenario="long-migration")
    assert report.problem("task") is not None
    assert "another task" in report.problem("task").message
    assert report.ledger == [] and not report.finished


def test_missing_turns_makes_the_max_turn_cap_fire_late(migration):
    after_three = migration[5]  # save B of turn 3
    assert after_three["turns"] == 3 and after_three["pendingToolUse"] is None
    cap = 5
    kept = resume(after_three, scenario="long-migration", max_turns=cap)
    assert kept.ok and kept.capped_at_turn == cap and kept.turns_run == cap

    lost = resume(_without(after_three, "turns"), scenario="long-migration", max_turns=cap)
    assert lost.problem("turns") is not None
    assert "3 turns late" in lost.problem("turns").message
    assert lost.capped_at_turn == cap
    assert lost.turns_run == cap + 3, "the cap should fire three turns late"
    assert len(lost.ledger) == len(kept.ledger) + 3


def test_turns_that_disagree_with_messages_are_a_problem(tickets):
    checkpoint = copy.deepcopy(tickets[1])
    checkpoint["turns"] = 7
    report = resume(checkpoint)
    assert "turns says 7" in report.problem("turns").message


def test_missing_tokens_used_makes_compaction_late(migration):
    after_three = migration[5]
    spent = after_three["tokensUsed"]
    assert spent > 0
    threshold = spent + 1  # crossed by the next response or so
    kept = resume(after_three, scenario="long-migration", compaction_threshold=threshold)
    lost = resume(_without(after_three, "tokensUsed"), scenario="long-migration",
                  compaction_threshold=threshold)
    assert kept.compaction_at_turn is not None
    assert lost.problem("tokensUsed") is not None
    assert lost.compaction_at_turn is None or lost.compaction_at_turn > kept.compaction_at_turn


def test_missing_messages_starts_over_and_reruns_finished_tools(tickets):
    after_one = tickets[1]  # save B of turn 1: tool 1 already ran
    report = resume(_without(after_one, "messages"))
    assert report.problem("messages") is not None
    assert "from nothing" in report.problem("messages").message
    calls = _calls("support-tickets")
    assert report.ledger == calls, "the model starts from zero and calls tool 1 again"
    assert report.finished


def test_missing_messages_and_task_leave_nothing_to_start_from(tickets):
    checkpoint = _without(_without(tickets[1], "messages"), "task")
    report = resume(checkpoint)
    assert report.problem("messages") is not None and report.ledger == []
    assert not report.finished


def test_missing_pending_tool_use_hides_the_dangling_call(tickets):
    at_a = tickets[2]  # save A of turn 2: build_table named, not run
    report = resume(_without(at_a, "pendingToolUse"))
    problems = [p for p in report.problems if p.field == "pendingToolUse"]
    assert problems and at_a["pendingToolUse"]["id"] in problems[0].message
    assert "does not see it" in problems[0].message
    assert report.ledger == [] and not report.finished
    assert any("refused" in p.message for p in problems), "the model refuses the dangling call"


def test_missing_pending_tool_use_after_save_b_is_a_blind_spot_not_a_stop(tickets):
    report = resume(_without(tickets[1], "pendingToolUse"))
    assert "cannot tell" in report.problem("pendingToolUse").message
    assert report.finished


def test_pending_tool_use_without_input_is_a_problem(tickets):
    checkpoint = copy.deepcopy(tickets[2])
    del checkpoint["pendingToolUse"]["input"]
    report = resume(checkpoint)
    assert "not a record" in report.problem("pendingToolUse").message
    assert report.ledger == []


@pytest.mark.parametrize("field", SIX_FIELDS)
def test_each_missing_field_is_named_by_a_problem(tickets, field):
    report = resume(_without(tickets[2], field))
    assert field in {p.field for p in report.problems}, report.to_text()


def test_a_torn_checkpoint_is_reported_not_raised(tickets):
    text = json.dumps(tickets[2])
    report = resume(text[: len(text) // 2])
    assert report.problem(None) is not None
    assert "not valid JSON" in report.problem(None).message
    assert report.state is None and report.ledger == []


def test_no_checkpoint_file_is_reported(tmp_path):
    report = resume(tmp_path / "checkpoint.json")
    assert "nothing to resume from" in report.problem(None).message
    assert "there is no checkpoint.json" in resume(None).problem(None).message


def test_an_empty_file_is_a_torn_write(tmp_path):
    (tmp_path / "checkpoint.json").write_text("")
    for given in (tmp_path / "checkpoint.json", ""):
        assert "not valid JSON" in resume(given).problem(None).message


@pytest.mark.parametrize("bad", [[1, 2], 42, "[]", "null", b"\xff\xfe{", object(), "", "  ",
                                 "."])
def test_resume_never_raises_on_nonsense(bad):
    report = resume(bad)
    assert isinstance(report, ResumeReport) and not report.ok


def test_an_unknown_scenario_is_a_problem_not_a_traceback(tickets):
    report = resume(tickets[1], scenario="no-such-scenario")
    assert report.problem(None) is not None and "scenario" in report.problem(None).message


def test_text_and_html_show_steps_and_problems(tickets):
    checkpoint = _without(tickets[2], "pendingToolUse")
    checkpoint["task"] = tickets[2]["task"]
    report = resume(checkpoint)
    text = report.to_text()
    assert "What resume did:" in text and "Where it falls over:" in text
    assert "pendingToolUse:" in text
    page = report._repr_html_()
    assert "cl-resume-report" in page and "<li><code>pendingToolUse</code>" in page
    assert str(Problem("turns", "x")) == "turns: x"
    assert "<code>checkpoint.json</code>: a &lt;b&gt;" in Problem(None, "a <b>")._repr_html_()
