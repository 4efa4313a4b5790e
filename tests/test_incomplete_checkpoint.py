"""Level 1's save check, graded as grading does (in the sandbox, watched from outside): killed
while each tool runs, and held to what the grader read from disk at each call."""

from __future__ import annotations

import pytest

from graders.checks import grade_submission
from tests.conftest import ROOT

L1_FIXTURES = ROOT / "tests" / "fixtures" / "01_incomplete_checkpoint"

pytestmark = [pytest.mark.sandbox, pytest.mark.usefixtures("sandbox_here")]


def saves_all_six(save: str):
    source = f"# --- answer cell l1_save_checkpoint ---\n{save}"
    return grade_submission(source, "01_incomplete_checkpoint")["l1_saves_all_six"]


def test_a_save_that_skips_the_first_save_point_fails_at_the_first_tool():
    """Killed only while the middle tool ran, this save passed: by then a result was in."""
    result = saves_all_six((L1_FIXTURES / "fails_skips_saves_before_first_result.py").read_text())
    assert not result.passed
    assert "killed while tool 1 ran: there was no checkpoint.json" in result.message


def test_every_tool_is_a_kill_and_the_message_names_each():
    result = saves_all_six((L1_FIXTURES / "passes_whole_state.py").read_text())
    assert result.passed, result.message
    assert "killed while each of its 2 tools ran" in result.message
    assert "(list_tickets, build_table)" in result.message


BEHIND_THE_GRADERS_BACK = '''
import json, mmap


def save_checkpoint(state):
    with open("checkpoint.json", "w") as f:
        json.dump(state, f)
    # then change the file through a memory map, which no file operation shows
    with open("checkpoint.json", "r+b") as f, mmap.mmap(f.fileno(), 0) as m:
        at = m.find(b'"turns": ') + len(b'"turns": ')
        m[at:at + 1] = b"7"
'''


def test_the_disk_is_cross_checked_at_each_call_as_in_the_other_levels():
    """The replay of its file operations shows all six fields right; the disk, read by the
    grader at each call, holds turns 7: the check fails on what it could not follow."""
    result = saves_all_six(BEHIND_THE_GRADERS_BACK)
    assert not result.passed
    assert "in a way the grader could not follow" in result.message
    assert "was not what your recorded file operations leave" in result.message
