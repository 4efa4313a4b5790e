"""Sandbox uids, reserved: two runs never share one, even across grading processes.

Grading as root runs each submission as an unprivileged uid of its own, drawn at random from
:data:`UID_RANGE`. A uid is reserved by an exclusive ``flock`` on a lock file named after it, in
a folder only the grader can open (0700, owned by the grader, never a link). The kernel drops a
lock when its holder's last descriptor closes, so a grader that crashes holds nothing; the next
run that draws the uid ends whatever that run left first (:func:`graders.sandbox.stop.end_uid`).
"""

from __future__ import annotations

import fcntl
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass

__all__ = ["UID_RANGE", "Reservation", "hold", "reserve", "lock_folder"]

#: The uids sandboxes run as (3,000 of them, clear of system and login uids).
UID_RANGE = range(61000, 64000)
_TRIES = 500


class NoUidFree(RuntimeError):
    """Every uid drawn was held by another run."""


@dataclass
class Reservation:
    """One run's uid, held until :meth:`release` (or the holder's death)."""

    uid: int
    fd: int

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing drops the flock
            self.fd = -1


def _safe_folder(path: str) -> bool:
    """Whether ``path`` is a real folder of this user that no one else may open."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
            and not info.st_mode & 0o077)


def lock_folder() -> str:
    """The folder of uid lock files: ``/run/checkpoint-lab-uids`` where the grader may make it,
    else one in the temp folder named after the grader's uid. Raises OSError if neither is safe
    (another user made it first, or it is a link)."""
    candidates = [os.path.join(tempfile.gettempdir(), f"checkpoint-lab-uids-{os.geteuid()}")]
    if os.geteuid() == 0:
        candidates.insert(0, "/run/checkpoint-lab-uids")
    for path in candidates:
        if _safe_folder(path):
            return path
    raise OSError(f"no safe folder for the sandbox's uid locks ({' or '.join(candidates)} "
                  "exists and is not a 0700 folder of this user)")


def hold(uid: int, folder: str) -> Reservation | None:
    """``uid`` reserved, or None when another run holds it."""
    fd = os.open(os.path.join(folder, str(uid)),
                 os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return Reservation(uid, fd)


def reserve(folder: str | None = None) -> Reservation:
    """A uid no other run holds, reserved until released."""
    folder = folder or lock_folder()
    for _ in range(_TRIES):
        held = hold(UID_RANGE.start + secrets.randbelow(len(UID_RANGE)), folder)
        if held is not None:
            return held
    raise NoUidFree(f"{_TRIES} uids drawn from {UID_RANGE.start}-{UID_RANGE.stop - 1} were all "
                    "held by other runs")
