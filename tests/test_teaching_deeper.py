"""Two writers on one temp name (the appendix), a rename across filesystems (part 3).

(The power-cut table is graders.teaching.power_cut, tested with Level 3 in test_level3.py.)"""

from __future__ import annotations

import json
import os

import pytest

from graders.teaching.deeper import cross_filesystem_rename, two_writers


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
