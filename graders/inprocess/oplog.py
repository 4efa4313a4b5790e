"""The in-process recorder's log: file operations as :class:`graders.judge.trace.Op` objects,
shaped exactly as :func:`graders.judge.trace.parse_trace` makes them from strace's line for the
same system call (x86-64 Linux, glibc, CPython 3.11), so that the judge replays either alike.

The shapes (the layout ``graders/judge/trace.py`` documents): strings and paths are ``bytes`` as
the program passed them (a path inside the run's scratch folders shown as the sandbox would show
it: ``/work/...``, ``/tmp/...``); a descriptor is ``{"fd": n, "path": b"/work/x", "token": "n"}``
(plus ``"deleted": True`` for a file that has no name any more); the working directory is
``{"fd": None, "path": b"/work", "token": "AT_FDCWD"}``; flag sets are strace's names joined by
``|`` (``"O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC"``), a mode is strace's octal token (``"0666"``,
and ``0`` for none), and a number is an ``int``. ``Op.pid`` is the thread that made the call (as
strace numbers each thread); a thread the run starts is a ``clone3`` by its parent with the flags
Python's threads are made with (they share the descriptors and the working directory), its
``ret`` the new thread.
"""

from __future__ import annotations

import os
import threading

from graders.judge.trace import Op

__all__ = ["OpLog", "flag_names", "mode_token", "token", "THREAD_FLAGS", "thread_id"]

#: strace's order for open flags after the access mode (its ``open_mode_flags`` table).
_OPEN_FLAGS = ("O_CREAT", "O_EXCL", "O_NOCTTY", "O_TRUNC", "O_APPEND", "O_NONBLOCK", "O_SYNC",
               "O_DSYNC", "O_DIRECT", "O_LARGEFILE", "O_NOFOLLOW", "O_NOATIME", "O_CLOEXEC",
               "O_PATH", "O_TMPFILE", "O_DIRECTORY", "O_ASYNC")
#: Names strace prints differently from Python's constant.
_PRINTED = {"O_ASYNC": "FASYNC"}
#: Python adds O_CLOEXEC to every descriptor it opens (PEP 446), on every platform.
_ALWAYS = ("O_CLOEXEC",)
#: How CPython starts a thread on Linux, as strace shows clone3's flags.
THREAD_FLAGS = ("CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|"
                "CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID")
#: The recorder's own bit for O_DIRECTORY where the platform has none (Windows).
EMULATED_DIRECTORY = 1 << 28


def flag_names(flags: int) -> str:
    """``flags`` (this platform's ``os.O_*`` bits) as strace prints them on Linux."""
    access = flags & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
    names = ["O_RDWR" if access == os.O_RDWR else "O_WRONLY" if access == os.O_WRONLY
             else "O_RDONLY"]
    left = flags
    for name in _OPEN_FLAGS:
        bits = getattr(os, name, 0)
        if name == "O_DIRECTORY" and not bits:
            bits = EMULATED_DIRECTORY
        if name in _ALWAYS:
            names.append(name)
            left &= ~bits
        elif bits and left & bits == bits and bits & ~access:
            names.append(_PRINTED.get(name, name))
            left &= ~bits  # O_SYNC holds O_DSYNC's bit, O_TMPFILE O_DIRECTORY's: one name each
    if "O_ASYNC" in names:  # strace prints FASYNC last
        names.append(names.pop(names.index("O_ASYNC")))
    return "|".join(names)


def creates(flags: int) -> bool:
    """Whether an open with ``flags`` takes a mode (strace prints it then)."""
    tmpfile = getattr(os, "O_TMPFILE", 0)
    return bool(flags & getattr(os, "O_CREAT", 0)) or bool(tmpfile and flags & tmpfile == tmpfile)


def mode_token(mode: int):
    """A mode as strace prints it (``%#03o``), then as the trace parser reads that token."""
    return token("0" + format(mode, "o").zfill(2))


def token(text: str):
    """A bare strace token as :func:`graders.judge.trace.parse_trace` reads it: an ``int`` when
    Python reads it as one (``int(text, 0)``), else the text."""
    try:
        return int(text, 0)
    except ValueError:
        return text


def thread_id() -> int:
    """The calling thread, as the log numbers threads."""
    try:
        return threading.get_ident()
    except Exception:  # noqa: BLE001 - a runtime without threads
        return 0


class OpLog:
    """One run's operations, in the order they completed, and the lock that keeps that order.

    A recorded call holds :attr:`lock` from before the real call until its operation is logged,
    so the log's order is the order the calls took effect, whichever thread made them.
    """

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.lock = threading.RLock()

    def add(self, call: str, ret: int | None, args: list, *, error: str | None = None,
            ret_path: bytes | None = None, ret_deleted: bool = False,
            pid: int | None = None) -> Op:
        """Log one system call of the calling thread (or ``pid``); ``error`` is its errno name
        when it failed (``ret`` is then -1)."""
        op = Op(len(self.ops), thread_id() if pid is None else pid, call, ret, error, args,
                ret_path)
        if ret_deleted:
            op.ret_deleted = True
        self.ops.append(op)
        return op

    def marker(self, seq: int, op_name: str, fields: dict) -> Op:
        """Log a grader frame: a call or save marker numbered ``seq`` by the recorder."""
        frame = {"seq": seq, "op": op_name}
        if "n" in fields and op_name in ("save_start", "save_end"):
            frame["n"] = fields["n"]
        op = Op(len(self.ops), thread_id(), "marker", 0, None, [], None, frame)
        self.ops.append(op)
        return op

    def started(self, parent: int, child: int) -> None:
        """Log thread ``child`` started by thread ``parent`` (sharing its descriptors)."""
        with self.lock:
            self.add("clone3", child, [THREAD_FLAGS, None], pid=parent)
