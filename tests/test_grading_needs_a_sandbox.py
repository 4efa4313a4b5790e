"""Where there is no sandbox, grading refuses in one line and a self-check says what it did."""

from __future__ import annotations

from pathlib import Path

import graders.sandbox.box as box
from graders.checks import grade_submission
from graders.cli import main
from graders.sandbox.engine import SELF_CHECK_NOTE

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "solutions" / "02_two_latent_failures.py").read_text()


def no_bwrap(monkeypatch):
    tools = box.find_tools()
    monkeypatch.setattr(box, "find_tools", lambda: box.Tools(tools.strace, None, tools.prlimit,
                                                             tools.setpriv))


def test_grade_refuses_in_one_line_naming_what_to_install(monkeypatch, tmp_path, capsys):
    no_bwrap(monkeypatch)
    (tmp_path / "course").mkdir()
    status = main(["grade", str(tmp_path), "--course", str(tmp_path / "course"),
                   "--csv", str(tmp_path / "g.csv")])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert len(err.splitlines()) == 1
    assert "bubblewrap" in err and "--no-sandbox" in err
    assert not (tmp_path / "g.csv").exists()


def test_grading_without_a_sandbox_fails_every_check_saying_why(monkeypatch):
    no_bwrap(monkeypatch)
    results = grade_submission(REFERENCE, "02_two_latent_failures", include_hidden=False)
    for result in results.values():
        assert not result.passed
        assert "Could not grade this check on this machine" in result.message
        assert "bubblewrap" in result.message


def test_a_self_check_without_a_sandbox_runs_in_process_and_says_so(monkeypatch):
    # neither bubblewrap nor strace: the self-check's observer is the in-process recorder
    monkeypatch.setattr(box, "find_tools", lambda: box.Tools(None, None, None, None))
    from graders.checks import evaluate_check

    namespace: dict = {"__name__": "__main__"}
    where = str(ROOT / "solutions" / "02_two_latent_failures.py")
    exec(compile(REFERENCE, where, "exec"), namespace)
    result = evaluate_check("l2_atomic_save", namespace)
    assert result.passed, result.message
    assert result.message.startswith(SELF_CHECK_NOTE)
