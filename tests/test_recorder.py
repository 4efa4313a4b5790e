"""The in-process recorder: one test per kind of operation it records.

Each test runs a small ``run_agent`` that does one kind of file operation, through the recorder
(:func:`graders.inprocess.record.record_in_process`), and asserts the operation it logged: the
system call strace shows for it, with ``parse_trace``'s layout. Where the sandbox runs here, the
same code also runs in it, under strace, and the two logs of that kind of call must be equal
(the sandbox's ``/work`` and ``/tmp`` are the recorder's scratch folders).
"""

from __future__ import annotations

import os
import sys
import textwrap
import threading

import pytest

from fake_llm import load_scenario
from graders.inprocess.record import record_in_process
from graders.judge.matrix import judge
from graders.judge.trace import parse_trace
from graders.sandbox import record, sandbox_problem

SCENARIO = load_scenario("support-tickets")
LINUX = sys.platform.startswith("linux")
needs_linux = pytest.mark.skipif(not LINUX, reason="a Linux-only call")


def program(body: str, head: str = "") -> str:
    """A submission whose ``run_agent`` runs ``body`` (in /work, with os, io, ... imported)."""
    return (f"import fcntl, io, json, os, pathlib, shutil, tempfile, threading\n{head}\n"
            "def save_checkpoint(state):\n    pass\n\n"
            "def run_agent(task, tools, call_model, execute_tool):\n"
            + textwrap.indent(textwrap.dedent(body).strip() + "\nreturn None\n", "    "))


#: Descriptor numbers a test chooses start here, far above any this process has open.
CHOSEN = 500

#: The calls that return a new descriptor.
_NEW_FD = ("openat", "fcntl", "dup", "dup2", "dup3")


def logged(ops, *calls: str) -> list[tuple]:
    """``(call, args, ret, ret_path)`` of the successful ops of kinds ``calls`` (all if none),
    after the submission was loaded, without the questions ``lseek(fd, 0, SEEK_CUR)``.

    Descriptors are numbered 3, 4, ... in the order their numbers first appear: this process
    has descriptors of its own open (dozens, in a whole suite's run), the sandbox's has only
    0-2, and the judge only needs each one told apart. Numbers from ``CHOSEN`` up are ones a
    test asked for (``dup2(fd, 520)``) and stay as they are.
    """
    seen = False
    numbers: dict[int, int] = {}

    def number(n: int) -> int:
        return n if n >= CHOSEN else numbers.setdefault(n, 3 + len(numbers))

    def renumbered(value):
        if isinstance(value, dict) and "fd" in value and isinstance(value["fd"], int):
            return {**value, "fd": number(value["fd"]), "token": str(number(value["fd"]))}
        return value

    out = []
    for op in ops:
        if op.call == "marker":
            seen = seen or op.frame.get("op") == "loaded"
            continue
        if not seen or op.error is not None:
            continue
        args = [renumbered(a) for a in op.args]
        ret = number(op.ret) if op.call in _NEW_FD and isinstance(op.ret, int) else op.ret
        if (calls and op.call not in calls) or (
                op.call == "lseek" and op.args[1:] == [0, "SEEK_CUR"]):
            continue
        out.append((op.call, args, ret, op.ret_path))
    return out


def recorded(body: str, *calls: str, head: str = "") -> list[tuple]:
    rec = record_in_process(program(body, head), SCENARIO)
    assert rec.ended == "finished", (rec.ended, rec.error, rec.detail)
    return logged(rec.ops, *calls)


def agrees_with_strace(body: str, *calls: str, head: str = "") -> list[tuple]:
    """The recorder's log of ``calls`` (asserted equal to strace's where the sandbox runs)."""
    mine = recorded(body, *calls, head=head)
    if sandbox_problem() is None:
        rec = record(program(body, head), SCENARIO)
        assert rec.ended == "finished", (rec.ended, rec.error, rec.stderr_tail)
        assert mine == logged(parse_trace(rec.trace, rec.socket_inode), *calls)
    return mine


def fd(n: int, path: str, **more) -> dict:
    return {"fd": n, "path": path.encode(), "token": str(n), **more}


CWD = {"fd": None, "path": b"/work", "token": "AT_FDCWD"}


# -- opens and writes ----------------------------------------------------------------------------


@pytest.mark.sandbox
def test_open_for_writing_is_openat_and_its_bytes_one_write_when_the_buffer_is_flushed():
    ops = agrees_with_strace("""
        with open("a.txt", "w") as f:
            f.write("hello ")
            f.write("world")
    """, "openat", "write")
    assert ops == [
        ("openat", [CWD, b"a.txt", "O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC", "0666"], 3,
         b"/work/a.txt"),
        ("write", [fd(3, "/work/a.txt"), b"hello world", 11], 11, None)]


def test_bytes_still_in_pythons_buffer_are_not_written_before_a_call():
    rec = record_in_process(program("""
        f = open("checkpoint.json", "w")
        f.write('{"turns": 1}')
        call_model(tools=tools, messages=[{"role": "user", "content": task}])
        f.close()
    """), SCENARIO)
    calls = [(op.call, (op.frame or {}).get("op")) for op in rec.ops]
    model = calls.index(("marker", "model"))
    assert ("write", None) in calls[model:] and ("write", None) not in calls[:model]
    reading = rec.calls[0].reading  # the file was opened, its bytes not written yet
    assert reading.kind == "file" and not reading.data and reading.size in (None, 0)


@pytest.mark.sandbox
def test_append_mode_seeks_to_the_end_and_read_only_opens_are_logged_too():
    ops = agrees_with_strace("""
        with open("a.txt", "w") as f:
            f.write("one")
        with open("a.txt", "a") as f:
            f.write("two")
        with open("a.txt") as f:
            f.read()
    """, "openat", "lseek", "write")
    assert ops[2:] == [
        ("openat", [CWD, b"a.txt", "O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC", "0666"], 3,
         b"/work/a.txt"),
        ("lseek", [fd(3, "/work/a.txt"), 0, "SEEK_END"], 3, None),
        ("write", [fd(3, "/work/a.txt"), b"two", 3], 3, None),
        ("openat", [CWD, b"a.txt", "O_RDONLY|O_CLOEXEC"], 3, b"/work/a.txt"),
    ]


@pytest.mark.sandbox
def test_os_open_and_its_writes_pwrite_and_writev():
    ops = agrees_with_strace("""
        fd = os.open("c.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_DSYNC, 0o600)
        os.write(fd, b"abc")
        os.pwrite(fd, b"Z", 1)
        os.writev(fd, [b"12", b"345"])
        os.close(fd)
    """, "openat", "write", "pwrite64", "writev")
    c = fd(3, "/work/c.txt")
    assert ops == [
        ("openat", [CWD, b"c.txt", "O_WRONLY|O_CREAT|O_EXCL|O_DSYNC|O_CLOEXEC", "0600"], 3,
         b"/work/c.txt"),
        ("write", [c, b"abc", 3], 3, None),
        ("pwrite64", [c, b"Z", 1, 1], 1, None),
        ("writev", [c, {"list": [{"struct": {"iov_base": b"12", "iov_len": "2"}},
                                 {"struct": {"iov_base": b"345", "iov_len": "3"}}]}, 2], 5, None),
    ]


@pytest.mark.sandbox
def test_seek_and_truncate_through_a_file_object_and_os():
    ops = agrees_with_strace("""
        with open("a.txt", "w") as f:
            f.write("hello")
        with open("a.txt", "r+") as f:
            f.seek(2)
            f.write("XY")
            f.truncate()
        fd = os.open("a.txt", os.O_RDWR)
        os.lseek(fd, 1, os.SEEK_SET)
        os.ftruncate(fd, 3)
        os.close(fd)
        os.truncate("a.txt", 1)
    """, "lseek", "ftruncate", "truncate")
    a = fd(3, "/work/a.txt")
    assert ops == [("lseek", [a, 2, "SEEK_SET"], 2, None), ("ftruncate", [a, 4], 0, None),
                   ("lseek", [a, 1, "SEEK_SET"], 1, None), ("ftruncate", [a, 3], 0, None),
                   ("truncate", [b"a.txt", 1], 0, None)]


@pytest.mark.sandbox
def test_fsync_fdatasync_of_a_file_and_of_the_folder_and_sync():
    ops = agrees_with_strace("""
        with open("b.bin", "wb") as f:
            f.write(b"x")
            f.flush()
            os.fsync(f)
            os.fdatasync(f.fileno())
        folder = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(folder)
        os.close(folder)
        os.sync()
    """, "fsync", "fdatasync", "sync", "openat")
    b = fd(3, "/work/b.bin")
    assert ops == [
        ("openat", [CWD, b"b.bin", "O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC", "0666"], 3,
         b"/work/b.bin"),
        ("fsync", [b], 0, None), ("fdatasync", [b], 0, None),
        ("openat", [CWD, b".", "O_RDONLY|O_CLOEXEC|O_DIRECTORY"], 3, b"/work"),
        ("fsync", [fd(3, "/work")], 0, None), ("sync", [], 0, None)]


# -- names -----------------------------------------------------------------------------------------


@pytest.mark.sandbox
def test_rename_replace_path_replace_and_renameat():
    ops = agrees_with_strace("""
        open("a", "w").close()
        os.rename("a", "b")
        os.replace("b", "c")
        pathlib.Path("c").replace("d")
        folder = os.open(".", os.O_RDONLY)
        os.rename("d", "e", src_dir_fd=folder, dst_dir_fd=folder)
        os.close(folder)
    """, "rename", "renameat")
    assert ops == [("rename", [b"a", b"b"], 0, None), ("rename", [b"b", b"c"], 0, None),
                   ("rename", [b"c", b"d"], 0, None),
                   ("renameat", [fd(3, "/work"), b"d", fd(3, "/work"), b"e"], 0, None)]


def test_a_rename_from_tmp_to_work_fails_with_exdev_and_shutil_move_copies():
    rec = record_in_process(program("""
        fd, tmp = tempfile.mkstemp()
        os.write(fd, b"{}")
        os.close(fd)
        try:
            os.replace(tmp, "checkpoint.json")
        except OSError as err:
            print(err.errno == __import__("errno").EXDEV)
        shutil.move(tmp, "checkpoint.json")
    """), SCENARIO)
    assert rec.ended == "finished" and rec.stdout_tail == "True\n"
    calls = [(op.call, op.error) for op in rec.ops if op.call != "marker"]
    assert calls.count(("rename", "EXDEV")) == 2  # os.replace, then shutil.move's own try
    assert ("sendfile", None) in calls and ("unlink", None) in calls
    failed = next(op for op in rec.ops if op.error == "EXDEV")
    assert failed.args[0].startswith(b"/tmp/tmp") and failed.args[1] == b"checkpoint.json"
    sendfile = next(op for op in rec.ops if op.call == "sendfile" and op.ret)
    assert sendfile.args[0]["path"] == b"/work/checkpoint.json"
    assert sendfile.args[1]["path"].startswith(b"/tmp/tmp")
    assert sendfile.args[2] == {"list": [2], "before": [0]}
    verdicts, _ = judge(rec, SCENARIO)
    assert verdicts[-1].passed is False  # no save at all: but the copy was followed


@pytest.mark.sandbox
def test_links_removals_folders_symlinks_and_fifos():
    ops = agrees_with_strace("""
        open("e", "w").close()
        os.link("e", "f")
        os.unlink("f")
        os.remove("e")
        os.mkdir("sub")
        os.rmdir("sub")
        os.symlink("target", "s")
        os.mkfifo("fifo")
        folder = os.open(".", os.O_RDONLY)
        open("g", "w").close()
        os.unlink("g", dir_fd=folder)
    """, "link", "linkat", "unlink", "unlinkat", "mkdir", "rmdir", "symlink", "mknodat")
    assert ops == [("link", [b"e", b"f"], 0, None), ("unlink", [b"f"], 0, None),
                   ("unlink", [b"e"], 0, None), ("mkdir", [b"sub", "0777"], 0, None),
                   ("rmdir", [b"sub"], 0, None), ("symlink", [b"target", b"s"], 0, None),
                   ("mknodat", [CWD, b"fifo", "S_IFIFO|0666"], 0, None),
                   ("unlinkat", [fd(3, "/work"), b"g", 0], 0, None)]


@pytest.mark.sandbox
def test_chdir_moves_the_working_directory_the_judge_sees():
    ops = agrees_with_strace("""
        os.mkdir("sub")
        os.chdir("sub")
        open("x", "w").close()
        os.chdir("..")
    """, "chdir", "openat")
    assert ops == [("chdir", [b"sub"], 0, None),
                   ("openat", [{**CWD, "path": b"/work/sub"}, b"x",
                               "O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC", "0666"], 3,
                    b"/work/sub/x"),
                   ("chdir", [b".."], 0, None)]


def test_mkstemp_fdopen_and_namedtemporaryfile_in_both_folders():
    ops = recorded("""
        fd, path = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath("x")), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write("a")
        fd, elsewhere = tempfile.mkstemp()
        os.close(fd)
        with tempfile.NamedTemporaryFile("w", dir=".") as f:
            f.write("b")
    """, "openat", "write", "unlink")
    [(_, first, _, where), write_a, (_, second, _, there), (_, named, _, _), write_b,
     (_, [gone], _, _)] = ops
    flags = "O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC"
    assert first[1].startswith(b"/work/tmp") and first[2:] == [flags, "0600"]
    assert where == first[1] and write_a[1][1] == b"a"
    assert second[1].startswith(b"/tmp/tmp") and there == second[1]
    assert named[1].startswith(b"/work/tmp") and write_b[1][1] == b"b"
    assert gone == named[1]  # NamedTemporaryFile removes its file when it closes


def test_a_literal_tmp_path_lands_in_the_runs_own_tmp():
    ops = recorded("""
        with open("/tmp/checkpoint-lab-literal.json", "w") as f:
            f.write("t")
        assert os.path.exists("/tmp/checkpoint-lab-literal.json")
    """, "openat")
    assert ops[0][3] == b"/tmp/checkpoint-lab-literal.json"
    assert not os.path.exists("/tmp/checkpoint-lab-literal.json")  # the machine's is untouched


@pytest.mark.sandbox
def test_shutil_copyfile_is_sendfile_on_every_platform():
    ops = agrees_with_strace("""
        with open("src", "w") as f:
            f.write("copied")
        shutil.copyfile("src", "dst")
    """, "sendfile")
    assert ops == [("sendfile", [fd(4, "/work/dst"), fd(3, "/work/src"),
                                 {"list": [6], "before": [0]}, 8388608], 6, None),
                   ("sendfile", [fd(4, "/work/dst"), fd(3, "/work/src"), {"list": [6]},
                                 8388608], 0, None)]


# -- descriptors ---------------------------------------------------------------------------------


def test_dup_dup2_and_fcntl_are_logged_as_strace_shows_them():
    ops = recorded("""
        fd = os.open("c.txt", os.O_WRONLY | os.O_CREAT, 0o644)
        a = os.dup(fd)
        b = os.dup2(fd, 520)
        c = os.dup2(fd, 521, inheritable=False)
        d = fcntl.fcntl(fd, fcntl.F_DUPFD, 530)
        with os.fdopen(a, "w") as f:
            f.write("q")
        for x in (fd, b, c, d):
            os.close(x)
    """, "fcntl", "dup2", "dup3", "write")
    c = fd(3, "/work/c.txt")
    assert ops == [("fcntl", [c, "F_DUPFD_CLOEXEC", 0], 4, b"/work/c.txt"),
                   ("dup2", [c, 520], 520, b"/work/c.txt"),
                   ("dup3", [c, 521, "O_CLOEXEC"], 521, b"/work/c.txt"),
                   ("fcntl", [c, "F_DUPFD", 530], 530, b"/work/c.txt"),
                   ("write", [fd(4, "/work/c.txt"), b"q", 1], 1, None)]


def test_close_is_logged_and_a_file_renamed_away_or_over_is_shown_deleted():
    ops = recorded("""
        keep = os.open("old", os.O_WRONLY | os.O_CREAT, 0o644)
        moved = os.open("tmp", os.O_WRONLY | os.O_CREAT, 0o644)
        os.replace("tmp", "old")
        os.fsync(moved)
        os.fsync(keep)
        os.close(keep)
    """, "fsync", "close")
    assert ops == [("fsync", [fd(4, "/work/old")], 0, None),
                   ("fsync", [fd(3, "/work/old", deleted=True)], 0, None),
                   ("close", [fd(3, "/work/old", deleted=True)], 0, None)]


@needs_linux
def test_o_tmpfile_is_an_unnamed_file_until_linked():
    rec = record_in_process(program("""
        fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
        os.write(fd, b"{}")
        folder = os.open(".", os.O_RDONLY)
        os.link(f"/proc/self/fd/{fd}", "checkpoint.json", src_dir_fd=folder)
    """), SCENARIO)
    assert rec.ended == "finished", rec.error
    [opened] = [op for op in rec.ops if op.call == "openat" and op.args[1] == b"."][:1]
    assert opened.args[2] == "O_WRONLY|O_CLOEXEC|O_TMPFILE" and opened.ret_deleted
    assert opened.ret_path.startswith(b"/work/#")
    write = next(op for op in rec.ops if op.call == "write")
    assert write.args[0]["deleted"] is True and write.args[0]["path"] == opened.ret_path
    link = next(op for op in rec.ops if op.call == "linkat")
    assert link.args[1] == f"/proc/self/fd/{opened.ret}".encode()
    assert link.args[2:] == [CWD, b"checkpoint.json", "AT_SYMLINK_FOLLOW"]


# -- calls, threads, the end -------------------------------------------------------------------


def test_calls_and_saves_are_markers_numbered_by_the_recorder():
    rec = record_in_process(program("""
        save_checkpoint({})
        response = call_model(tools=tools, messages=[{"role": "user", "content": task}])
        block = next(b for b in response["content"] if b["type"] == "tool_use")
        execute_tool(block["name"], block["input"])
    """), SCENARIO)
    frames = [op.frame for op in rec.ops if op.call == "marker"]
    assert frames == [{"seq": 1, "op": "loaded"}, {"seq": 2, "op": "save_start", "n": 1},
                      {"seq": 3, "op": "save_end", "n": 1}, {"seq": 4, "op": "model"},
                      {"seq": 5, "op": "tool"}, {"seq": 6, "op": "finished"}]
    assert [(c.seq, c.op, c.index) for c in rec.calls] == [(4, "model", 1), (5, "tool", 1)]
    assert rec.markers == [{"seq": 2, "op": "save_start", "n": 1},
                           {"seq": 3, "op": "save_end", "n": 1}]


def test_the_runs_threads_are_recorded_each_started_by_its_parent_and_others_are_not():
    outside = []
    stop = threading.Event()

    def elsewhere():
        while not stop.is_set():
            with open(os.devnull, "w") as f:
                outside.append(f.write("x"))

    other = threading.Thread(target=elsewhere)
    other.start()
    try:
        rec = record_in_process(program("""
            def save(i):
                with open(f"t{i}", "w") as f:
                    f.write(str(i))
            workers = [threading.Thread(target=save, args=(i,)) for i in range(3)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        """), SCENARIO)
    finally:
        stop.set()
        other.join()
    opens = [op for op in rec.ops if op.call == "openat"]
    assert sorted(op.ret_path for op in opens) == [b"/work/t0", b"/work/t1", b"/work/t2"]
    main = next(op.pid for op in rec.ops if op.call == "marker")
    starts = [op for op in rec.ops if op.call == "clone3"]
    assert {op.pid for op in starts} == {main} and len(starts) == 3
    assert all("CLONE_FILES" in op.args[0] and "CLONE_THREAD" in op.args[0] for op in starts)
    assert {op.pid for op in opens} == {op.ret for op in starts} and main not in {
        op.pid for op in opens}
    assert all(rec.ops.index(start) < rec.ops.index(opened) for start, opened in zip(
        sorted(starts, key=lambda o: o.ret), sorted(opens, key=lambda o: o.pid), strict=True))
    assert outside  # the other thread's writes went on, unrecorded


def test_a_hang_is_stopped_and_reported_as_the_sandbox_reports_it():
    rec = record_in_process(program("""
        while True:
            pass
    """), SCENARIO, timeout=0.5)
    assert rec.ended == "hung" and "still running after 0.5 s" in rec.detail


def test_os_exit_ends_the_run_not_the_process():
    rec = record_in_process(program("os._exit(3)"), SCENARIO)
    assert rec.ended == "died" and rec.exit_code == 3 and "exit status 3" in rec.detail


def test_a_load_error_and_missing_names_are_reported_as_the_sandbox_reports_them():
    assert record_in_process("raise ValueError('boom')", SCENARIO).load["error"]["type"] == \
        "ValueError"
    assert record_in_process("x = 1", SCENARIO).load["missing"] == ["save_checkpoint",
                                                                    "run_agent"]
    described = record_in_process("MISSING_FIELDS = {'turns'}", None, mode="missing_fields")
    assert described.described["items"] == [{"str": "turns"}]


def test_the_recorder_leaves_the_process_as_it_found_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = (os.open, os.write, os.replace, open, sys.stdout, threading.Thread.start,
              os.getcwd())
    rec = record_in_process(program("print('hi')\nopen('checkpoint.json', 'w').close()"),
                            SCENARIO)
    assert rec.stdout_tail == "hi\n"
    assert (os.open, os.write, os.replace, open, sys.stdout, threading.Thread.start,
            os.getcwd()) == before
    assert list(tmp_path.iterdir()) == []


@pytest.mark.sandbox
@needs_linux
def test_sendfile_copy_file_range_and_fallocate_called_directly():
    ops = agrees_with_strace("""
        with open("a", "w") as f:
            f.write("0123456789")
        out = os.open("b", os.O_WRONLY | os.O_CREAT, 0o644)
        src = os.open("a", os.O_RDONLY)
        os.sendfile(out, src, None, 4)
        os.copy_file_range(src, out, 3, 0, 4)
        os.posix_fallocate(out, 0, 16)
        os.close(src)
        os.close(out)
    """, "sendfile", "copy_file_range", "fallocate")
    b, a = fd(3, "/work/b"), fd(4, "/work/a")
    assert ops == [("sendfile", [b, a, "NULL", 4], 4, None),
                   ("copy_file_range", [a, {"list": [0]}, b, {"list": [4]}, 3, 0], 3, None),
                   ("fallocate", [b, 0, 0, 16], 0, None)]


def test_a_restart_puts_the_crash_states_files_back_first_recorded():
    import base64

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    seed = [{"path": "/work/checkpoint.json", "kind": "file", "data": b64(b'{"turns": 2}')},
            {"path": "/work/sub", "kind": "dir"},
            {"path": "/tmp/left.tmp", "kind": "file", "data": b64(b"half")},
            {"path": "/work/../outside", "kind": "file", "data": b64(b"never")}]
    rec = record_in_process(program("""
        with open("checkpoint.json") as f:
            print(f.read(), os.path.isdir("sub"), open("/tmp/left.tmp").read())
    """), SCENARIO, seed=seed)
    assert rec.ended == "finished" and rec.stdout_tail == '{"turns": 2} True half\n'
    loaded = next(op.index for op in rec.ops if op.call == "marker")
    before = [(op.call, op.ret_path or op.args[0]) for op in rec.ops[:loaded]
              if op.call in ("openat", "mkdir")]
    assert before == [("openat", b"/work/checkpoint.json"), ("mkdir", b"/work/sub"),
                      ("openat", b"/tmp/left.tmp")]


def test_a_full_disk_cuts_the_crossing_write_short_and_fails_the_next():
    rec = record_in_process(program("""
        with open("checkpoint.json", "w") as f:
            f.write("x" * 100)
        response = call_model(tools=tools, messages=[{"role": "user", "content": task}])
        block = next(b for b in response["content"] if b["type"] == "tool_use")
        execute_tool(block["name"], block["input"])
        fd = os.open("next.json", os.O_WRONLY | os.O_CREAT, 0o644)
        print(os.write(fd, b"y" * 80))
        try:
            os.write(fd, b"z")
        except OSError as err:
            print(err.errno == __import__("errno").EFBIG)
    """), SCENARIO, fill_at=("tool", 1))
    assert rec.stdout_tail == "50\nTrue\n", (rec.error, rec.stdout_tail)
    tool = next(c for c in rec.calls if c.op == "tool")
    assert rec.filled == {"seq": tool.seq, "limit": 50, "processes": 1, "error": ""}
    writes = [(op.ret, op.error) for op in rec.ops if op.call == "write"]
    assert writes[-2:] == [(50, None), (-1, "EFBIG")]


def test_code_that_calls_the_c_library_directly_is_not_checked_in_process(monkeypatch):
    from graders.checks import grade_submission

    monkeypatch.setenv("CHECKPOINT_LAB_OBSERVER", "inprocess")
    source = program("pass", head="import ctypes\nlibc = ctypes.CDLL(None)")
    results = grade_submission(source, "02_two_latent_failures", include_hidden=False,
                               allow_fallback=True)
    assert {r.status for r in results.values()} == {"not_checked"}
    assert all("calls the C library directly (ctypes)" in r.message and "strace" in r.message
               for r in results.values())
