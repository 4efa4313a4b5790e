"""Putting the recorder in place for one run, and taking it away again.

For the run's duration, ``os``'s file calls, ``open`` (``builtins.open`` and ``io.open``),
``fcntl.fcntl``'s descriptor copies, ``tempfile``'s temp folder (the run's ``/tmp``), ``shutil``'s
copy (the way it copies on Linux, ``sendfile``, on every platform), ``threading.Thread.start``
(a thread the run starts is the run's), ``mmap.mmap`` (a shared writable map of a run's file is
logged as strace shows it: its writes leave no trace, and the judge says so) and
``sys.stdout``/``sys.stderr`` (the run's output is
kept, not shown) are the recorder's. Each of them serves only the run's threads: any other
thread of the process gets what it always gets. Everything is put back when the run ends.
"""

from __future__ import annotations

import builtins
import io
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from graders.inprocess.oplog import EMULATED_DIRECTORY
from graders.inprocess.recorded_io import recorded_open
from graders.inprocess.recorded_names import name_calls
from graders.inprocess.recorded_os import descriptor_calls
from graders.inprocess.run_state import RunState

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
try:
    import mmap
except ImportError:  # a browser's Python
    mmap = None

__all__ = ["recording", "Output"]

_MISSING = object()
_io_open = io.open
_OUTPUT_TAIL = 4000


class Output:
    """The last characters a run printed to one stream."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text = (self.text + str(text))[-_OUTPUT_TAIL:]
        return len(text)

    def flush(self) -> None:
        pass


class _Routed:
    """``sys.stdout`` (or ``stderr``) that keeps the run's output and passes on the rest."""

    def __init__(self, original, kept: Output, run: RunState) -> None:
        self._original, self._kept, self._run = original, kept, run

    def write(self, text):
        return (self._kept if self._run.owns() else self._original).write(text)

    def flush(self):
        if not self._run.owns() and self._original is not None:
            self._original.flush()

    def __getattr__(self, name):
        return getattr(self._original, name)


class _Patches:
    def __init__(self) -> None:
        self.saved: list[tuple[object, str, object]] = []

    def put(self, owner, name: str, value) -> None:
        self.saved.append((owner, name, getattr(owner, name, _MISSING)))
        setattr(owner, name, value)

    def restore(self) -> None:
        for owner, name, value in reversed(self.saved):
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)
        self.saved.clear()


def _open_for(run: RunState, calls):
    def open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None,  # noqa: A001
             closefd=True, opener=None):
        if not run.owns():
            return _io_open(file, mode, buffering, encoding, errors, newline, closefd, opener)
        return recorded_open(run, calls, file, mode, buffering, encoding, errors, newline,
                             closefd, opener)

    open.__doc__ = _io_open.__doc__
    return open


def _fcntl_for(run: RunState, calls, real):
    copies = {getattr(fcntl, name): name for name in ("F_DUPFD", "F_DUPFD_CLOEXEC")
              if hasattr(fcntl, name)}

    def fcntl_(fd, cmd, arg=0):
        number = fd if isinstance(fd, int) else fd.fileno()
        if cmd in copies and run.records(number):
            return calls.fcntl_dup(real, number, cmd, arg, copies[cmd])
        return real(fd, cmd, arg)

    return fcntl_


def _start_for(run: RunState, real_start):
    def start(thread):
        if run.owns():
            body = thread.run
            parent = threading.get_ident()

            def run_as_the_runs():
                me = threading.get_ident()
                run.threads.add(me)
                run.log.started(parent, me)
                try:
                    body()
                except BaseException as exc:  # noqa: BLE001 - reported while still the run's
                    threading.excepthook(threading.ExceptHookArgs(
                        (type(exc), exc, exc.__traceback__, thread)))
                finally:
                    run.threads.discard(me)

            thread.run = run_as_the_runs
        return real_start(thread)

    return start


def _mmap_for(run: RunState, real):
    def mapped(fileno, length, *args, **kwargs):
        flags = kwargs.get("flags", args[0] if args else getattr(mmap, "MAP_SHARED", 1))
        access = kwargs.get("access", args[2] if len(args) > 2 else 0)
        shared = bool(flags & getattr(mmap, "MAP_SHARED", 1)) and access != mmap.ACCESS_COPY
        writable = access in (0, mmap.ACCESS_WRITE)
        if run.records(fileno) and shared and writable:
            with run.log.lock:
                run.log.add("mmap", 0, ["NULL", length, "PROT_READ|PROT_WRITE", "MAP_SHARED",
                                        run.fds.arg(fileno), 0])
        return real(fileno, length, *args, **kwargs)
    return mapped


def _tempdir_for(run: RunState, real):
    def _gettempdir():
        return run.scratch.tmp if run.owns() else real()

    return _gettempdir


@contextmanager
def recording(run: RunState, stdout: Output, stderr: Output) -> Iterator[None]:
    """Put the recorder in place for ``run`` (whose output goes to ``stdout``, ``stderr``)."""
    calls, functions = descriptor_calls(run)
    functions.update(name_calls(run))
    patches = _Patches()
    try:
        for name, function in functions.items():
            patches.put(os, name, function)
        if not hasattr(os, "O_DIRECTORY"):
            patches.put(os, "O_DIRECTORY", EMULATED_DIRECTORY)
        opened = _open_for(run, calls)
        patches.put(builtins, "open", opened)
        patches.put(io, "open", opened)
        patches.put(shutil, "_USE_CP_SENDFILE", True)
        patches.put(shutil, "_HAS_FCOPYFILE", False)
        patches.put(tempfile, "_gettempdir", _tempdir_for(run, tempfile._gettempdir))
        closer = getattr(tempfile, "_TemporaryFileCloser", None)
        if closer is not None and getattr(closer.close, "__defaults__", None):
            patches.put(closer.close, "__defaults__", (os.unlink,))
        if getattr(fcntl, "fcntl", None) is not None:  # a browser's kernel has an empty fcntl
            patches.put(fcntl, "fcntl", _fcntl_for(run, calls, fcntl.fcntl))
        patches.put(threading.Thread, "start", _start_for(run, threading.Thread.start))
        if mmap is not None:
            patches.put(mmap, "mmap", _mmap_for(run, mmap.mmap))
        patches.put(sys, "stdout", _Routed(sys.stdout, stdout, run))
        patches.put(sys, "stderr", _Routed(sys.stderr, stderr, run))
        yield
    finally:
        run.active = False
        patches.restore()
