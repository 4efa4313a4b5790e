"""The typed result: `CheckRecord` (one check) and `SubmissionResult` (a submission), as the
feedback, the table, the CSV and Gradescope render them."""

from __future__ import annotations

import json

import pytest

from graders.checks import CHECKS, CheckResult
from graders.checks.record import CheckRecord, SubmissionResult, failure_record, record_of
from graders.nbgrader_plumbing.cells import record_text


def _record(**change) -> CheckRecord:
    failed = record_of(CheckResult("l2_atomic_save", False, 0, "a kill left half a file."))
    return CheckRecord.from_json({**failed.to_json(), **change})


def test_a_record_goes_to_json_and_back_unchanged():
    record = record_of(CheckResult("l2_atomic_save", False, 0, "a kill left half a file."))
    stored = json.loads(json.dumps(record.to_json()))
    assert CheckRecord.from_json(stored) == record
    assert sorted(stored) == ["cause", "check_id", "crash_points", "failed", "hidden", "message",
                              "notebook", "points", "score", "status", "summary", "title"]
    assert record.points == CHECKS["l2_atomic_save"].points and record.status == "failed"


@pytest.mark.parametrize("change", [
    {"status": "great"}, {"points": True}, {"points": "3"}, {"hidden": "no"}, {"title": None},
    {"failed": 1.5}, {"message": ["a", "list"]},
])
def test_a_stored_record_that_is_not_one_is_read_as_none(change):
    record = record_of(CheckResult("l2_atomic_save", False, 0, "why")).to_json()
    assert CheckRecord.from_json({**record, **change}) is None
    del record["cause"]
    assert CheckRecord.from_json(record) is None
    assert CheckRecord.from_json("a string") is None


def test_a_records_status_is_one_of_three():
    with pytest.raises(ValueError, match="status"):
        _record().__class__(**{**_record().to_json(), "status": "maybe"})


def test_a_submission_result_adds_up_and_splits_what_is_hidden():
    visible = record_of(CheckResult("l2_atomic_save", True, CHECKS["l2_atomic_save"].points, ""))
    hidden = failure_record("l2_hidden", 2.0, "the grader failed", "grader_fault")
    hidden = CheckRecord.from_json({**hidden.to_json(), "hidden": True})
    result = SubmissionResult((visible, hidden))
    assert result.score == visible.points and result.points == visible.points + 2.0
    assert result.visible == (visible,) and result.hidden == (hidden,)
    assert [r["check_id"] for r in result.to_json()] == ["l2_atomic_save", "l2_hidden"]


def test_every_view_reads_the_records_words():
    record = _record(message="what was on disk and what was expected")
    assert "what was on disk and what was expected" in record_text(record)
    assert "not passed (0/" in record_text(record)


def test_no_view_reads_a_record_as_an_untyped_dict():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "graders"
    views = [p for folder in ("checks", "nbgrader_plumbing", "gradescope", "cli")
             for p in (root / folder).rglob("*.py")]
    found = [f"{p.relative_to(root)}:{n}" for p in views
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"record(\.get\(|\[)[\"'](status|cause|score|points|message|summary)",
                          line)]
    assert found == []
