"""Readings of a run's folder from outside: ``checkpoint.json`` as it is now (`read_safely`,
the sandbox's) and its neighbours (`listing`, both observers').

Read without following a link, without blocking on a FIFO, capped in size: the submission chose
what those names are, and the grading process must not be fooled or stalled by them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from graders.judge.recording import Reading

__all__ = ["read_safely", "listing", "READ_CAP"]

#: Bytes of ``checkpoint.json`` read at most; a bigger file is reported as ``too_big``.
READ_CAP = 8 << 20
_LISTING_CAP = 50


def read_safely(directory: str | Path, name: str = "checkpoint.json") -> Reading:
    """What ``directory/name`` holds, read without following a link or blocking on a FIFO."""
    path = os.path.join(str(directory), name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return Reading("absent")
    except OSError as err:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return Reading("unreadable", detail=err.strerror or str(err))
        return Reading(_file_kind(mode), detail=err.strerror or str(err))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Reading(_file_kind(info.st_mode))
        if info.st_size > READ_CAP:
            return Reading("too_big", size=info.st_size)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            if sum(map(len, chunks)) > READ_CAP:
                return Reading("too_big", size=info.st_size)
        return Reading("file", data=b"".join(chunks))
    finally:
        os.close(fd)


def _file_kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    return "special"


def listing(where: str | Path, scandir=os.scandir) -> dict[str, int | str]:
    """The other entries of ``where`` (at most 50): a file's size, or ``"dir/"``; ``scandir``
    is ``os.scandir`` as the caller bound it (the in-process recorder binds its own before a
    submission's code runs)."""
    files: dict[str, int | str] = {}
    try:
        with scandir(where) as entries:
            for i, entry in enumerate(entries):
                if i >= _LISTING_CAP:
                    break
                if entry.name == "checkpoint.json":
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                files[entry.name] = "dir/" if stat.S_ISDIR(st.st_mode) else st.st_size
    except OSError:
        pass
    return files
