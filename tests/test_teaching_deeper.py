"""Going deeper: two writers on one temp name, a cross-filesystem rename, the power-cut model."""

from __future__ import annotations

import json
import os

import pytest

from graders.teaching.deeper import (
    OUTCOMES,
    SAVE_PROGRAMS,
    cross_filesystem_rename,
    power_loss_outcomes,
    power_loss_table,
    two_writers,
)


def test_one_fixed_temp_name_mixes_two_saves(tmp_path):
    result = two_writers(tmp_path, unique_names=False)
    assert result.writer is None and result.mixed
    on_disk = (tmp_path / "checkpoint.json").read_text()
    assert on_disk == result.checkpoint
    assert "B's rename fails" in result.steps[-1]
    assert "neither writer's save" in result.to_text()
    assert sorted(os.listdir(tmp_path)) == ["checkpoint.json"]


def test_unique_temp_names_keep_each_save_whole_and_the_later_rename_wins(tmp_path):
    result = two_writers(tmp_path, unique_names=True)
    assert result.writer == "B" and result.valid_json and not result.mixed
    assert json.loads(result.checkpoint)["turns"] == 2
    assert sorted(os.listdir(tmp_path)) == ["checkpoint.json"]


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="needs a /dev/shm (Linux)")
def test_a_rename_from_another_filesystem_fails_with_exdev(tmp_path):
    if os.stat("/dev/shm").st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("/dev/shm is on the same filesystem as the test's temp folder here")
    message = cross_filesystem_rename(tmp_path)
    assert "EXDEV" in message and "next to checkpoint.json" in message
    assert not (tmp_path / "checkpoint.json").exists()
    assert not [n for n in os.listdir("/dev/shm") if n.startswith("checkpoint.") and
                n.endswith(".tmp")]


def test_with_no_other_filesystem_it_says_so(tmp_path):
    message = cross_filesystem_rename(tmp_path, candidates=(str(tmp_path),))
    assert "cannot be shown here" in message


def _final(name):
    return power_loss_outcomes(SAVE_PROGRAMS[name])[-1][1]


def test_power_cut_model():
    assert _final("in place") == {"old save", "new save", "empty or torn"}
    assert _final("temp + rename") == {"old save", "new save", "empty or torn"}
    assert _final("temp + fsync + rename") == {"old save", "new save"}
    assert _final("temp + fsync + rename + fsync dir") == {"new save"}
    for name, program in SAVE_PROGRAMS.items():
        rows = power_loss_outcomes(program)
        assert len(rows) == len(program)
        assert all(outcomes <= set(OUTCOMES) and outcomes for _, outcomes in rows)
        if name != "in place":
            assert all(outcomes == {"old save"} for _, outcomes in rows[:-2]), name


def test_power_cut_table_flags_the_programs_that_can_lose_the_checkpoint():
    flagged, program = {}, None
    for line in power_loss_table().splitlines():
        if not line.startswith(" "):
            program = line.rstrip(":")
        elif "<- can lose the checkpoint" in line:
            flagged[program] = flagged.get(program, 0) + 1
    assert flagged == {"in place": 3, "temp + rename": 1}
