"""Run folders that a killed grader leaves are found and removed; a live run's never are.

Every folder a run of a submission gets on the machine's temp folders (the sandbox's run folder
and, in the uid tier, its temp folder's parent; the in-process observers' scratch) is made by
:func:`make`: the maker holds an exclusive ``flock`` on the folder for as long as the run lives,
and writes who it is (pid, the process's start time, when) into an owner file in it. The kernel
drops the lock when the last descriptor of it closes, so a grading process killed from outside
(SIGKILL, the OOM killer, a test's timeout) holds nothing; :func:`sweep`, at the start of
``checkpoint-lab grade`` and ``checkpoint-lab check``, removes each marked folder whose lock it
can take. A lock held by a live run in any PID namespace (another grader beside this one, a
container's grader sharing ``/dev/shm``) is held for every process that asks, so its folder stays.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; folders are made, never swept
    fcntl = None

__all__ = ["OWNER_FILE", "PREFIX", "RunFolder", "make", "sweep", "sweep_roots"]

#: Every run folder's name starts so; :func:`sweep` looks at nothing else.
PREFIX = "checkpoint-lab-"
#: The owner file in a run folder: ``{"pid", "started", "made"}`` of the process that made it.
OWNER_FILE = ".checkpoint-lab-owner"


def _started(pid: int) -> int | None:
    """The process's start time (clock ticks after boot, /proc/PID/stat field 22), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(text.rpartition(")")[2].split()[19])
    except (IndexError, ValueError):
        return None


@dataclass
class RunFolder:
    """One run's folder, held (locked) until :meth:`remove` or :meth:`release`."""

    path: Path
    fd: int = -1

    def keep(self) -> None:
        """Leave the folder on disk, unmarked, for someone to read (``keep=True``): no sweep
        removes it."""
        try:
            os.unlink(self.path / OWNER_FILE)
        except OSError:
            pass
        self.release()

    def release(self) -> None:
        """Stop holding the folder."""
        if self.fd >= 0:
            os.close(self.fd)  # closing drops the flock
            self.fd = -1

    def remove(self) -> None:
        """Remove the folder, then let go of it (in that order: a sweep never finds it free
        while its run is still removing it)."""
        shutil.rmtree(self.path, ignore_errors=True)
        self.release()


def make(kind: str, root: str | os.PathLike | None = None) -> RunFolder:
    """A new folder ``checkpoint-lab-KIND-XXXXXXXX`` in ``root`` (mode 0700), held by this
    process and marked as its own."""
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-", dir=root))
    folder = RunFolder(path)
    if fcntl is None:
        return folder
    try:
        folder.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        fcntl.flock(folder.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (OSError, AttributeError):  # no lock here (a browser's Python): never marked, kept
        folder.release()
        return folder
    owner = {"pid": os.getpid(), "started": _started(os.getpid()), "made": round(time.time())}
    fd = os.open(path / OWNER_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(owner, out)
    return folder


def sweep_roots() -> list[str]:
    """Where run folders are made: ``/dev/shm``, the temp folder, ``/tmp`` and ``/var/tmp``."""
    found = []
    for root in ("/dev/shm", tempfile.gettempdir(), "/tmp", "/var/tmp"):
        real = os.path.realpath(root)
        if os.path.isdir(real) and real not in found:
            found.append(real)
    return found


def _left_behind(path: str) -> dict | None:
    """The owner of ``path`` when it is a marked run folder of this user whose lock was taken
    here (the caller holds it: a descriptor in the dict's ``fd``), else None."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with open(os.path.join(path, OWNER_FILE), encoding="utf-8") as source:
            owner = json.load(source)
        if not isinstance(owner, dict):
            raise ValueError("not an owner")
    except (OSError, ValueError):  # held by a live run, or not a run folder of ours
        os.close(fd)
        return None
    return {**owner, "fd": fd}


def sweep(roots: list[str] | None = None) -> list[str]:
    """Remove the run folders whose maker is gone (this user's, in ``roots``, by default
    :func:`sweep_roots`); return one line for each, naming the process that left it."""
    if fcntl is None or not hasattr(os, "geteuid"):
        return []
    removed = []
    for root in roots if roots is not None else sweep_roots():
        try:
            names = sorted(n for n in os.listdir(root) if n.startswith(PREFIX))
        except OSError:
            continue
        for name in names:
            path = os.path.join(root, name)
            owner = _left_behind(path)
            if owner is None:
                continue
            try:
                shutil.rmtree(path, ignore_errors=True)
            finally:
                os.close(owner["fd"])
            if not os.path.lexists(path):
                made = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(owner.get("made", 0)))
                removed.append(f"{path} (left by process {owner.get('pid')}, made {made})")
    return removed
