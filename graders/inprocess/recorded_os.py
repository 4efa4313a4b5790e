"""The recorder's versions of ``os``'s descriptor calls: each makes the real call and logs it as
strace shows the system call CPython makes for it on Linux (``os.open`` is ``openat``,
``os.dup`` is ``fcntl(fd, F_DUPFD_CLOEXEC, 0)``, ``os.dup2`` is ``dup2`` or ``dup3``, a write is
logged with the bytes the OS was handed, at that moment).

:func:`descriptor_calls` returns them for one run, by name; a call from a thread that is not
the run's, or on a descriptor the run did not open in its scratch folders, goes straight to the
OS. Where the platform lacks what Linux has, the recorder stands in: ``sendfile`` between files
(macOS, Windows) copies with read and write, and a folder opened for its ``fsync`` (Windows
cannot open one) is a stand-in descriptor.
"""

from __future__ import annotations

import errno
import os
import sys

from graders.inprocess.oplog import EMULATED_DIRECTORY, creates, flag_names, mode_token
from graders.inprocess.run_state import RunState

__all__ = ["descriptor_calls", "ORIGINAL"]

_NAMES = ("open", "write", "pwrite", "writev", "pwritev", "sendfile", "copy_file_range",
          "fsync", "fdatasync", "ftruncate", "lseek", "posix_fallocate", "close", "closerange",
          "dup", "dup2", "read", "pread", "fstat", "memfd_create")
#: ``os``'s own functions, bound at import (before any run patches them).
ORIGINAL = {name: getattr(os, name) for name in _NAMES if hasattr(os, name)}
_WHENCE = {os.SEEK_SET: "SEEK_SET", os.SEEK_CUR: "SEEK_CUR", os.SEEK_END: "SEEK_END"}
_ACCESS = os.O_RDONLY | os.O_WRONLY | os.O_RDWR


def _fileno(fd):
    return fd if isinstance(fd, int) else fd.fileno()


def _iov(buffers: list[bytes]) -> dict:
    return {"list": [{"struct": {"iov_base": b, "iov_len": str(len(b))}} for b in buffers]}


class _Calls:
    """The recorded descriptor calls of one run (bound methods are what ``os`` gets)."""

    def __init__(self, run: RunState) -> None:
        self.run = run
        self.standins: set[int] = set()  # descriptors standing in for a folder (Windows)

    # -- opening -----------------------------------------------------------------------------

    def open(self, path, flags, mode=0o777, *, dir_fd=None):
        run = self.run
        real_open = ORIGINAL["open"]
        if not run.owns():
            return real_open(path, flags, mode, dir_fd=dir_fd)
        args = [run.dir_arg(dir_fd), run.scratch.shown_arg(path), flag_names(flags)]
        if creates(flags):
            args.append(mode_token(mode))
        real = run.scratch.real(path)
        base = None if dir_fd is None else run.scratch.real(run.fds.paths.get(dir_fd, ("",))[0])
        with run.log.lock:
            run.check()
            try:
                fd = real_open(real, flags & ~EMULATED_DIRECTORY, mode, dir_fd=dir_fd)
            except OSError as err:
                fd = self._folder_standin(real, flags, err)
            return self._opened(fd, real, base, flags, args)

    def _folder_standin(self, real, flags: int, err: OSError) -> int:
        """Where the OS refuses to open a folder for reading (Windows), a stand-in for it."""
        if (err.errno in (errno.EACCES, errno.EISDIR) and flags & _ACCESS == os.O_RDONLY
                and os.path.isdir(real)):
            fd = ORIGINAL["open"](os.devnull, os.O_RDONLY)
            self.standins.add(fd)
            return fd
        raise err

    def _opened(self, fd: int, real, base, flags: int, args: list) -> int:
        run = self.run
        tmpfile = getattr(os, "O_TMPFILE", 0)
        deleted = bool(tmpfile) and flags & tmpfile == tmpfile
        where = run.scratch.resolved(real, base)
        if where is not None and deleted:
            where = f"{where}/#{ORIGINAL['fstat'](fd).st_ino}"
        if where is None:
            run.fds.closed(fd)
            return fd
        run.fds.opened(fd, where, deleted)
        if flags & os.O_APPEND:
            run.appending.add(fd)
        else:
            run.appending.discard(fd)
        run.log.add("openat", fd, args, ret_path=os.fsencode(where), ret_deleted=deleted)
        return fd

    def memfd_create(self, name, flags=1):  # MFD_CLOEXEC, as os.memfd_create
        """A file in memory: recorded as strace shows it (``/memfd:NAME``, deleted), so that
        its writes, and a copy from it, are followed."""
        run = self.run
        fd = ORIGINAL["memfd_create"](name, flags)
        if run.owns():
            where = "/memfd:" + os.fsdecode(name)
            run.fds.opened(fd, where, True)
            run.appending.discard(fd)
            run.log.add("memfd_create", fd, [os.fsencode(name), "MFD_CLOEXEC"],
                        ret_path=os.fsencode(where), ret_deleted=True)
        return fd

    # -- writing -----------------------------------------------------------------------------

    def write(self, fd, data):
        if not self.run.records(fd):
            return ORIGINAL["write"](fd, data)
        run = self.run
        return run.do("write", [run.fds.arg(fd), bytes(data), len(data)],
                      lambda: ORIGINAL["write"](fd, memoryview(data)[:run.room(fd, len(data))]))

    def pwrite(self, fd, data, offset):
        if not self.run.records(fd):
            return ORIGINAL["pwrite"](fd, data, offset)
        run = self.run
        return run.do("pwrite64", [run.fds.arg(fd), bytes(data), len(data), offset],
                      lambda: ORIGINAL["pwrite"](
                          fd, memoryview(data)[:run.room(fd, len(data), offset)], offset))

    def writev(self, fd, buffers):
        if not self.run.records(fd):
            return ORIGINAL["writev"](fd, buffers)
        buffers = [bytes(b) for b in buffers]
        run = self.run

        def real():
            whole = b"".join(buffers)
            room = run.room(fd, len(whole))
            return ORIGINAL["writev"](fd, buffers if room == len(whole) else [whole[:room]])

        return run.do("writev", [run.fds.arg(fd), _iov(buffers), len(buffers)], real)

    def pwritev(self, fd, buffers, offset, flags=0):
        if not self.run.records(fd):
            return ORIGINAL["pwritev"](fd, buffers, offset, flags)
        buffers = [bytes(b) for b in buffers]
        call, args = ("pwritev2", [offset, flags]) if flags else ("pwritev", [offset])
        return self.run.do(call, [self.run.fds.arg(fd), _iov(buffers), len(buffers), *args],
                           ORIGINAL["pwritev"], fd, buffers, offset, flags)

    def sendfile(self, out_fd, in_fd, offset, count, *rest, **kwargs):
        real = ORIGINAL.get("sendfile") if sys.platform.startswith("linux") else None
        real = real or _copy_between
        run = self.run
        if not run.records(out_fd):
            return real(out_fd, in_fd, offset, count, *rest, **kwargs)
        with run.log.lock:
            run.check()
            source = run.fds.arg(in_fd) if in_fd in run.fds else {"fd": in_fd, "path": b"",
                                                                    "token": str(in_fd)}
            head = [run.fds.arg(out_fd), source]
            try:
                sent = real(out_fd, in_fd, offset, run.room(out_fd, count), *rest, **kwargs)
            except OSError as err:
                run.failed("sendfile", [*head, "NULL" if offset is None else
                                        {"list": [offset]}, count], err)
                raise
            where = "NULL" if offset is None else (
                {"list": [offset + sent], "before": [offset]} if sent else {"list": [offset]})
            run.log.add("sendfile", sent, [*head, where, count])
            return sent

    def copy_file_range(self, src, dst, count, offset_src=None, offset_dst=None):
        real = ORIGINAL["copy_file_range"]
        run = self.run
        if not (run.owns() and (src in run.fds or dst in run.fds)):
            return real(src, dst, count, offset_src, offset_dst)
        args = [run.fds.arg(src), "NULL" if offset_src is None else {"list": [offset_src]},
                run.fds.arg(dst), "NULL" if offset_dst is None else {"list": [offset_dst]},
                count, 0]
        return run.do("copy_file_range", args, real, src, dst, count, offset_src, offset_dst)

    def posix_fallocate(self, fd, offset, length):
        real = ORIGINAL["posix_fallocate"]
        if not self.run.records(fd):
            return real(fd, offset, length)
        return self.run.do("fallocate", [self.run.fds.arg(fd), 0, offset, length], real, fd,
                           offset, length)

    # -- sizes, offsets, syncs -----------------------------------------------------------------

    def ftruncate(self, fd, length):
        if not self.run.records(fd):
            return ORIGINAL["ftruncate"](fd, length)
        return self.run.do("ftruncate", [self.run.fds.arg(fd), length], ORIGINAL["ftruncate"],
                           fd, length)

    def lseek(self, fd, position, how):
        real = ORIGINAL["lseek"]
        if not self.run.records(fd) or (position == 0 and how == os.SEEK_CUR):
            return real(fd, position, how)  # a question about the offset changes nothing
        return self.run.do("lseek", [self.run.fds.arg(fd), position, _WHENCE.get(how, how)],
                           real, fd, position, how)

    def fsync(self, fd):
        return self._sync("fsync", fd)

    def fdatasync(self, fd):
        return self._sync("fdatasync", fd)

    def _sync(self, call: str, fd):
        fd = _fileno(fd)
        real = ORIGINAL[call]
        if not self.run.records(fd):
            return real(fd)
        if fd in self.standins:
            real = _nothing
        return self.run.do(call, [self.run.fds.arg(fd)], real, fd)

    # -- descriptors -------------------------------------------------------------------------

    def close(self, fd):
        run = self.run
        if run.records(fd):
            with run.log.lock:
                run.log.add("close", 0, [run.fds.arg(fd)])
                run.fds.closed(fd)
        self.standins.discard(fd)
        return ORIGINAL["close"](fd)

    def closerange(self, low, high):
        for fd in [fd for fd in self.run.fds.paths if low <= fd < high]:
            self.run.fds.closed(fd)
        return ORIGINAL["closerange"](low, high)

    def dup(self, fd):
        if not self.run.records(fd):
            return ORIGINAL["dup"](fd)
        return self.run.do("fcntl", [self.run.fds.arg(fd), "F_DUPFD_CLOEXEC", 0],
                           ORIGINAL["dup"], fd, after=lambda new: self._copied(fd, new))

    def dup2(self, fd, fd2, inheritable=True):
        run = self.run
        if not run.records(fd):
            run.fds.closed(fd2)
            return ORIGINAL["dup2"](fd, fd2, inheritable)
        target = run.fds.arg(fd2) if fd2 in run.fds else fd2
        call, args = (("dup2", [run.fds.arg(fd), target]) if inheritable
                      else ("dup3", [run.fds.arg(fd), target, "O_CLOEXEC"]))
        return run.do(call, args, ORIGINAL["dup2"], fd, fd2, inheritable,
                      after=lambda new: self._copied(fd, new))

    def fcntl_dup(self, real_fcntl, fd, cmd, arg, name: str):
        """``fcntl.fcntl(fd, F_DUPFD[_CLOEXEC], arg)`` on a recorded descriptor."""
        return self.run.do("fcntl", [self.run.fds.arg(fd), name, arg], real_fcntl, fd, cmd, arg,
                           after=lambda new: self._copied(fd, new))

    def _copied(self, fd: int, new: int) -> dict:
        self.run.fds.copied(fd, new)
        if fd in self.run.appending:
            self.run.appending.add(new)
        if fd in self.standins:
            self.standins.add(new)
        arg = self.run.fds.arg(new)
        return {"ret_path": arg["path"], "ret_deleted": bool(arg.get("deleted"))}


def _nothing(_fd) -> None:
    return None


def _copy_between(out_fd, in_fd, offset, count, *_rest, **_kwargs) -> int:
    """``sendfile`` from one file to another where the OS has none for files: read, write."""
    if offset is None:
        data = ORIGINAL["read"](in_fd, count)
    elif "pread" in ORIGINAL:
        data = ORIGINAL["pread"](in_fd, count, offset)
    else:  # Windows: no pread
        here = ORIGINAL["lseek"](in_fd, 0, os.SEEK_CUR)
        ORIGINAL["lseek"](in_fd, offset, os.SEEK_SET)
        try:
            data = ORIGINAL["read"](in_fd, count)
        finally:
            ORIGINAL["lseek"](in_fd, here, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[ORIGINAL["write"](out_fd, view):]
    return len(data)


def descriptor_calls(run: RunState) -> tuple[_Calls, dict]:
    """The recorded descriptor calls of ``run`` and ``os``'s names for them."""
    calls = _Calls(run)
    names = {name: getattr(calls, name) for name in _NAMES
             if name in ORIGINAL and hasattr(calls, name)}
    names["sendfile"] = calls.sendfile  # where the OS has none for files, the recorder copies
    return calls, names
