"""What every recorded call of one in-process run shares: the scratch folders, the log, the
descriptors, which threads are the run's, and whether its time is up.

Only the run's own threads are recorded (the one that runs the submission and every thread it
starts); any other thread of the process (a notebook kernel's, the grader's) goes straight to
the OS, untouched.
"""

from __future__ import annotations

import errno
import os
import threading
import time

from graders.inprocess.oplog import OpLog
from graders.inprocess.scratch import Descriptors, Scratch

__all__ = ["RunState", "Stop", "ProcessExit"]


class Stop(BaseException):
    """The run's time is up: raised in its threads to end it (never shown to the student)."""


class ProcessExit(BaseException):
    """The submission called ``os._exit``: its process would end here."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _ident() -> int:
    try:
        return threading.get_ident()
    except Exception:  # noqa: BLE001 - a runtime without threads
        return 0


class RunState:
    """One run's shared state (see the module docstring)."""

    def __init__(self, scratch: Scratch) -> None:
        self.scratch = scratch
        self.log = OpLog()
        self.fds = Descriptors()
        self.threads: set[int] = set()
        self.local = threading.local()
        self.deadline: float | None = None
        self.expired = False
        self.active = True
        #: the file-size limit once the disk is "full" (None: no limit), and the descriptors
        #: opened to append (their writes land at the end of the file)
        self.fsize_limit: int | None = None
        self.appending: set[int] = set()

    # -- whose call is it ----------------------------------------------------------------

    def owns(self) -> bool:
        """Whether the calling thread is the run's, doing the submission's work (not the
        grader's: the fake model, the readings of checkpoint.json)."""
        return (self.active and _ident() in self.threads
                and not getattr(self.local, "grader", False))

    def records(self, fd) -> bool:
        """Whether a call on descriptor ``fd`` is recorded (the run's, on a file it opened)."""
        return isinstance(fd, int) and fd in self.fds and self.owns()

    def check(self) -> None:
        """Raise :class:`Stop` in the run's threads once its time is up."""
        if self.expired or (self.deadline is not None and time.monotonic() > self.deadline):
            self.expired = True
            raise Stop

    def room(self, fd: int, count: int, offset: int | None = None) -> int:
        """How many of ``count`` bytes a write through ``fd`` (at ``offset``) may write under
        the file-size limit: a write that crosses it is cut short, and one that starts past it
        fails with EFBIG, as RLIMIT_FSIZE makes them (and as a full disk cuts a write short and
        fails the next)."""
        if self.fsize_limit is None or not count:
            return count
        if offset is None:
            offset = (os.fstat(fd).st_size if fd in self.appending
                      else os.lseek(fd, 0, os.SEEK_CUR))
        if offset >= self.fsize_limit:
            raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))
        return min(count, self.fsize_limit - offset)

    # -- one recorded call -----------------------------------------------------------------

    def do(self, call: str, args: list, real, *real_args, ret=None, after=None, **real_kwargs):
        """Make the real call and log it as ``call(args)``; a failure is logged with its errno
        name and raised as the OS raised it.

        ``ret(result)`` gives the logged return value (default: the result itself, or 0 when it
        is None); ``after(result)`` updates the descriptors and returns extra fields for the
        op (``ret_path``, ``ret_deleted``) before the operation is logged.
        """
        with self.log.lock:
            self.check()
            try:
                result = real(*real_args, **real_kwargs)
            except OSError as err:
                self.failed(call, args, err)
                raise
            extra = after(result) if after is not None else None
            value = ret(result) if ret is not None else (0 if result is None else result)
            self.log.add(call, value, args, **(extra or {}))
            return result

    def failed(self, call: str, args: list, err: OSError) -> None:
        """Log ``call`` as failing with ``err`` (strace's ``= -1 ENAME``)."""
        name = errno.errorcode.get(err.errno or 0, "EIO")
        self.log.add(call, -1, args, error=name)

    def cross_device(self, call: str, args: list, src, dst) -> OSError:
        """Log ``call`` as failing with EXDEV (``/work`` to ``/tmp``): the error to raise."""
        err = OSError(errno.EXDEV, os.strerror(errno.EXDEV), src, None, dst)
        with self.log.lock:
            self.check()
            self.failed(call, args, err)
        return err

    def at_cwd(self) -> dict:
        """``AT_FDCWD`` as strace shows it: the working directory."""
        return {"fd": None, "path": self.scratch.cwd(), "token": "AT_FDCWD"}

    def dir_arg(self, dir_fd) -> dict:
        """A ``dir_fd`` argument: the descriptor, or ``AT_FDCWD`` when None."""
        return self.at_cwd() if dir_fd is None else self.fds.arg(dir_fd)
