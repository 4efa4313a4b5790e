"""Level 3, a save that survives a power cut: the power-cut states and what the two checks say.

The state tests are pure (traces written here in strace's format); the grading tests run
fixtures through the sandbox, the way grading does, for what their messages say. What each
fixture earns is its folder's ``expected.json``, graded by ``checkpoint-lab dev check``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graders.checks import CHECKS, grade_submission
from graders.cli.dev import truth_of
from graders.judge.power import power_moments
from graders.judge.replay import replay
from graders.judge.trace import parse_trace
from tests.traces import hx, marker, openat, rename, write

ROOT = Path(__file__).resolve().parents[1]
L3 = "03_power_cut"
SAVE = json.dumps({"turns": 1}).encode()


def fsync(pid, fd, path):
    return f'{pid}  fsync({fd}<{hx(path)}>) = 0'


def states_at_tool(lines):
    """The power states while the tool (marker seq 9) ran, as (cause, variant, bytes)."""
    ops = parse_trace("\n".join([*lines, marker(5, 9, "tool")]), socket_inode=77)
    moments, _ = replay(ops)
    at_tool = [pw for pw in power_moments(moments, ops) if pw.moment.how == "call"][-1]
    return {(s.cause, s.variant, s.data) for s in at_tool.states}


def save(*, file_sync: bool, dir_sync: bool, dir_sync_first: bool = False):
    lines = [openat(5, "/work/c.tmp", "O_RDWR|O_CREAT|O_EXCL", 3), write(5, 3, "/work/c.tmp", SAVE)]
    if file_sync:
        lines.append(fsync(5, 3, "/work/c.tmp"))
    dir_open = (f'5  openat(AT_FDCWD<{hx("/work")}>, "{hx(".")}", O_RDONLY|O_DIRECTORY) = '
                f'4<{hx("/work")}>')
    if dir_sync and dir_sync_first:
        lines += [dir_open, fsync(5, 4, "/work")]
    lines.append(rename(5, "/work/c.tmp", "checkpoint.json"))
    if dir_sync and not dir_sync_first:
        lines += [dir_open, fsync(5, 4, "/work")]
    return lines


def test_with_both_fsyncs_a_power_cut_leaves_only_the_save():
    assert states_at_tool(save(file_sync=True, dir_sync=True)) == {(None, "", SAVE)}


def test_without_the_file_fsync_the_bytes_may_be_lost_zeroed_or_half_kept():
    found = states_at_tool(save(file_sync=False, dir_sync=True))
    assert (None, "", SAVE) in found
    assert ("data", "lost", b"") in found
    assert ("data", "zeroed", b"\0" * len(SAVE)) in found
    assert any(cause == "data" and variant == "half" for cause, variant, _ in found)


def test_without_the_folder_fsync_the_rename_may_be_undone():
    found = states_at_tool(save(file_sync=True, dir_sync=False))
    assert (None, "", SAVE) in found
    assert any(cause == "rename" and data is None for cause, _, data in found), found


def test_a_folder_fsync_before_the_rename_does_not_cover_it():
    found = states_at_tool(save(file_sync=True, dir_sync=True, dir_sync_first=True))
    assert any(cause == "rename" for cause, _, _ in found), found


def _durable_save(*, flags="O_RDWR|O_CREAT|O_EXCL", sync_line=None):
    lines = [openat(5, "/work/c.tmp", flags, 3), write(5, 3, "/work/c.tmp", SAVE)]
    if sync_line:
        lines.append(sync_line)
    dir_open = (f'5  openat(AT_FDCWD<{hx("/work")}>, "{hx(".")}", O_RDONLY|O_DIRECTORY) = '
                f'4<{hx("/work")}>')
    return [*lines, rename(5, "/work/c.tmp", "checkpoint.json"), dir_open,
            fsync(5, 4, "/work")]


def test_a_write_through_an_o_dsync_or_o_sync_descriptor_is_on_disk_when_it_returns():
    for flag in ("O_DSYNC", "O_SYNC"):
        found = states_at_tool(_durable_save(flags=f"O_WRONLY|O_CREAT|O_TRUNC|{flag}"))
        assert found == {(None, "", SAVE)}, (flag, found)


def test_sync_file_range_with_every_flag_makes_nothing_durable():
    found = states_at_tool(_durable_save(sync_line=(
        f'5  sync_file_range(3<{hx("/work/c.tmp")}>, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE|'
        'SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER) = 0')))
    assert ("data", "lost", b"") in found


def test_a_sync_through_a_duplicated_descriptor_counts_and_syncfs_covers_its_own_file_system():
    found = states_at_tool(_durable_save(sync_line=(
        f'5  fcntl(3<{hx("/work/c.tmp")}>, F_DUPFD_CLOEXEC, 0) = 9<{hx("/work/c.tmp")}>\n'
        f'5  fdatasync(9<{hx("/work/c.tmp")}>) = 0')))
    assert found == {(None, "", SAVE)}
    other = states_at_tool(_durable_save(sync_line=f'5  syncfs(7<{hx("/tmp")}>) = 0'))
    assert ("data", "lost", b"") in other, "a sync of /tmp's file system leaves /work's"


needs_sandbox = pytest.mark.usefixtures("sandbox_here")

FIXTURES = ROOT / "tests" / "fixtures" / L3
#: The fixtures that fail a check (their folder's expected.json): what their messages say.
FAILING = sorted(f"tests/fixtures/{L3}/{name}.py" for name, row in truth_of(FIXTURES).items()
                 if not all(row.values()))


def level3(path: str, **kwargs):
    code = (ROOT / path).read_text()
    return grade_submission(f"# --- answer cell l3_save_checkpoint ---\n{code}", L3, **kwargs)


@needs_sandbox
@pytest.mark.sandbox
def test_the_messages_name_the_state_and_what_resume_runs_into():
    starter = level3("tests/fixtures/03_power_cut/fails_all_no_fsync.py",
                     include_hidden=False)
    data = starter["l3_file_synced"].message
    assert "checkpoint.json could be empty" in data and "before the bytes" in data
    assert "json.load" in data
    rename_msg = starter["l3_directory_synced"].message
    assert "the rename itself may never have reached the disk" in rename_msg
    assert "run it again" in rename_msg
    early = level3("tests/fixtures/03_power_cut/fails_directory_synced_before_rename.py",
                   include_hidden=False)["l3_directory_synced"].message
    assert "the rename itself may never have reached the disk" in early
    for message in (data, rename_msg, early):
        assert "os.fsync(" not in message, "the fix is in the hints, not the message"
        for fix in ("nothing had put", "the folder is put", "too late", "folder's new entry"):
            assert fix not in message, f"the message says where the missing step goes: {fix}"


def _words(text: str) -> bool:
    """Whether ``text`` names a system call of the fix ("fsync", "fdatasync", "synced"...)."""
    return "sync" in text.lower()


@needs_sandbox
@pytest.mark.sandbox
def test_no_level3_title_or_message_names_the_system_call_that_fixes_it():
    for check in (c for c in CHECKS.values() if c.notebook == L3):
        assert not _words(f"{check.title} {check.description} {check.success}"), check.id
    for path in ["solutions/03_power_cut.py", *FAILING]:
        for cid, result in level3(path, include_hidden=False).items():
            texts = [result.message, result.summary, *(v.message for v in result.verdicts)]
            assert not any(_words(t) for t in texts), (path, cid, texts)


@needs_sandbox
@pytest.mark.sandbox
def test_a_save_without_syncs_shows_one_line_per_cause_then_the_moments():
    from graders.checks.table import ResultTable

    results = level3("tests/fixtures/03_power_cut/fails_all_no_fsync.py", include_hidden=False)
    table = ResultTable(list(results.values()))
    rows = table.rows()
    under = {r.name: [] for r in rows if r.level == 0}
    current = None
    for row in rows:
        if row.level == 0:
            current = row.name
        else:
            under[current].append(row.message)
    assert len(under["l3_never_empty"]) == 1, under["l3_never_empty"]  # the checks' labels
    assert len(under["l3_no_save_lost"]) == 1, under["l3_no_save_lost"]
    for messages in under.values():
        for message in messages:
            assert "It happens after a power cut while tool 1 (list_tickets) ran" in message
    assert len(str(table).splitlines()) < 40, str(table)


def test_the_four_checks_are_registered_with_their_points():
    ids = {c.id: c.points for c in CHECKS.values() if c.notebook == L3}
    assert ids == {"l3_file_synced": 3, "l3_directory_synced": 3,
                   "l3_file_synced_hidden": 2, "l3_directory_synced_hidden": 2}


@needs_sandbox
@pytest.mark.sandbox
def test_the_lesson_table_shows_the_four_saves_from_the_grading_engine():
    from graders.teaching.power_cut import power_cut_rows

    rows = {r.save: r for r in power_cut_rows()}
    assert [name for name, row in rows.items() if row.ok] == ["both"]
    assert any("empty" in s for s in rows["the folder only"].states)
    assert any("rename was undone" in s for s in rows["the file only"].states)
    assert rows["both"].states == ["the save A made before tool 2 (complete)"]


@pytest.mark.parametrize("label", [
    "while save 1 (save point A, before tool 1 ran) was being written",
    "1,594 of 2,269 bytes in save 1 (save point A, before tool 1 ran)",
])
def test_a_power_cut_in_a_save_is_labelled_once(label):
    """Issue 30, F12: "was being written was being written" in every failing message."""
    from graders.judge.crash_points import CrashPoint
    from graders.judge.power import _power_point

    point = _power_point(CrashPoint("torn_write_save_1", "torn_write", 1, label))
    assert point.label == "while save 1 (save point A, before tool 1 ran) was being written"
