"""What the uid tier closes and clears where no namespace does it: the grader's and the course's
folders closed to other users (:func:`close_to_others`), the SysV IPC objects and POSIX message
queues a run's uid made (:func:`remove_ipc`), and, without Landlock, nothing a run printed or
raised passed on once it opened a file outside its own folders and the system
(:func:`withhold_outside_reads`).
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import tempfile
from pathlib import Path

from graders.sandbox.uid_tier import _SYSTEM, SHARED_TEMP

__all__ = ["ipc_objects", "remove_ipc", "to_close", "close_to_others", "outside_reads",
           "withhold_outside_reads"]

_IPC_TABLES = {"shm": 0, "msg": 1, "sem": 2}  # /proc/sysvipc/NAME: shmctl, msgctl, semctl


def ipc_objects():
    """(table, row) of every SysV IPC object on the machine, ``table`` one of shm, msg, sem and
    ``row`` its line of ``/proc/sysvipc/TABLE`` by column name."""
    for table in _IPC_TABLES:
        try:
            lines = Path(f"/proc/sysvipc/{table}").read_text().splitlines()
        except OSError:
            continue
        head = lines[0].split() if lines else []
        for line in lines[1:]:
            yield table, dict(zip(head, line.split(), strict=False))


def remove_ipc(uid: int) -> list[str]:
    """Remove every SysV IPC object and POSIX message queue ``uid`` made or owns (the seccomp
    filter refuses making them; this is the second wall); return what was removed."""
    libc = ctypes.CDLL(None, use_errno=True)
    control = (libc.shmctl, libc.msgctl, libc.semctl)
    removed = []
    for table, row in ipc_objects():
        which = _IPC_TABLES[table]
        if str(uid) not in (row.get("uid"), row.get("cuid")):
            continue
        ident = int(row.get("shmid") or row.get("msqid") or row.get("semid") or -1)
        if which == 2:
            done = control[which](ident, 0, 0, None)  # IPC_RMID (0)
        else:
            done = control[which](ident, 0, None)
        removed.append(f"{table} {ident}" + ("" if done == 0 else " (not removed)"))
    try:
        queues = list(os.scandir("/dev/mqueue"))
    except OSError:
        queues = []
    for entry in queues:
        try:
            if entry.stat(follow_symlinks=False).st_uid == uid:
                os.unlink(entry.path)
                removed.append(entry.path)
        except OSError:
            continue
    return removed


def to_close(paths) -> list[tuple[str, int]]:
    """(path, its mode now) of each of ``paths`` that other users may reach and that no run
    needs: the system, the grader's Python and the temp folders are left as they are (a
    ``$HOME`` of ``/`` is never closed)."""
    needed = [os.path.realpath(p) for p in (sys.base_prefix, tempfile.gettempdir(), *_SYSTEM,
                                             *SHARED_TEMP)]
    found = []
    for path in paths:
        real = os.path.realpath(path)
        if any(n == real or n.startswith(real.rstrip("/") + "/") for n in needed):
            continue
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if mode & 0o007:
            found.append((str(path), mode & 0o7777))
    return found


def close_to_others(paths) -> list[str]:
    """Take every permission of other users off each of ``paths`` (a folder closed so closes
    all it holds, whatever their own modes); return those changed. The run's uid is such an
    other user: no group of its own is shared with anything of the grader's. What a run needs
    is left open (:func:`to_close`); :class:`graders.sandbox.uid_closing.Closing` puts the
    modes back after grading."""
    changed = []
    for path, mode in to_close(paths):
        try:
            os.chmod(path, mode & 0o7770)
            changed.append(path)
        except OSError:
            continue
    return changed


_OPENED = re.compile(r"^\d+\s+(?:openat|open|openat2|creat)\((.*)\)\s+=\s+\d+"
                     r"<((?:\\x[0-9a-f]{2})+)>", re.MULTILINE)
#: A name made by a call that succeeded: its last string is the name made.
_MADE = re.compile(r"^\d+\s+(?:link|linkat|rename|renameat|renameat2|symlink|symlinkat|mknod|"
                   r"mknodat)\(.*\"((?:\\x[0-9a-f]{2})+)\"[^\"]*\)\s+=\s+0", re.MULTILINE)
_PID = re.compile(r"^(\d+)\s", re.MULTILINE)
#: What a run may read besides its own folders: the system (``/proc`` but other processes'
#: folders), what describes the machine, and what is no file of anyone's.
_READABLE = (*[p for p in _SYSTEM if p != "/proc"], "/sys", "/memfd:", "pipe:", "anon_inode:",
             "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
             "/dev/pts")
#: The files of /etc every program's libraries read (the loader, the user and host databases,
#: locales, time zones, certificates): the system's. The rest of /etc may hold a course's files
#: (``/etc/jupyter/nbgrader_config.py`` names the course; a course installed there).
_ETC = tuple(f"/etc/{name}" for name in (
    "ld.so.cache", "ld.so.preload", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone",
    "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf",
    "services", "protocols", "mime.types", "os-release", "locale.alias", "locale.conf",
    "default/locale", "ssl", "ca-certificates", "ca-certificates.conf", "pki"))
#: Where every user's processes make files (POSIX shared memory, semaphores, message queues):
#: a run's own files there are those it made; any other is another run's or user's.
_SHARED_DEVICES = ("/dev/shm", "/dev/mqueue")


def _grader_python() -> list[str]:
    """The grader's Python: its base installation and, when it runs from a virtual environment
    (a course's ``.venv``, made with ``--copies``), that environment's interpreter and
    ``pyvenv.cfg`` (not its packages: the course's own code may be installed there)."""
    return sorted({os.path.realpath(p) for p in (
        sys.base_prefix, sys.executable, os.path.join(sys.prefix, "bin", "python3"),
        os.path.join(sys.prefix, "pyvenv.cfg"))})


def _decoded(hexed: str) -> str:
    return bytes.fromhex(hexed.replace("\\x", "")).decode("utf-8", "replace")


def _under(path: str, folders) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _own(path: str, args: str, made: set[str], pids: set[str]) -> bool | None:
    """Whether ``path`` (under /proc, /dev/shm or /dev/mqueue) is the run's own: its processes'
    /proc folders, what it made; None for any other path."""
    parts = path.split("/")
    if path.startswith("/proc/") and parts[2].isdigit():
        return parts[2] in pids
    if _under(path, _SHARED_DEVICES):
        return path in made or ("O_CREAT" in args and "O_EXCL" in args)
    return None


def outside_reads(trace: str, folders) -> list[str]:
    """The files a run opened (strace's ``-xx -yy`` lines; folders opened for their listing
    aside) outside ``folders``, the system and the grader's Python: what it could have read of
    the machine (without Landlock). Other processes' ``/proc`` folders (their command lines
    name the course), files in ``/dev/shm`` and ``/dev/mqueue`` the run did not make, and /etc
    but the system's own files count as outside."""
    allowed = [os.path.realpath(str(f)) for f in folders]
    allowed += [*_READABLE, "/proc", *_ETC, *_grader_python()]
    made = {_decoded(h) for h in _MADE.findall(trace)}
    pids = set(_PID.findall(trace))
    found = []
    for args, hexed in _OPENED.findall(trace):
        path = _decoded(hexed)
        if "O_DIRECTORY" in args or "O_PATH" in args or os.path.isdir(path):
            continue  # a folder's names, or a path held, not a file's bytes
        own = _own(path, args, made, pids)
        if own is False or (own is None and not _under(path, allowed)):
            found.append(path)
    return sorted(set(found))


def withhold_outside_reads(rec, folders) -> None:
    """Without Landlock: where the run opened a file outside its folders and the system, what it
    printed and the message of its error (which could carry that file's bytes) are not passed
    on; its feedback says so instead."""
    found = outside_reads(rec.trace, folders)
    if not found:
        return
    found.sort(key=lambda path: path.startswith("/proc/"))  # files first, then command lines
    named = ", ".join(found[:3])
    note = (f"(not shown: your code opened {named}"
            + (f" and {len(found) - 3} more file(s)" if len(found) > 3 else "")
            + " outside its own folders, so what it printed or raised is not passed on)")
    rec.stdout_tail, rec.stderr_tail = note, ""
    for record in (rec.error, rec.load):
        if isinstance(record, dict) and "message" in record:
            record["message"] = note
    if isinstance(rec.described, dict):
        rec.described = {"defined": True, "items": [{"str": note}]}
