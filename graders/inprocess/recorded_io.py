"""The recorder's ``open``: Python's own buffered and text layers over a raw file that logs what
it hands the OS.

``open()``, ``io.open``, ``os.fdopen``, ``Path.open``/``write_text`` and what ``tempfile``,
``json`` and ``shutil`` do through them all end in :class:`RecordedFileIO`, a ``FileIO`` whose
``write``, ``seek`` and ``truncate`` are logged when they reach the OS. Bytes still in Python's
buffer are not written yet, and are lost by a kill as they are for real. The layers above it are
the C ones ``io.open`` builds, with the same buffer sizes, so a save reaches the OS in the same
writes as in the sandbox.
"""

from __future__ import annotations

import io
import os
import warnings

__all__ = ["RecordedFileIO", "recorded_open"]

_WHENCE = {os.SEEK_SET: "SEEK_SET", os.SEEK_CUR: "SEEK_CUR", os.SEEK_END: "SEEK_END"}


class RecordedFileIO(io.FileIO):
    """A ``FileIO`` whose writes, seeks and truncations are logged for ``run``."""

    def __init__(self, file, mode="r", closefd=True, opener=None, *, run=None, calls=None):
        self._run = run
        if opener is None and calls is not None and not isinstance(file, int):
            opener = _opener(calls)
        super().__init__(file, mode, closefd, opener=opener)
        if "a" in mode and self._recorded():
            # FileIO seeks to the end itself (not through os.lseek): log it as strace sees it
            at = super().tell()
            run.log.add("lseek", at, [run.fds.arg(self.fileno()), 0, "SEEK_END"])

    def _recorded(self) -> bool:
        run = self._run
        return run is not None and not self.closed and run.records(self.fileno())

    def write(self, b):
        if not self._recorded():
            return super().write(b)
        run = self._run
        data = bytes(b)
        fd = self.fileno()
        write = super().write
        return run.do("write", [run.fds.arg(fd), data, len(data)],
                      lambda: write(memoryview(data)[:run.room(fd, len(data))]),
                      ret=lambda n: 0 if n is None else n)

    def seek(self, pos, whence=os.SEEK_SET):
        if not self._recorded() or (pos == 0 and whence == os.SEEK_CUR):
            return super().seek(pos, whence)
        run = self._run
        return run.do("lseek", [run.fds.arg(self.fileno()), pos, _WHENCE.get(whence, whence)],
                      super().seek, pos, whence)

    def truncate(self, size=None):
        if not self._recorded():
            return super().truncate(size)
        run = self._run
        if size is None:
            size = super().tell()
        return run.do("ftruncate", [run.fds.arg(self.fileno()), size], super().truncate, size,
                      ret=lambda _size: 0)

    def close(self):
        run = self._run
        if self.closefd and self._recorded():
            with run.log.lock:
                fd = self.fileno()
                run.log.add("close", 0, [run.fds.arg(fd)])
                run.fds.closed(fd)
        return super().close()


def _opener(calls):
    def opener(path, flags):
        return calls.open(path, flags, 0o666)

    return opener


def _check_mode(mode, buffering, encoding, errors, newline) -> tuple[set, str]:
    """``io.open``'s checks of its arguments; the set of mode letters and FileIO's mode."""
    if not isinstance(mode, str):
        raise TypeError(f"invalid mode: {mode!r}")
    if not isinstance(buffering, int):
        raise TypeError(f"invalid buffering: {buffering!r}")
    if encoding is not None and not isinstance(encoding, str):
        raise TypeError(f"invalid encoding: {encoding!r}")
    if errors is not None and not isinstance(errors, str):
        raise TypeError(f"invalid errors: {errors!r}")
    modes = set(mode)
    if modes - set("axrwb+t") or len(mode) > len(modes):
        raise ValueError(f"invalid mode: {mode!r}")
    kinds = sum(letter in modes for letter in "xrwa")
    if "t" in modes and "b" in modes:
        raise ValueError("can't have text and binary mode at once")
    if kinds > 1:
        raise ValueError("can't have read/write/append mode at once")
    if not kinds:
        raise ValueError("must have exactly one of create/read/write/append mode")
    if "b" in modes:
        for name, value in (("an encoding", encoding), ("an errors", errors),
                            ("a newline", newline)):
            if value is not None:
                raise ValueError(f"binary mode doesn't take {name} argument")
        if buffering == 1:
            warnings.warn("line buffering (buffering=1) isn't supported in binary mode, the "
                          "default buffer size will be used", RuntimeWarning, 3)
    raw_mode = "".join(letter for letter in "xrwa+" if letter in modes)
    return modes, raw_mode


def recorded_open(run, calls, file, mode="r", buffering=-1, encoding=None, errors=None,
                  newline=None, closefd=True, opener=None):
    """``io.open`` over a :class:`RecordedFileIO` (the same layers, checks and buffer sizes)."""
    if not isinstance(file, int):
        file = os.fspath(file)
    if not isinstance(file, (str, bytes, int)):
        raise TypeError(f"invalid file: {file!r}")
    modes, raw_mode = _check_mode(mode, buffering, encoding, errors, newline)
    raw = RecordedFileIO(file, raw_mode, closefd, opener, run=run, calls=calls)
    result = raw
    try:
        line_buffering = False
        if buffering == 1 or buffering < 0 and raw.isatty():
            buffering = -1
            line_buffering = True
        if buffering < 0:
            buffering = raw._blksize
        if buffering == 0:
            if "b" in modes:
                return result
            raise ValueError("can't have unbuffered text I/O")
        if "+" in modes:
            result = io.BufferedRandom(raw, buffering)
        elif modes & set("xwa"):
            result = io.BufferedWriter(raw, buffering)
        else:
            result = io.BufferedReader(raw, buffering)
        if "b" in modes:
            return result
        result = io.TextIOWrapper(result, encoding, errors, newline, line_buffering)
        result.mode = mode
        return result
    except BaseException:
        result.close()
        raise
