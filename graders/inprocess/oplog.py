"""The in-process recorder's log: file operations as :class:`graders.judge.trace.Op` objects,
shaped exactly as :func:`graders.judge.trace.parse_trace` makes them from strace's line for the
same system call (x86-64 Linux, glibc, CPython 3.11), so that the judge replays either alike.

The shapes (the layout ``graders/judge/trace.py`` documents): strings and paths are ``bytes`` as
the program passed them (a path inside the run's scratch folders shown as the sandbox would show
it: ``/work/...``, ``/tmp/...``); a descriptor is ``{"fd": n, "path": b"/work/x", "token": "n"}``
(plus ``"deleted": True`` for a file that has no name any more); the working directory is
``{"fd": None, "path": b"/work", "token": "AT_FDCWD"}``; flag sets are strace's names joined by
``|`` (``"O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC"``), a mode is strace's octal token (``"0666"``,
and ``0`` for none), and a number is an ``int``. Every operation of one run has one ``pid``: the
run's threads share one descriptor table and one working directory, as threads do.
"""

from __future__ import annotations

import os
import threading

from graders.judge.trace import Op

__all__ = ["OpLog", "flag_names", "mode_token", "token"]

#: strace's order for open flags after the access mode (its ``open_mode_flags`` table).
_OPEN_FLAGS = ("O_CREAT", "O_EXCL", "O_NOCTTY", "O_TRUNC", "O_APPEND", "O_NONBLOCK", "O_SYNC",
               "O_DSYNC", "O_DIRECT", "O_LARGEFILE", "O_NOFOLLOW", "O_NOATIME", "O_CLOEXEC",
               "O_PATH", "O_TMPFILE", "O_DIRECTORY", "O_ASYNC")
#: Names strace prints differently from Python's constant.
_PRINTED = {"O_ASYNC": "FASYNC"}
#: Python adds O_CLOEXEC to every descriptor it opens (PEP 446), on every platform.
_ALWAYS = ("O_CLOEXEC",)
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


class OpLog:
    """One run's operations, in the order they completed, and the lock that keeps that order.

    A recorded call holds :attr:`lock` from before the real call until its operation is logged,
    so the log's order is the order the calls took effect, whichever thread made them.
    """

    def __init__(self, pid: int | None = None) -> None:
        self.ops: list[Op] = []
        self.pid = os.getpid() if pid is None else pid
        self.lock = threading.RLock()

    def add(self, call: str, ret: int | None, args: list, *, error: str | None = None,
            ret_path: bytes | None = None, ret_deleted: bool = False) -> Op:
        """Log one system call (``error``: its errno name when it failed, ``ret`` is then -1)."""
        op = Op(len(self.ops), self.pid, call, ret, error, args, ret_path)
        if ret_deleted:
            op.ret_deleted = True
        self.ops.append(op)
        return op

    def marker(self, seq: int, op_name: str, fields: dict) -> Op:
        """Log a grader frame: a call or save marker numbered ``seq`` by the recorder."""
        frame = {"seq": seq, "op": op_name}
        if "n" in fields and op_name in ("save_start", "save_end"):
            frame["n"] = fields["n"]
        op = Op(len(self.ops), self.pid, "marker", 0, None, [], None, frame)
        self.ops.append(op)
        return op
