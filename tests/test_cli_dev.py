"""``checkpoint-lab dev check``: names say outcomes; a fixture that lies about its name fails."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from graders.cli import dev as cli_dev
from graders.cli import main
from graders.sandbox import sandbox_problem

ROOT = Path(__file__).resolve().parents[1]
L2 = ["l2_atomic_save", "l2_save_point_a"]


@pytest.mark.parametrize("name, want", [
    ("passes_timestamp", {"l2_atomic_save": True, "l2_save_point_a": True}),
    ("starter", {"l2_atomic_save": False, "l2_save_point_a": False}),
    ("pretend_fails_all", {"l2_atomic_save": False, "l2_save_point_a": False}),
    ("cheat_anything", {"l2_atomic_save": False, "l2_save_point_a": False}),
    ("fails_atomic_copyfile", {"l2_atomic_save": False, "l2_save_point_a": True}),
    ("fails_save_point_a_late", {"l2_atomic_save": True, "l2_save_point_a": False}),
    ("in_place_write", "some_fail"),
])
def test_a_name_says_the_outcome(name, want, tmp_path):
    assert cli_dev.expected_outcome(tmp_path / f"{name}.py", L2) == want


def test_level3_names():
    ids = ["l3_file_synced", "l3_directory_synced"]
    got = cli_dev.expected_outcome(Path("fails_file_x.py"), ids)
    assert got == {"l3_file_synced": False, "l3_directory_synced": True}


@pytest.mark.sandbox
@pytest.mark.skipif(bool(sandbox_problem()) and os.environ.get("CI") != "true",
                    reason=str(sandbox_problem()))
def test_a_fixture_whose_name_lies_makes_dev_check_fail(tmp_path, monkeypatch, capsys):
    subs = tmp_path / "03_power_cut"
    subs.mkdir()
    shutil.copy(ROOT / "tests/fixtures/03_power_cut/starter.py", subs / "passes_but_does_not.py")
    shutil.copy(ROOT / "solutions/03_power_cut.py", subs / "passes_really.py")
    monkeypatch.setattr(cli_dev, "FIXTURES", tmp_path)
    status = main(["dev", "check", "--exercise", "03_power_cut"])
    out = capsys.readouterr().out
    assert status == 1
    assert "03_power_cut: FAIL" in out and "1/2 fixtures as named" in out
    assert "passes_but_does_not.py: l3_file_synced failed, its name says pass" in out
    assert "passes_really.py" not in out
