"""A rename or link between the working folder and the temp folder is judged as failing with
EXDEV in every tier (issue 29.4): the judge's model keeps ``/work`` and ``/tmp`` two
filesystems, even where the grading machine's two folders shared one and the rename itself
succeeded (the uid tier without Landlock). Pure tests on strace's own lines."""

from __future__ import annotations

from graders.judge.replay import replay
from graders.judge.trace import parse_trace
from tests.traces import SAVE, hx, openat, rename, write


def end_of(lines):
    moments, _ = replay(parse_trace("\n".join(lines), socket_inode=77))
    return moments[-1]


def test_a_temp_file_renamed_from_tmp_over_the_checkpoint_never_becomes_it():
    temp = "/tmp/ck.tmp"
    end = end_of([openat(5, temp, "O_WRONLY|O_CREAT|O_TRUNC", 3), write(5, 3, temp, SAVE),
                  rename(5, temp, "/work/checkpoint.json")])
    assert end.data is None, "a rename from /tmp to /work was judged as if it succeeded"


def test_the_same_rename_inside_the_working_folder_still_becomes_the_checkpoint():
    temp = "/work/ck.tmp"
    end = end_of([openat(5, temp, "O_WRONLY|O_CREAT|O_TRUNC", 3), write(5, 3, temp, SAVE),
                  rename(5, temp, "/work/checkpoint.json")])
    assert end.data == SAVE


def test_a_checkpoint_moved_to_tmp_stays_in_the_working_folder():
    path = "/work/checkpoint.json"
    end = end_of([openat(5, path, "O_WRONLY|O_CREAT|O_TRUNC", 3), write(5, 3, path, SAVE),
                  rename(5, path, "/tmp/old.json")])
    assert end.data == SAVE


def test_a_hard_link_from_tmp_to_the_checkpoint_is_refused_too():
    temp = "/tmp/ck.tmp"
    end = end_of([openat(5, temp, "O_WRONLY|O_CREAT|O_TRUNC", 3), write(5, 3, temp, SAVE),
                  f'5  link("{hx(temp)}", "{hx("/work/checkpoint.json")}") = 0'])
    assert end.data is None
