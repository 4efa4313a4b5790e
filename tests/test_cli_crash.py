"""``checkpoint-lab crash FILE``: the verdict table, JSON, exit status, bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from graders.cli import main

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = str(ROOT / "solutions" / "02_two_latent_failures.py")
STARTER = str(ROOT / "tests" / "fixtures" / "02_two_latent_failures" / "starter.py")

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the crash harness needs fork")


def test_the_reference_passes_and_exits_0(capsys):
    assert main(["crash", REFERENCE]) == 0
    out = capsys.readouterr().out
    assert out.startswith("support-tickets: 14 of 14 crash points passed")
    assert "passed  killed_during_tool_2" in out


def test_the_starter_fails_and_exits_1_with_its_messages(capsys):
    assert main(["crash", STARTER]) == 1
    out = capsys.readouterr().out
    assert "FAILED  torn_write_save_1" in out
    assert "a torn write" in out


def test_json_output_is_a_list_of_verdicts(capsys):
    assert main(["crash", STARTER, "--json", "--point", "killed_during_tool_2"]) == 1
    [verdict] = json.loads(capsys.readouterr().out)
    assert verdict["point"] == "killed_during_tool_2" and verdict["passed"] is False


def test_several_scenarios_and_points(capsys):
    code = main(["crash", REFERENCE, "--scenario", "long-migration", "--scenario",
                 "support-tickets", "--point", "no_crash", "--json"])
    assert code == 0
    verdicts = json.loads(capsys.readouterr().out)
    assert [(v["scenario"], v["point"]) for v in verdicts] == [
        ("long-migration", "no_crash"), ("support-tickets", "no_crash")]


def test_a_file_that_cannot_load_is_a_failed_verdict(tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text("def save_checkpoint(state):\n    pass\ndef run_agent(:\n")
    assert main(["crash", str(broken)]) == 1
    assert "syntax error at line 3" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["crash", "no-such-file.py"], "no such file"),
        (["crash", REFERENCE, "--scenario", "nope"], "unknown scenario 'nope'"),
        (["crash", REFERENCE, "--point", "killed_during_tool_7"], "no crash point"),
        (["crash", REFERENCE, "--timeout", "0"], "--timeout"),
    ],
)
def test_bad_input_is_a_usage_error(args, error, capsys):
    assert main(args) == 2
    assert error in capsys.readouterr().err


def test_a_file_without_the_functions_is_a_usage_error(tmp_path, capsys):
    empty = tmp_path / "notes.py"
    empty.write_text("x = 1\n")
    assert main(["crash", str(empty)]) == 2
    assert "does not define save_checkpoint and run_agent" in capsys.readouterr().err
