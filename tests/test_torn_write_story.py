"""One torn write, one story (issue 28 item 6): the crash-point list, a kill at that crash point
and the check's message name the same cut of the same save.

The grader replays every cut of a save (graders.judge.replay.cut_points); the list names the cut
a real kill makes (graders.judge.crash_points.tear_limit: the middle of the bytes, or the end of
the previous save in a padded in-place record), and a check that fails there reports that cut.
It once said "after 936 of 1,873 bytes" in the list and "held 0 of its 1,873 bytes" in the check.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from graders.grading.recorded import RecordedHarness
from graders.notebook import Harness, Submission

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "02_two_latent_failures"
_CUT = re.compile(r"^after ([\d,]+) of ([\d,]+) bytes of a (?:write|copy) in save (\d+) \(")

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the crash harness needs fork")


def _cut(label: str) -> tuple[int, int]:
    match = _CUT.match(label)
    assert match, f"a torn write's label names its cut: {label!r}"
    return int(match[1].replace(",", "")), int(match[2].replace(",", ""))


@pytest.mark.parametrize("fixture", ["starter", "fails_atomic_in_place_write",
                                     "fails_atomic_padded_slot", "fails_atomic_copy_over"])
def test_the_list_a_kill_and_the_check_name_one_cut(fixture):
    submission = Submission.from_file(FIXTURES / f"{fixture}.py")
    with Harness(submission) as forked:
        listed = {p.id: p for p in forked.crash_points("support-tickets")
                  if p.kind == "torn_write"}
        killed = {pid: forked.run_point("support-tickets", pid) for pid in listed}
    with RecordedHarness(submission) as recorded:
        replayed = {p.id: p for p in recorded.crash_points("support-tickets")
                    if p.kind == "torn_write"}
        verdicts = {v.point: v for v in recorded.run_matrix("support-tickets", "torn_write")}
        seen = {pid: recorded.run_point("support-tickets", pid) for pid in listed}
    assert listed, "the fixture saves, so it has torn-write crash points"
    assert {pid: p.label for pid, p in replayed.items()} == \
        {pid: p.label for pid, p in listed.items()}, "the replay's list is the kill's list"
    told = 0
    for pid, point in listed.items():
        kept, total = _cut(point.label)
        if point.tear_target == "checkpoint":  # tore checkpoint.json itself, at that cut
            new = point.after.encode("utf-8", "surrogateescape")
            left = killed[pid].checkpoint.encode("utf-8", "surrogateescape")
            assert left[:kept] == new[:kept], pid
        assert seen[pid].checkpoint == killed[pid].checkpoint, pid
        verdict = verdicts[pid]
        if verdict.passed or verdict.evidence.get("bytes_on_disk") is None:
            continue
        if verdict.evidence["moments_checked"] > 1:  # the listed cut passed: another failed
            assert f"Killed {point.label}: " not in verdict.message
            continue
        told += 1
        assert f"Killed {point.label}: " in verdict.message, (point.label, verdict.message)
        on_disk = verdict.evidence["bytes_on_disk"]
        assert f"held {on_disk:,} of its {total:,} bytes" in verdict.message
        assert on_disk == killed[pid].checkpoint_bytes, (pid, verdict.message)
    assert told, "a failing fixture: at least one torn write is reported and compared"


def test_where_the_listed_cut_passes_the_check_names_the_moment_that_failed_exactly():
    """A padded fixed-size record rewritten in place: cut in the middle of save 1 it still
    parses; the file emptied by the open does not, and the message says that moment in the
    same words (never "just before a write ... was being written")."""
    submission = Submission.from_file(FIXTURES / "fails_atomic_padded_slot.py")
    with RecordedHarness(submission) as recorded:
        listed = {p.id: p.label for p in recorded.crash_points("support-tickets")}
        failed = [v for v in recorded.run_matrix("support-tickets", "torn_write")
                  if v.kind == "torn_write" and not v.passed]
    first = next(v for v in failed if v.point == "torn_write_save_1")
    where = listed["torn_write_save_1"][listed["torn_write_save_1"].index("("):]
    assert first.message.startswith(f"Killed just before a write in save 1 {where}: "
                                    "checkpoint.json held 0 of its "), first.message
    assert "had emptied it" in first.message
    assert all("was being written" not in v.message for v in failed)


@pytest.mark.sandbox
def test_the_graded_check_tells_the_starter_s_torn_write_as_the_notebook_lists_it():
    """Level 2's notebook lists the crash points (its l2_crash_points cell); the check, graded
    in the sandbox, reports the same cut of save 1 with the bytes it left."""
    from graders.checks.grading import grade_submission
    from graders.notebook import crash_points
    from graders.sandbox import sandbox_problem

    if sandbox_problem():
        pytest.skip(sandbox_problem())
    source = (FIXTURES / "starter.py").read_text()
    listed = {p.id: p.label
              for p in crash_points(Submission.from_source(source), "support-tickets")}
    result = grade_submission(source, "02_two_latent_failures", include_hidden=False)
    message = result["l2_atomic_save"].message
    kept, total = _cut(listed["torn_write_save_1"])
    assert (f"At torn_write_save_1: Killed {listed['torn_write_save_1']}: checkpoint.json held "
            f"{kept:,} of its {total:,} bytes") in message, message
