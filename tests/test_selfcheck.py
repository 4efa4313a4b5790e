"""graders.checks.selfcheck: the self-check table, as text and as HTML, and self_check on live
code."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from graders.checks import CHECKS, CheckResult
from graders.checks.selfcheck import MAX_POINT_ROWS, ResultTable, self_check
from graders.grading import observers
from graders.judge.recording import Verdict
from tests.conftest import ROOT


def verdict(point: str, passed: bool, message: str, problems=("in_place_write",)) -> Verdict:
    kind = "no_crash" if point == "no_crash" else point.rsplit("_save_", 1)[0]
    return Verdict("support-tickets", point, kind, passed, message,
                   {"problems": [] if passed else list(problems)})


def failing_atomic(n: int = 2) -> CheckResult:
    verdicts = [verdict(f"torn_write_save_{i}", False, f"torn save {i} <b>half</b>")
                for i in range(1, n + 1)]
    verdicts.append(verdict("no_crash", True, "ran to the end"))
    return CheckResult("l2_atomic_save", False, 0, "full message; At torn_write_save_1: torn",
                       verdicts, summary="2 of 2 failed.")


class _Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []
        self.tags: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_text_table_lists_each_check_and_each_failed_crash_point():
    passing = CheckResult("l2_save_point_a", True, 3, "every tool accounted for", [])
    table = ResultTable([failing_atomic(), passing], hidden=[CHECKS["l2_atomic_save_hidden"]],
                        title="Self-check")
    text = str(table)
    lines = text.splitlines()
    assert lines[0] == "Self-check"
    assert lines[1].split() == ["check", "/", "crash", "point", "result", "message"]
    assert any(line.startswith("l2_kill_during_save ") and "FAIL 0/3" in line for line in lines)
    # one row per cause: save 1's message, then the other crash points with the same cause
    assert any(line.startswith("  torn_write_save_1 ") for line in lines)
    assert "torn_write_save_2." in text and "torn save 1 <b>half</b>" in text  # not escaped
    assert "2 of 2 failed." in text and "full message" not in text  # the summary, points below
    assert any(line.startswith("l2_kill_during_tool ") and "PASS 3/3" in line for line in lines)
    assert "no_crash" not in text  # a passing crash point is not listed
    assert "when graded" in text and "long-migration" in text
    assert lines[-1] == ("1 of 2 checks passed, 3 of 6 points; 1 hidden checks run when your "
                         "work is graded.")
    assert not table.passed and table.points == (3, 6)


def test_html_table_escapes_messages_and_has_the_same_rows():
    table = ResultTable([failing_atomic()])
    html = table._repr_html_()
    assert "<b>half</b>" not in html and "&lt;b&gt;half&lt;/b&gt;" in html
    parser = _Cells()
    parser.feed(html)
    assert parser.rows[0] == ["check / crash point", "result", "message"]
    assert [r[0] for r in parser.rows[1:]] == [r.name for r in table.rows()]
    assert [r[1] for r in parser.rows[1:]] == [r.status for r in table.rows()]
    assert "script" not in parser.tags


def test_a_crash_point_that_passed_is_not_listed():
    result = CheckResult("l2_atomic_save", False, 0, "msg", [
        verdict("torn_write_save_1", True, "still held save 0"),
        verdict("torn_write_save_2", False, "torn")], summary="1 of 2 failed.")
    names = [r.name for r in ResultTable([result]).rows()]
    assert names == ["l2_kill_during_save", "torn_write_save_2"]  # the check by its label


def test_many_failed_crash_points_are_capped():
    result = failing_atomic(MAX_POINT_ROWS + 3)
    for number, v in enumerate(result.verdicts):  # each crash point a cause of its own
        v.evidence["problems"] = [f"cause_{number}"] if not v.passed else []
    rows = ResultTable([result]).rows()
    assert len(rows) == 1 + MAX_POINT_ROWS + 1
    assert rows[-1].message.startswith("3 more crash points failed")


def test_one_result_shows_itself_as_a_table():
    result = failing_atomic()
    assert "  torn_write_save_1 " in str(result)
    assert "<table" in result._repr_html_()
    assert repr(result) == "<CheckResult l2_atomic_save FAIL 0/3>"


def _namespace(path: Path) -> dict:
    namespace: dict = {"__name__": "__main__"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


@pytest.mark.parametrize("notebook, reference, starter", [
    ("01_incomplete_checkpoint", "solutions/01_incomplete_checkpoint.py",
     "tests/fixtures/01_incomplete_checkpoint/starter.py"),
    ("02_two_latent_failures", "solutions/02_two_latent_failures.py",
     "tests/fixtures/02_two_latent_failures/starter.py"),
])
@pytest.mark.sandbox
def test_self_check_runs_the_visible_checks_on_live_code(notebook, reference, starter, tmp_path,
                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = self_check(_namespace(ROOT / reference), notebook)
    assert good.passed and [r.check_id for r in good.results] == [
        c.id for c in CHECKS.values() if c.notebook == notebook and not c.hidden]
    assert {c.id for c in good.hidden} == {
        c.id for c in CHECKS.values() if c.notebook == notebook and c.hidden}
    bad = self_check(_namespace(ROOT / starter), notebook)
    assert not bad.passed and bad.points[0] == 0
    assert "FAIL" in str(bad)


def test_self_check_needs_an_exercise_notebook_name():
    with pytest.raises(ValueError, match="unknown exercise notebook"):
        self_check({}, "lesson")


def test_self_check_runs_nothing_under_nbgrader_autograde(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    table = self_check({}, "02_two_latent_failures")
    assert table.results == [] and "being graded" in str(table)


# -- a check that could not run here, and the observer a self-check takes -----------------------


def test_a_check_that_did_not_run_reads_not_checked_here_with_its_points_pending():
    from graders.checks.result import not_checked

    result = not_checked("l2_atomic_save", "Could not run this check here: no fork. Run it "
                         "where Python has fork, or hand it in: it runs when graded.")
    assert result.status == "not_checked" and not result.passed and not result.checked
    passing = CheckResult("l2_save_point_a", True, 3, "every tool accounted for", [])
    assert passing.status == "passed" and failing_atomic().status == "failed"
    table = ResultTable([result, passing])
    text = str(table)
    assert "FAIL" not in text and "not checked here, 3 pending" in text
    assert "Could not run this check here: no fork" in " ".join(text.split())
    assert table.summary() == ("1 of 2 checks passed, 3 of 6 points; 1 not checked here "
                               "(3 points pending).")
    assert not table.passed and table.failed == [] and table.not_checked == [result]
    assert repr(result) == "<CheckResult l2_atomic_save NOT CHECKED (3 pending)>"
    again = CheckResult.from_dict(result.to_dict())
    assert again.status == "not_checked" and not again.passed
    with pytest.raises(ValueError):
        CheckResult("l2_atomic_save", False, 0, "?", status="skipped")


def test_run_check_gives_validate_no_score_for_a_check_that_did_not_run(capsys):
    from graders.checks import run_check

    assert run_check("l2_atomic_save", {}) is None  # nothing defined yet: not checked
    out = capsys.readouterr().out
    assert "not checked here" in out and "FAIL" not in out


def test_checkpoint_lab_check_exits_3_when_nothing_failed_but_a_check_did_not_run(
        monkeypatch, capsys):
    import dataclasses

    from graders.checks import EXERCISES
    from graders.cli import main

    def broken(*args, **kwargs):
        raise RuntimeError("a grader fault")

    name = "02_two_latent_failures"
    monkeypatch.setitem(EXERCISES, name, dataclasses.replace(EXERCISES[name], grade=broken))
    status = main(["check", str(ROOT / "exercises" / "02_two_latent_failures.ipynb")])
    out = capsys.readouterr().out
    assert status == 3 and "not checked here" in out and "FAIL" not in out


@pytest.mark.sandbox
def test_the_self_check_takes_the_best_observer_the_machine_has(monkeypatch):
    import graders.sandbox.box as box
    from graders.grading import observers as engine

    tools = box.find_tools()
    monkeypatch.delenv("CHECKPOINT_LAB_OBSERVER", raising=False)
    monkeypatch.delenv("CHECKPOINT_LAB_SANDBOX", raising=False)
    if box.sandbox_problem() is None:
        assert engine.observer() == "sandbox" and engine.observer_note() is None
    if engine.strace_problem() is None:
        monkeypatch.setattr(box, "find_tools", lambda: box.Tools(tools.strace, None,
                                                                 tools.prlimit, tools.setpriv))
        assert engine.observer() == "strace" and "strace" in engine.observer_note()
    monkeypatch.setattr(box, "find_tools", lambda: box.Tools(None, None, None, None))
    assert engine.observer() == "inprocess" and "in this process" in engine.observer_note()
    monkeypatch.setattr(engine.sys, "platform", "emscripten")  # the site's Pyodide
    assert engine.observer_note() == engine.BROWSER_NOTE and "machine" not in engine.BROWSER_NOTE
    monkeypatch.setenv("CHECKPOINT_LAB_OBSERVER", "sandbox")
    assert engine.observer() == "sandbox"


@pytest.mark.parametrize("notebook, reference, starter", [
    ("03_power_cut", "solutions/03_power_cut.py", "tests/fixtures/03_power_cut/starter.py"),
    ("04_parallel_tool_calls", "solutions/04_parallel_tool_calls.py",
     "tests/fixtures/04_parallel_tool_calls/starter.py"),
])
def test_levels_3_and_4_self_check_live_code_with_the_in_process_recorder(
        notebook, reference, starter, monkeypatch):
    monkeypatch.setenv("CHECKPOINT_LAB_OBSERVER", "inprocess")
    good = self_check(_namespace(ROOT / reference), notebook)
    assert good.passed, str(good)
    # the observer is named once, under the table, not in each row (issue 28 item 6)
    assert good.notes == [observers.NOTES["inprocess"]]
    assert not any("no strace" in r.message for r in good.results)
    assert str(good).count("no strace") == 1 and good._repr_html_().count("no strace") == 1
    bad = self_check(_namespace(ROOT / starter), notebook)
    assert bad.failed and not bad.not_checked and bad.points[0] == 0
