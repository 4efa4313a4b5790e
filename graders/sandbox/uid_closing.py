"""What the uid tier closes to other users while it grades, put back when grading ends.

Where submissions run as other users of the machine (the uid tier), ``checkpoint-lab grade``
closes the course, the submissions, its ``$HOME`` and the checkout's solutions to other users
(:func:`graders.sandbox.uid_walls.to_close`). A :class:`Closing` writes each mode it changes
into a journal (in the uid locks' folder, root's alone) before it changes it, and
:meth:`Closing.open_again` puts every one back when the batch ends, after an exception too.
Graders running at once share the journal: a folder stays closed while any live grader needs it
(each holds a ``flock`` on a file of its own for its life), and the last one to leave opens it.
A grader killed from outside holds nothing, so the next start (:func:`reopen_left`) opens what
it left closed. A mode someone changed meanwhile is theirs, and stays.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from contextlib import contextmanager

import graders.sandbox.uids as uids
from graders.sandbox.uid_walls import to_close

__all__ = ["JOURNAL", "Closing", "reopen_left"]

#: The journal: real path -> {"mode": before, "closed": as closed, "holders": [grader ids]}.
JOURNAL = "closed-folders.json"
_GUARD = "closed-folders.lock"
_HOLDER = "closer-"
_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC


def _read(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as source:
            journal = json.load(source)
    except (OSError, ValueError):
        return {}
    return journal if isinstance(journal, dict) else {}


def _write(path: str, journal: dict) -> None:
    part = path + ".part"
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _FLAGS, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(journal, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(part, path)


@contextmanager
def _guarded(folder: str):
    """The journal, read and written under an exclusive lock (one grader at a time)."""
    fd = os.open(os.path.join(folder, _GUARD), os.O_RDWR | os.O_CREAT | _FLAGS, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        path = os.path.join(folder, JOURNAL)
        journal = _read(path)
        yield journal, lambda: _write(path, journal)
        _write(path, journal)
    finally:
        os.close(fd)


def _alive(folder: str, holder: str) -> bool:
    """Whether the grader ``holder`` still lives (holds its file's lock); a dead one's file goes."""
    path = os.path.join(folder, _HOLDER + holder)
    try:
        fd = os.open(path, os.O_RDWR | _FLAGS)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    try:
        os.unlink(path)
    except OSError:
        pass
    return False


def _open_again(journal: dict, folder: str, leaving: str | None = None) -> list[str]:
    """Put back each mode of ``journal`` that no live grader (but ``leaving``) holds."""
    opened = []
    for path, entry in list(journal.items()):
        holders = [h for h in entry.get("holders", []) if h != leaving and _alive(folder, h)]
        if holders:
            entry["holders"] = holders
            continue
        try:
            if os.stat(path).st_mode & 0o7777 == entry["closed"]:
                os.chmod(path, entry["mode"])
                opened.append(path)
        except (OSError, KeyError, TypeError):
            pass
        del journal[path]
    return opened


class Closing:
    """One grading process's hold on what it closed to other users."""

    def __init__(self, folder: str | None = None) -> None:
        self.folder = folder or uids.lock_folder()
        self.id = secrets.token_hex(8)
        self._path = os.path.join(self.folder, _HOLDER + self.id)
        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _FLAGS, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def close(self, paths) -> list[str]:
        """Close each of ``paths`` to other users, as :func:`to_close` allows, each mode in the
        journal first; return the paths closed here (one another live grader closed is held,
        not named)."""
        closed = []
        with _guarded(self.folder) as (journal, save):
            for path in paths:
                real = os.path.realpath(path)
                if real in journal:
                    held = journal[real].setdefault("holders", [])
                    held += [] if self.id in held else [self.id]
                    continue
                for _, mode in to_close([real]):
                    journal[real] = {"mode": mode, "closed": mode & 0o7770, "holders": [self.id]}
                    closed.append((real, mode & 0o7770, str(path)))
            save()  # the journal on disk before any mode changes
            for real, mode, _ in closed:
                try:
                    os.chmod(real, mode)
                except OSError:
                    del journal[real]
                    continue
        return [shown for real, _, shown in closed if real in journal]

    def open_again(self) -> list[str]:
        """Put back what this grader closed, unless another live grader still holds it; let go.
        Returns the paths opened."""
        if self._fd < 0:
            return []
        with _guarded(self.folder) as (journal, _):
            opened = _open_again(journal, self.folder, leaving=self.id)
        os.close(self._fd)
        self._fd = -1
        try:
            os.unlink(self._path)
        except OSError:
            pass
        return opened


def reopen_left(folder: str | None = None) -> list[str]:
    """Put back what graders killed before they ended left closed (no live grader holds it);
    return the paths opened."""
    try:
        folder = folder or uids.lock_folder()
    except OSError:
        return []
    if not os.path.exists(os.path.join(folder, JOURNAL)):
        return []
    with _guarded(folder) as (journal, _):
        return _open_again(journal, folder)
