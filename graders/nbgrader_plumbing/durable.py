"""Writes that survive a crash: a file replaced whole, a folder swapped in at once, and the
named points of a grading batch where a test may kill it.

:func:`write_durably` writes a temporary file, fsyncs it, renames it over the old one and fsyncs
the folder, so that after a crash (or a power cut) the file is the old one or the new one;
:func:`fsync_tree` makes a folder durable before it is swapped in.
:func:`swap_in` puts a prepared folder at its destination with ``renameat2(RENAME_EXCHANGE)``
where Linux has it (the old folder lands where the new one was), else with two renames.
:func:`point` marks a moment of the batch: ``CHECKPOINT_LAB_GRADE_TRACE`` (a file) lists the
points passed (a line each: the name, the time), ``CHECKPOINT_LAB_GRADE_KILL_AT`` (a point's
name) kills the batch there (SIGKILL), for the crash tests.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import signal
import time
from pathlib import Path

__all__ = ["KILL_ENV", "TRACE_ENV", "MAIN_PID_ENV", "write_durably", "read_json", "fsync_dir",
           "fsync_tree", "swap_in", "inode_of", "point", "die_with_parent"]

KILL_ENV = "CHECKPOINT_LAB_GRADE_KILL_AT"
TRACE_ENV = "CHECKPOINT_LAB_GRADE_TRACE"
#: The batch's main process (a grading worker's point kills it, not only the worker).
MAIN_PID_ENV = "CHECKPOINT_LAB_GRADE_MAIN_PID"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def fsync_dir(folder: Path) -> None:
    """Make the entries of ``folder`` (a rename, a new file) durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(folder: Path) -> None:
    """Make every file and folder under ``folder`` durable (before it is renamed into place:
    after a power cut a renamed folder must not hold empty files)."""
    for path, _dirs, files in os.walk(folder):
        for name in files:
            fd = os.open(os.path.join(path, name), os.O_RDONLY | os.O_NOFOLLOW)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(path))


def write_durably(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` whole: after a crash it holds the old bytes or the new."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def read_json(path: Path) -> dict | None:
    """The JSON object in ``path``; None when there is none (or it is not one)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _renameat2():
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    return getattr(libc, "renameat2", None)


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step; False where the system cannot."""
    try:
        call = _renameat2()
    except OSError:
        return False
    if call is None:
        return False
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: this file system cannot
        return False
    raise OSError(errno, os.strerror(errno), str(a))


def _inode(path: Path) -> list[int] | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    return [info.st_dev, info.st_ino]


def swap_in(staged: Path, dest: Path, inode: list[int], old: Path) -> None:
    """Put the folder ``staged`` (whose ``inode`` was noted before) at ``dest``; the folder
    that was at ``dest`` ends at ``staged`` (exchange) or at ``old`` (two renames). Run again
    after a crash, it finishes the swap or sees it done."""
    if _inode(dest) == list(inode):
        return  # done before a crash
    dest.parent.mkdir(parents=True, exist_ok=True)
    if _inode(dest) is None:
        os.rename(staged, dest)
    elif not _exchange(staged, dest):
        old.parent.mkdir(parents=True, exist_ok=True)
        os.rename(dest, old)  # the journal covers the moment with no folder at dest
        os.rename(staged, dest)
        fsync_dir(old.parent)
    fsync_dir(dest.parent)
    fsync_dir(staged.parent)


def inode_of(path: Path) -> list[int] | None:
    """``[device, inode]`` of ``path`` (never following a link); None when nothing is there."""
    return _inode(path)


def point(name: str) -> None:
    """A named moment of the batch: traced, or the batch killed there (crash tests)."""
    trace = os.environ.get(TRACE_ENV)
    if trace:
        with open(trace, "a", encoding="utf-8") as handle:
            handle.write(f"{name} {time.time():.3f}\n")
    if os.environ.get(KILL_ENV) == name:
        pid = int(os.environ.get(MAIN_PID_ENV) or os.getpid())
        os.kill(pid, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)


def die_with_parent() -> None:
    """Have Linux kill this (worker) process when its parent dies: a killed batch leaves no
    worker writing behind it."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
