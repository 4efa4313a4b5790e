"""The judge's model of the disk follows the kernel: descriptors, unnamed files, every path form,
inodes and links, torn writes at several cut points, and a loud failure where it cannot follow.

Pure tests on traces written here in strace's own format (``strace -f -yy -xx
--pidns-translation``), one per mechanism; each of them failed on the judge before this model.
"""

from __future__ import annotations

import json

from fake_llm import load_scenario
from graders.judge.disk_model import UNFOLLOWED
from graders.judge.matrix import judge
from graders.judge.recording import Call, Recording
from graders.judge.replay import cut_points, replay
from graders.judge.trace import parse_trace
from tests.traces import SAVE, hx, marker, openat, rename, write

OLD = json.dumps({"turns": 0, "messages": ["a"]}).encode()
NEW = json.dumps({"turns": 1, "messages": ["a", "b"]}).encode()


def fd(n, path, deleted=False):
    """A descriptor argument as ``-yy`` prints it."""
    return f"{n}<{hx(path)}>" + ("(deleted)" if deleted else "")


def line(pid, call, args, ret):
    return f"{pid}  {call}({args}) = {ret}"


def end_state(lines):
    ops = parse_trace("\n".join(lines), socket_inode=77)
    moments, _ = replay(ops)
    return moments[-1], moments


# -- descriptors: dup, dup2, dup3, fcntl(F_DUPFD), fork ---------------------------------------

def test_a_duplicated_descriptor_shares_the_offset_of_the_original():
    t = "/work/ck.tmp"
    end, _ = end_state([
        openat(5, t, "O_WRONLY|O_CREAT|O_TRUNC", 3),
        line(5, "fcntl", f"{fd(3, t)}, F_DUPFD_CLOEXEC, 0", fd(4, t)),  # os.dup
        write(5, 3, t, b"AAAA"),
        line(5, "lseek", f"{fd(4, t)}, 0, SEEK_SET", 0),  # through the copy: moves both
        write(5, 3, t, b"{}"),
        rename(5, t, "checkpoint.json"),
    ])
    assert end.data == b"{}AA"


def test_dup2_dup3_and_close_keep_one_open_file_under_each_number():
    t = "/work/ck.tmp"
    end, _ = end_state([
        openat(5, t, "O_WRONLY|O_CREAT|O_TRUNC", 3),
        write(5, 3, t, b"AAAA"),
        line(5, "dup2", f"{fd(3, t)}, 40", fd(40, t)),
        line(5, "dup3", f"{fd(3, t)}, 41, O_CLOEXEC", fd(41, t)),
        line(5, "close", fd(3, t), 0),  # closing one leaves the others
        line(5, "lseek", f"{fd(41, t)}, 1, SEEK_SET", 1),
        write(5, 40, t, b"{}"),
        rename(5, t, "checkpoint.json"),
    ])
    assert end.data == b"A{}A"


def test_a_forked_child_writes_through_the_description_it_inherited():
    t = "/work/ck.tmp"
    end, _ = end_state([
        openat(5, t, "O_WRONLY|O_CREAT|O_TRUNC", 3),
        write(5, 3, t, b"AAAA"),
        line(5, "lseek", f"{fd(3, t)}, 0, SEEK_SET", 0),
        "5  clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, "
        "child_tidptr=0x7f) = 3 /* 6 in strace's PID NS */",
        line(5, "close", fd(3, t), 0),
        openat(5, "/work/other", "O_WRONLY|O_CREAT|O_TRUNC", 3),  # the parent reuses number 3
        write(6, 3, t, b"{}"),
        rename(5, t, "checkpoint.json"),
    ])
    assert end.data == b"{}AA"


def _decoy(path):
    """Another process with the same file open under the same number, at another offset."""
    return [f'8  openat(AT_FDCWD<{hx("/work")}>, "{hx(path)}", O_WRONLY|O_CREAT, 0666) = '
            f'{fd(3, path)}', write(8, 3, path, b"AAAA")]


def test_a_child_s_first_calls_may_come_before_its_parent_s_clone_returns():
    t = "/work/ck.tmp"
    end, _ = end_state([
        *_decoy(t),
        openat(5, t, "O_WRONLY|O_CREAT", 3),  # offset 0
        "5  vfork( <unfinished ...>",
        write(6, 3, t, b"{}"),  # the child's: its parent's description, not the decoy's
        "5  <... vfork resumed>) = 3 /* 6 in strace's PID NS */",
        rename(5, t, "checkpoint.json"),
    ])
    assert end.data == b"{}AA"


def test_a_thread_shares_the_descriptor_table_and_working_directory():
    t = "/work/sub/ck.tmp"
    end, _ = end_state([
        *_decoy(t),
        "5  clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD, "
        "child_tid=0x7f, parent_tid=0x7f, exit_signal=0, stack=0x7f, stack_size=0x7fff80, "
        "tls=0x7f} => {parent_tid=[3 /* 7 in strace's PID NS */]}, 88) = 3 /* 7 in strace's PID "
        "NS */",
        f'5  mkdir("{hx("/work/sub")}", 0777) = 0',
        f'7  chdir("{hx("/work/sub")}") = 0',
        f'7  openat(AT_FDCWD<{hx("/work/sub")}>, "{hx("ck.tmp")}", O_WRONLY|O_CREAT, 0666) = '
        f'{fd(3, t)}',
        write(5, 3, t, b"{}"),  # the main thread, through the thread's descriptor
        f'5  rename("{hx("ck.tmp")}", "{hx("/work/checkpoint.json")}") = 0',  # relative: /work/sub
    ])
    assert end.data == b"{}AA"


# -- an unnamed file (O_TMPFILE) named with linkat ---------------------------------------------

def _tmpfile_save(link_line):
    return [
        f'5  openat(AT_FDCWD<{hx("/work")}>, "{hx(".")}", O_WRONLY|O_CLOEXEC|O_TMPFILE, 0644) = '
        f'{fd(3, "/work/#2", deleted=True)}',
        f'5  write({fd(3, "/work/#2", deleted=True)}, "{hx(SAVE)}", {len(SAVE)}) = {len(SAVE)}',
        link_line,
        rename(5, "/work/ck.new", "checkpoint.json"),
    ]


def test_an_o_tmpfile_file_named_with_linkat_at_empty_path_becomes_the_checkpoint():
    end, moments = end_state(_tmpfile_save(
        f'5  linkat({fd(3, "/work/#2", deleted=True)}, "", AT_FDCWD<{hx("/work")}>, '
        f'"{hx("ck.new")}", AT_EMPTY_PATH) = 0'))
    assert end.kind == "file" and end.data == SAVE
    assert {m.data for m in moments} <= {None, SAVE}, "never a partial checkpoint"


def test_an_o_tmpfile_file_named_through_proc_self_fd_becomes_the_checkpoint():
    end, _ = end_state(_tmpfile_save(
        f'5  linkat(AT_FDCWD<{hx("/work")}>, "{hx("/proc/self/fd/3")}", {fd(5, "/work")}, '
        f'"{hx("ck.new")}", AT_SYMLINK_FOLLOW) = 0'))
    assert end.kind == "file" and end.data == SAVE


def test_a_link_of_the_magic_link_itself_fails_and_changes_nothing():
    lines = _tmpfile_save(
        f'5  link("{hx("/proc/self/fd/3")}", "{hx("ck.new")}") = -1 EXDEV (Invalid cross-device '
        'link)')
    lines[-1] = lines[-1].replace("= 0", "= -1 ENOENT (No such file or directory)")
    end, _ = end_state(lines)
    assert end.kind == "absent"


# -- every path form the kernel resolves --------------------------------------------------------

def _temp_then(rename_line, temp="/work/t"):
    return [openat(5, temp, "O_WRONLY|O_CREAT|O_TRUNC", 3), write(5, 3, temp, SAVE), rename_line]


def test_proc_self_dot_cwd_and_dev_fd_of_a_folder_lead_into_the_working_folder():
    for src, dst in (("/proc/self/./cwd/t", "/proc/thread-self/cwd/checkpoint.json"),
                     ("/dev/fd/4/t", "/proc/self/fd/4/./checkpoint.json")):
        end, _ = end_state([
            openat(5, "/work", "O_RDONLY|O_DIRECTORY", 4),
            *_temp_then(rename(5, src, dst)),
        ])
        assert end.data == SAVE, (src, dst)


def test_proc_pid_cwd_is_that_process_s_working_directory():
    end, _ = end_state([
        "5  clone(child_stack=NULL, flags=SIGCHLD, child_tidptr=0x7f) = 3 /* 6 in strace's PID "
        "NS */",
        f'5  chdir("{hx("/tmp")}") = 0',  # the parent moves on; its child (pid 3 inside) stays
        f'5  openat(AT_FDCWD<{hx("/tmp")}>, "{hx("/work/t")}", O_WRONLY|O_CREAT, 0666) = '
        f'{fd(3, "/work/t")}',
        write(5, 3, "/work/t", SAVE),
        rename(5, "/proc/3/cwd/t", "/proc/3/cwd/checkpoint.json"),
    ])
    assert end.data == SAVE


def test_dirfd_relative_calls_and_dot_dot_after_a_symbolic_link():
    end, _ = end_state([
        f'5  mkdir("{hx("/work/sub")}", 0777) = 0',
        f'5  mkdir("{hx("/work/sub/inner")}", 0777) = 0',
        f'5  symlink("{hx("sub/inner")}", "{hx("/work/ln")}") = 0',
        openat(5, "/work/sub/x.tmp", "O_WRONLY|O_CREAT|O_TRUNC", 3),
        write(5, 3, "/work/sub/x.tmp", SAVE),
        openat(5, "/work/sub/inner", "O_RDONLY|O_DIRECTORY", 4),
        # ln -> sub/inner, so ln/.. is sub (not /work, as a string would say)
        f'5  renameat({fd(4, "/work/sub/inner")}, "{hx("../x.tmp")}", AT_FDCWD<{hx("/work")}>, '
        f'"{hx("ln/../y.tmp")}") = 0',
        rename(5, "/work/sub/y.tmp", "/work/checkpoint.json"),
    ])
    assert end.data == SAVE


# -- inodes and links: rename between two names of one file does nothing ---------------------

def test_after_a_hard_link_to_the_checkpoint_a_temp_and_rename_save_is_an_in_place_write():
    t = "/work/checkpoint.json.tmp"
    _, moments = end_state([
        openat(5, t, "O_WRONLY|O_CREAT|O_TRUNC", 3), write(5, 3, t, OLD),
        f'5  link("{hx("/proc/self/./cwd/checkpoint.json.tmp")}", "{hx("checkpoint.json")}") = 0',
        rename(5, t, "checkpoint.json"),  # two names of one file: nothing happens
        openat(5, t, "O_WRONLY|O_CREAT|O_TRUNC", 3),  # empties checkpoint.json too
        write(5, 3, t, NEW),
        rename(5, t, "checkpoint.json"),
    ])
    later = [m for m in moments if m.position >= 3]
    assert any(m.kind == "file" and m.data == b"" for m in later), "emptied in place"
    assert any(m.how == "during" and m.data and m.data != NEW and NEW.startswith(m.data)
               for m in later), "a torn write of checkpoint.json itself"
    assert "checkpoint.json.tmp" in moments[-1].listing, "both names stay"


def test_rename_exchange_swaps_whole_folders_and_rename_noreplace_onto_a_name_fails():
    end, _ = end_state([
        f'5  mkdir("{hx("/work/new")}", 0777) = 0', f'5  mkdir("{hx("/work/old")}", 0777) = 0',
        openat(5, "/work/new/ck", "O_WRONLY|O_CREAT|O_TRUNC", 3), write(5, 3, "/work/new/ck", NEW),
        openat(5, "/work/old/ck", "O_WRONLY|O_CREAT|O_TRUNC", 3), write(5, 3, "/work/old/ck", OLD),
        f'5  renameat2(AT_FDCWD<{hx("/work")}>, "{hx("new/ck")}", AT_FDCWD<{hx("/work")}>, '
        f'"{hx("old/ck")}", RENAME_NOREPLACE) = -1 EEXIST (File exists)',
        f'5  renameat2(AT_FDCWD<{hx("/work")}>, "{hx("old")}", AT_FDCWD<{hx("/work")}>, '
        f'"{hx("new")}", RENAME_EXCHANGE) = 0',  # folders swap with what is in them
        rename(5, "/work/old/ck", "checkpoint.json"),
    ])
    assert end.data == NEW and end.listing == {"new": "dir/", "old": "dir/"}


# -- what the model cannot follow fails loudly ----------------------------------------------------

def _judged(lines):
    """Every verdict of a one-tool run whose tool is served at marker 2."""
    scenario = load_scenario("support-tickets")
    trace = "\n".join([marker(5, 1, "model"), *lines, marker(5, 2, "tool"), marker(5, 3, "model")])
    rec = Recording("support-tickets", "loop", True, ended="finished", trace=trace,
                    socket_inode=77, calls=[
                        Call(1, "model", 1, stop_reason="tool_use"),
                        Call(2, "tool", 1, name="list_tickets", input={}, result="x"),
                        Call(3, "model", 2, stop_reason="end_turn")])
    verdicts, _ = judge(rec, scenario)
    return verdicts


def test_a_path_through_a_process_the_grader_cannot_tell_fails_every_later_state_by_name():
    verdicts = _judged([*_temp_then(rename(5, "/work/t", "/proc/99/cwd/checkpoint.json"))])
    at_tool = next(v for v in verdicts if v.point == "killed_during_tool_1")
    assert not at_tool.passed
    assert "could not follow" in at_tool.message and "/proc/99" in at_tool.message
    assert "rename" in at_tool.message
    assert all(not v.passed for v in verdicts if v.kind == "no_crash")


def test_a_shared_writable_memory_map_of_the_checkpoint_makes_it_unknown():
    c = "/work/checkpoint.json"
    end, _ = end_state([
        openat(5, c, "O_RDWR|O_CREAT", 3), line(5, "ftruncate", f"{fd(3, c)}, 4096", 0),
        line(5, "mmap", f"NULL, 4096, PROT_READ|PROT_WRITE, MAP_SHARED, {fd(3, c)}, 0",
             "0x7f00"),
    ])
    assert end.kind == "unknown" and UNFOLLOWED in end.unfollowed and "mmap" in end.unfollowed
    private, _ = end_state([
        openat(5, c, "O_RDWR|O_CREAT", 3), write(5, 3, c, SAVE),
        line(5, "mmap", f"NULL, 4096, PROT_READ, MAP_PRIVATE, {fd(3, c)}, 0", "0x7f00"),
    ])
    assert private.kind == "file" and private.data == SAVE, "a private read-only map is harmless"


def test_a_splice_into_the_checkpoint_is_unknown_not_ignored():
    c = "/work/checkpoint.json"
    end, _ = end_state([
        openat(5, c, "O_WRONLY|O_CREAT|O_TRUNC", 3),
        line(5, "splice", f"4<pipe:[5]>, NULL, {fd(3, c)}, NULL, 12, 0", 12),
    ])
    assert end.kind == "unknown" and "splice" in end.unfollowed


def test_the_unfollowed_state_is_judged_a_failure_that_names_the_operation():
    c = "/work/checkpoint.json"
    verdicts = _judged([
        openat(5, c, "O_RDWR|O_CREAT", 3),
        line(5, "mmap", f"NULL, 4096, PROT_READ|PROT_WRITE, MAP_SHARED, {fd(3, c)}, 0", "0x7f"),
    ])
    at_tool = next(v for v in verdicts if v.point == "killed_during_tool_1")
    assert not at_tool.passed and at_tool.evidence["problem"] == "unobserved_write"
    assert "mmap" in at_tool.message and "Traceback" not in at_tool.message


# -- torn writes at several cut points, each distinct state once ------------------------------

def test_cut_points_are_the_first_byte_each_sector_and_page_the_middle_and_the_last():
    assert cut_points(0, 5000, 5000) == [1, 512, 1024, 1536, 2048, 2500, 2560, 3072, 3584,
                                         4096, 4608, 4999]
    assert cut_points(500, 30, 530) == [1, 12, 15, 29], "sectors counted in the file"
    assert cut_points(0, 7, 7) == [1, 3, 6]
    assert cut_points(0, 1, 1) == []
    huge = cut_points(0, 8 << 20, 8 << 20)
    assert 1 in huge and (4 << 20) in huge and (8 << 20) - 1 in huge and len(huge) <= 4


def test_an_in_place_write_is_cut_at_every_cut_point_and_each_state_is_distinct():
    c = "/work/checkpoint.json"
    data = json.dumps({"x": "y" * 1500}).encode()
    _, moments = end_state([openat(5, c, "O_WRONLY|O_CREAT|O_TRUNC", 3), write(5, 3, c, data)])
    torn = [m.data for m in moments if m.how == "during"]
    assert torn == [data[:k] for k in cut_points(0, len(data), len(data))]
    assert len(set(torn)) == len(torn)


def test_a_padded_fixed_size_slot_rewritten_in_place_tears_into_an_invalid_state():
    c = "/work/checkpoint.json"
    slot = 2048
    old = OLD.ljust(slot)
    new = json.dumps({"turns": 1, "messages": ["b" * 700]}).encode().ljust(slot)
    _, moments = end_state([
        openat(5, c, "O_RDWR|O_CREAT", 3), f'5  pwrite64({fd(3, c)}, "{hx(old)}", {slot}, 0) = '
        f'{slot}', marker(5, 1, "tool"),
        f'5  pwrite64({fd(3, c)}, "{hx(new)}", {slot}, 0) = {slot}',
    ])
    torn = [m.data for m in moments if m.how == "during" and m.position == 3]
    assert new[: slot // 2] + old[slot // 2:] in torn  # the middle alone: valid JSON

    def valid(data):
        try:
            json.loads(data)
            return True
        except ValueError:
            return False

    assert valid(new[: slot // 2] + old[slot // 2:])
    assert any(not valid(d) for d in torn), "some cut leaves the slot unreadable"


def test_a_save_written_seven_bytes_at_a_time_stays_cheap():
    t, c = "/work/t", "/work/checkpoint.json"
    data = json.dumps({"x": "y" * 2900}).encode()
    chunks = [data[i:i + 7] for i in range(0, len(data), 7)]
    temp_save = [openat(5, t, "O_WRONLY|O_CREAT|O_TRUNC", 3),
                 *[write(5, 3, t, chunk) for chunk in chunks], rename(5, t, "checkpoint.json")]
    _, moments = end_state(temp_save * 3)
    assert len(moments) <= 2 * 3 * (len(chunks) + 2), "a moment before and one inside each write"
    in_place = [openat(5, c, "O_WRONLY|O_CREAT|O_TRUNC", 3),
                *[write(5, 3, c, chunk) for chunk in chunks]]
    _, moments = end_state(in_place)
    assert len(moments) <= 5 * (len(chunks) + 2)


# -- the parser: what strace prints for these calls ------------------------------------------------

def test_a_deleted_file_s_descriptor_is_read_whole_with_its_mark():
    ops = parse_trace("\n".join(_tmpfile_save(
        f'5  linkat({fd(3, "/work/#2", deleted=True)}, "", AT_FDCWD<{hx("/work")}>, '
        f'"{hx("ck.new")}", AT_EMPTY_PATH) = 0')), socket_inode=77)
    opened, written, linked = ops[0], ops[1], ops[2]
    assert opened.ret == 3 and opened.ret_path == b"/work/#2" and opened.ret_deleted
    assert written.args[0] == {"fd": 3, "path": b"/work/#2", "token": "3", "deleted": True}
    assert written.args[1] == SAVE
    assert linked.args[1] == b"" and linked.args[4] == "AT_EMPTY_PATH"


def test_a_clone_gives_the_child_s_pid_in_both_numberings():
    ops = parse_trace(
        "5  clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD, child_tidptr=0x7f) = 3 "
        "/* 19009 in strace's PID NS */", socket_inode=77)
    assert (ops[0].call, ops[0].ret, ops[0].args) == ("clone", 19009,
                                                      ["CLONE_CHILD_CLEARTID|SIGCHLD", 3])


def _three_threads(read_at_tool_2):
    """Three threads each send a tool call (markers 2, 3, 4); the first, answered, saves
    (temp and rename) before the grader reads the disk for the second thread's call."""
    from graders.judge.matrix import build_matrix
    from graders.judge.recording import Reading

    scenario = load_scenario("release-audit")
    trace = "\n".join([
        marker(5, 1, "model"),
        marker(5, 2, "tool"), marker(6, 3, "tool"), marker(7, 4, "tool"),
        openat(5, "/work/t", "O_WRONLY|O_CREAT|O_TRUNC", 3), write(5, 3, "/work/t", SAVE),
        rename(5, "/work/t", "/work/checkpoint.json"),
        marker(5, 5, "model")])
    reading = (Reading("file", data=SAVE, size=len(SAVE)) if read_at_tool_2 == "saved"
            else Reading("file", data=b"{}", size=2))
    rec = Recording("release-audit", "loop", True, ended="raised", trace=trace,
                    socket_inode=77, calls=[
                        Call(1, "model", 1, stop_reason="tool_use"),
                        Call(2, "tool", 1, name="a", input={}, result="x",
                             reading=Reading("absent")),
                        Call(3, "tool", 2, name="b", input={}, result="y", reading=reading),
                        Call(4, "tool", 3, name="c", input={}, result="z",
                             reading=Reading("absent")),
                        Call(5, "model", 2, stop_reason="end_turn")])
    return build_matrix(rec, scenario).discrepancies


def test_a_call_of_one_thread_may_see_what_another_thread_saved_while_it_was_in_flight():
    """Concurrent tools: the grader reads the disk for thread 6's call after thread 5's call
    was answered and saved; the calls of other threads bound nothing, thread 6's own next call
    would. What no moment of the window shows is still not followed."""
    assert _three_threads("saved") == []
    [said] = _three_threads("other")
    assert "when tool call 2 came in" in said and "2 bytes" in said, said
