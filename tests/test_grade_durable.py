"""The durable writes a grading batch commits with: a folder swapped in whole, run again after a
crash, with and without ``renameat2(RENAME_EXCHANGE)``; a file replaced whole."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graders.nbgrader_plumbing import durable
from graders.nbgrader_plumbing.durable import inode_of, read_json, swap_in, write_durably


def _folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    staged, dest = tmp_path / "shadow" / "alice", tmp_path / "course" / "alice"
    staged.mkdir(parents=True)
    dest.mkdir(parents=True)
    (staged / "a.ipynb").write_text("new")
    (dest / "a.ipynb").write_text("old")
    (dest / "timestamp.txt").write_text("2026-12-05")
    return staged, dest, tmp_path / "old" / "alice"


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_a_folder_is_swapped_in_whole_and_a_second_run_changes_nothing(tmp_path, monkeypatch,
                                                                        exchange):
    if not exchange:
        monkeypatch.setattr(durable, "_exchange", lambda a, b: False)
    staged, dest, old = _folders(tmp_path)
    node = inode_of(staged)
    swap_in(staged, dest, node, old)
    assert inode_of(dest) == node and (dest / "a.ipynb").read_text() == "new"
    kept = staged if exchange else old  # the old folder, whole, where it can be removed
    assert sorted(p.name for p in kept.iterdir()) == ["a.ipynb", "timestamp.txt"]
    swap_in(staged, dest, node, old)  # the rerun after a crash past the swap
    assert inode_of(dest) == node and (dest / "a.ipynb").read_text() == "new"


def test_a_crash_between_the_two_renames_is_finished_by_the_rerun(tmp_path):
    staged, dest, old = _folders(tmp_path)
    node = inode_of(staged)
    old.parent.mkdir(parents=True)
    os.rename(dest, old)  # the first rename of the fallback, then the crash
    swap_in(staged, dest, node, old)
    assert inode_of(dest) == node and (old / "timestamp.txt").exists()


def test_a_new_folder_lands_where_there_was_none(tmp_path):
    staged = tmp_path / "shadow" / "bob"
    staged.mkdir(parents=True)
    (staged / "a.ipynb").write_text("new")
    node = inode_of(staged)
    swap_in(staged, tmp_path / "course" / "bob", node, tmp_path / "old" / "bob")
    assert (tmp_path / "course" / "bob" / "a.ipynb").read_text() == "new"
    assert not staged.exists()


def test_a_file_is_replaced_whole(tmp_path):
    path = tmp_path / "journal.json"
    write_durably(path, b'{"students": {}}')
    write_durably(path, b'{"students": {"alice": 1}}')
    assert read_json(path) == {"students": {"alice": 1}}
    assert [p.name for p in tmp_path.iterdir()] == ["journal.json"]
    path.write_text("[1, 2")  # torn by hand: not a journal
    assert read_json(path) is None
