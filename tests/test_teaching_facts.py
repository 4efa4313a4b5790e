"""Sentences the course had wrong or misleading (issue 30, F1-F12), held to what is true."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

LESSONS = {p.name[:2]: p.read_text(encoding="utf-8") for p in ROOT.glob("lessons/0*.py")}
SOLUTION = {p.name: p.read_text(encoding="utf-8") for p in ROOT.glob("solutions/*.md")}


def _flat(text: str) -> str:
    """Markdown comments of a jupytext file as one line of prose."""
    return " ".join(line.lstrip("# ").strip() for line in text.splitlines())


def test_f1_tokens_used_is_a_budget_and_compaction_is_judged_on_the_context():
    lesson = _flat(LESSONS["01"])
    assert "`tokensUsed` is a budget counter" in lesson
    assert "size of the context" in lesson and "`input_tokens`" in lesson


def test_f2_the_torn_write_is_cut_at_save_1s_length_and_size_proves_nothing():
    lesson = _flat(LESSONS["03"])
    assert "half of its bytes" not in lesson and "save 1's length" in lesson
    assert "the same size is no evidence" in lesson
    from graders.teaching.predictions import PREDICTIONS

    assert not any("half" in c.text.lower() for p in ("torn_in_place", "torn_atomic")
                   for c in PREDICTIONS[p].choices)


@pytest.mark.parametrize("text", [LESSONS["04"], SOLUTION["03_power_cut.written_answers.md"]])
def test_f3_the_crash_model_is_described_as_what_it_is(text):
    flat = _flat(text)
    assert "POSIX lets" not in flat and "survives them all" not in flat
    assert "Pillai" in flat and "ext4, xfs and btrfs" in flat


def test_f6_windows_rename_durability_is_said_as_documented():
    for text in (LESSONS["04"], SOLUTION["03_power_cut.written_answers.md"]):
        flat = _flat(text)
        assert "no durable rename is documented" not in flat
        assert "write-through" in flat
    assert "sharing it for deletion" in _flat(LESSONS["03"])


def test_f7_tool_results_come_before_any_text():
    assert "before any text" in _flat(LESSONS["05"])


def test_f8_even_both_save_points_can_rerun_a_tool_so_resume_reconciles():
    lesson = _flat(LESSONS["02"])
    assert "whole story" not in lesson
    assert 'moment="save_B_1", save_points="A and B", write_mode="temp + rename"' in LESSONS["02"]
    assert "reconcile" in lesson and "`tool_use` id" in lesson and "idempotency key" in lesson
    assert "whole story" not in SOLUTION["02_two_latent_failures.written_answers.md"]


def test_f10_resume_agrees_tokens_used_can_be_re_estimated():
    source = (ROOT / "graders" / "loop" / "resume.py").read_text(encoding="utf-8")
    assert "Re-estimating would need" not in source
    assert "It can be re-estimated from the messages, " in source


def test_f8_what_the_lesson_says_of_moment_4_is_what_the_timeline_finds():
    from graders.teaching.timeline import build_timeline

    state = build_timeline("support-tickets").state("save_B_1", save_points="A and B",
                                                    write_mode="temp + rename")
    assert state.outcome == "finished tool reruns"
    assert "save point A of turn 1" in state.disk.headline
    assert "list_tickets" in [name for name, _ in state.resume.ledger], "it runs a second time"
