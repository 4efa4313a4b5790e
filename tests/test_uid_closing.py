"""What the uid tier closes to other users while it grades is put back (issue 29, residue).

Real folders, real modes, real grading processes holding the journal and killed with SIGKILL;
the journal lives in a folder of the test's own (in grading: the uid locks' folder).
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from graders.sandbox.uid_closing import Closing, reopen_left
from tests.conftest import ROOT

#: A grader: closes argv[2:] with the journal in argv[1], says so, and holds them until killed.
_GRADER = r"""
import sys, time
from graders.sandbox.uid_closing import Closing
closing = Closing(sys.argv[1])
print(",".join(closing.close(sys.argv[2:])), flush=True)
time.sleep(600)
"""


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def course(tmp_path):
    journal = tmp_path / "journal"
    journal.mkdir(mode=0o700)
    folders = []
    for name in ("course", "submissions", "home"):
        folder = tmp_path / name
        folder.mkdir()
        os.chmod(folder, 0o755)
        folders.append(folder)
    return str(journal), folders


def _grader(journal: str, *paths: Path) -> tuple[subprocess.Popen, list[str]]:
    proc = subprocess.Popen([sys.executable, "-c", _GRADER, journal, *map(str, paths)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return proc, proc.stdout.readline().strip().split(",")


def test_every_mode_closed_is_put_back_when_grading_ends(course):
    journal, folders = course
    os.chmod(folders[2], 0o750)  # already closed to others: nothing to change, nothing to name
    closing = Closing(journal)
    assert closing.close(folders) == [str(folders[0]), str(folders[1])]
    assert [_mode(f) for f in folders] == [0o750, 0o750, 0o750]
    assert sorted(closing.open_again()) == [str(folders[0]), str(folders[1])]
    assert [_mode(f) for f in folders] == [0o755, 0o755, 0o750]
    assert reopen_left(journal) == []


def test_what_a_killed_grader_closed_is_put_back_at_the_next_start(course):
    journal, folders = course
    grader, closed = _grader(journal, *folders)
    assert closed == [str(f) for f in folders]
    assert reopen_left(journal) == [], "a live grader's folders were opened"
    assert [_mode(f) for f in folders] == [0o750] * 3
    grader.send_signal(signal.SIGKILL)
    grader.wait()
    assert sorted(reopen_left(journal)) == sorted(str(f) for f in folders)
    assert [_mode(f) for f in folders] == [0o755] * 3
    assert sorted(os.listdir(journal)) == ["closed-folders.json", "closed-folders.lock"]


def test_a_folder_stays_closed_while_another_grader_needs_it(course):
    journal, folders = course
    other, _ = _grader(journal, folders[0], folders[2])  # the same home, another course
    try:
        closing = Closing(journal)
        assert closing.close([folders[1], folders[2]]) == [str(folders[1])]
        assert closing.open_again() == [str(folders[1])]
        assert _mode(folders[2]) == 0o750, "opened while another grader still grades"
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()
    assert sorted(reopen_left(journal)) == [str(folders[0]), str(folders[2])]
    assert [_mode(f) for f in folders] == [0o755] * 3


def test_a_mode_changed_while_grading_is_left_as_it_was_changed(course):
    journal, folders = course
    closing = Closing(journal)
    closing.close(folders[:1])
    os.chmod(folders[0], 0o700)  # the instructor's own change, meanwhile
    assert closing.open_again() == []
    assert _mode(folders[0]) == 0o700
